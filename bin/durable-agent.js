#!/usr/bin/env node
// Runs the CLI from its TypeScript source through tsx, so no build step is needed.
if (process.argv[2] === 'kb') {
  // `kb` commands have a lean entry that loads no Temporal code, bundled once so a search answers quickly.
  require('./kb-entry')();
} else {
  require('tsx/cjs');
  require('../cli/main.ts');
}
