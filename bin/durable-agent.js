#!/usr/bin/env node
// Runs the CLI from its TypeScript source through tsx, so no build step is needed.
require('tsx/cjs');
require('../cli/main.ts');
