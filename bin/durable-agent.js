#!/usr/bin/env node
// Runs the CLI from bundles of its TypeScript (bin/bundle.js builds them from this checkout on
// first use, and again after an edit), so a command starts without compiling it:
//  - `kb …` from the kb commands' own bundle (bin/kb-entry.js);
//  - the commands in FROM_SOURCE from the sources through tsx, as before: they start a long-running
//    process (a worker, a server), run workflow code, whose files Temporal's bundler and worker
//    threads find beside the sources, or run models (`eval` loads the local model's native runtime
//    as an ES module, which the bundle cannot import), and their start-up is small beside what they do;
//  - every other command (and `--help`) from the CLI's bundle (bin/cli-entry.js);
//  - in an installed package (no sources), every command from the compiled CLI in dist/.
'use strict';

const FROM_SOURCE = new Set(['worker', 'demo', 'api', 'mcp', 'codec-server', 'replay', 'eval']);
/** Global options that take a value (cli/main.ts): what follows them is no command. */
const GLOBAL_WITH_VALUE = new Set(['--address', '--namespace']);

/** The command a command line names: its first word that is neither an option nor an option's value. */
function commandOf(args) {
  for (let i = 0; i < args.length; i++) {
    if (GLOBAL_WITH_VALUE.has(args[i])) i++;
    else if (!args[i].startsWith('-')) return args[i];
  }
  return undefined;
}

const command = commandOf(process.argv.slice(2));
// An installed package holds the compiled CLI (dist/) and no sources to bundle.
const fs = require('node:fs');
const path = require('node:path');
const fromPackage = !fs.existsSync(path.join(__dirname, '..', 'cli', 'main.ts'));
// Only a leading `kb`: the kb bundle knows no global options, which the full CLI takes before it.
if (fromPackage) {
  require('../dist/cli/main.js');
} else if (process.argv[2] === 'kb') {
  require('./kb-entry')();
} else if (FROM_SOURCE.has(command)) {
  require('./bundle').runFromSource('cli/main.ts');
} else {
  require('./cli-entry')();
}
