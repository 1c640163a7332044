// `durable-agent kb …` without tsx: the kb commands are bundled with esbuild into
// .data/cli/kb-main.js (npm packages stay external), rebuilt when a source file changes
// (bin/bundle.js). Loading the bundle takes about half the time of compiling the TypeScript through
// tsx, and `kb search` is a command people run often. A bundle that cannot be built falls back to tsx.
'use strict';
const path = require('node:path');
const { ROOT, build, freshManifest, load, runFromSource } = require('./bundle');

const ENTRY = 'cli/kb-main.ts';
// DURABLE_AGENT_KB_BUNDLE: `off` runs through tsx; a .js path inside the checkout (its npm
// packages resolve from there) keeps the bundle there instead, as the bundle's own test does.
const SETTING = process.env.DURABLE_AGENT_KB_BUNDLE;
const OUT = SETTING?.endsWith('.js') ? path.resolve(SETTING) : path.join(ROOT, '.data', 'cli', 'kb-main.js');

module.exports = function runKb() {
  if (
    SETTING !== 'off' &&
    (freshManifest(OUT) || build(OUT, { entryPoints: [ENTRY], packages: 'external' }))
  ) {
    load(OUT);
    return;
  }
  runFromSource(ENTRY);
};
