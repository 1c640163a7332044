#!/usr/bin/env node
// Runs the CLI from its TypeScript source through tsx, so no build step is needed.
require('tsx/cjs');
// `kb` commands have a lean entry that loads no Temporal code, so a search answers quickly.
require(process.argv[2] === 'kb' ? '../cli/kb-main.ts' : '../cli/main.ts');
