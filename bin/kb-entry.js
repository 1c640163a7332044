// `durable-agent kb …` without tsx: the kb commands are bundled once with esbuild into
// .data/cli/kb-main.js (npm packages stay external) and the bundle is used while every source file
// it was built from has the same size and modification time. Loading the bundle takes about half
// the time of compiling the TypeScript through tsx, and `kb search` is a command people run often.
// Anything unexpected (no esbuild, a read-only folder, a failed build) falls back to tsx.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const ENTRY = path.join(ROOT, 'cli', 'kb-main.ts');
// DURABLE_AGENT_KB_BUNDLE: `off` runs through tsx; a .js path inside the checkout (its npm
// packages resolve from there) keeps the bundle there instead, as the bundle's own test does.
const SETTING = process.env.DURABLE_AGENT_KB_BUNDLE;
const OUT = SETTING?.endsWith('.js') ? path.resolve(SETTING) : path.join(ROOT, '.data', 'cli', 'kb-main.js');
const MANIFEST = `${OUT}.json`;

/** [mtimeMs, size] of a file, or null when it is gone. */
function stamp(file) {
  try {
    const s = fs.statSync(file);
    return [s.mtimeMs, s.size];
  } catch {
    return null;
  }
}

/** True when the bundle exists and every source it was built from is as it was. */
function fresh() {
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(MANIFEST, 'utf8'));
  } catch {
    return false;
  }
  if (manifest.node !== process.version || !fs.existsSync(OUT)) return false;
  for (const [file, was] of Object.entries(manifest.inputs ?? {})) {
    const now = stamp(path.join(ROOT, file));
    if (!now || now[0] !== was[0] || now[1] !== was[1]) return false;
  }
  return Object.keys(manifest.inputs ?? {}).length > 0;
}

/** Builds the bundle and its manifest; false when it cannot. */
function build() {
  try {
    const esbuild = require('esbuild');
    // Stamps are taken before the build: a file edited during it makes the next call rebuild.
    const result = esbuild.buildSync({
      entryPoints: [ENTRY],
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      packages: 'external',
      write: false,
      metafile: true,
      logLevel: 'silent',
      absWorkingDir: ROOT,
    });
    const inputs = {};
    for (const file of Object.keys(result.metafile.inputs)) inputs[file] = stamp(path.join(ROOT, file));
    if (Object.values(inputs).some((s) => s === null)) return false;
    fs.mkdirSync(path.dirname(OUT), { recursive: true });
    const write = (file, data) => {
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, data);
      fs.renameSync(tmp, file);
    };
    write(OUT, result.outputFiles[0].contents);
    write(MANIFEST, JSON.stringify({ node: process.version, inputs }));
    return true;
  } catch {
    return false;
  }
}

module.exports = function runKb() {
  if (SETTING !== 'off' && (fresh() || build())) {
    require(OUT);
    return;
  }
  require('tsx/cjs');
  require(ENTRY);
};
