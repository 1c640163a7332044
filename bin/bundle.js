// The CLI's bundles (the kb commands, the rest of the CLI, the client packages it loads): each is
// built with esbuild from this checkout's own files the first time a command needs it, kept under
// .data/cli/ with a manifest of the files it was built from, and used while every one of them has
// the same size and modification time; an edit makes the next command rebuild it. A bundle is
// compiled with a V8 code cache kept beside it, so a command does not compile the same code anew
// on every start.
'use strict';
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const vm = require('node:vm');

const ROOT = path.resolve(__dirname, '..');

/** [mtimeMs, size] of a file, or null when it is gone. */
function stamp(file) {
  try {
    const s = fs.statSync(file);
    return [s.mtimeMs, s.size];
  } catch {
    return null;
  }
}

/** The manifest of bundle `out` when it exists and every file it was built from is as it was; else null. */
function freshManifest(out) {
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(`${out}.json`, 'utf8'));
  } catch {
    return null;
  }
  if (manifest.node !== process.version || !fs.existsSync(out)) return null;
  const inputs = Object.entries(manifest.inputs ?? {});
  for (const [file, was] of inputs) {
    const now = stamp(path.join(ROOT, file));
    if (!now || now[0] !== was[0] || now[1] !== was[1]) return null;
  }
  return inputs.length > 0 ? manifest : null;
}

/** Writes `data` to `file` by renaming a temporary file, so a concurrent reader sees one or the other. */
function writeAtomically(file, data) {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, data);
  fs.renameSync(tmp, file);
}

/**
 * Builds bundle `out` with esbuild's `options` and writes its manifest; returns the manifest, or
 * null when it cannot (no esbuild, a failed build, a read-only folder), and the caller falls back
 * to the sources. `manifest.extra(metafile)` adds fields; `manifest.stamped(files)` names the files
 * whose stamps stand for the inputs (default: the inputs themselves).
 */
function build(out, options, manifestOptions = {}) {
  const { extra = () => ({}), stamped = (files) => files } = manifestOptions;
  try {
    const esbuild = require('esbuild');
    // Stamps are taken after the build: a file edited during it makes the next command rebuild.
    const result = esbuild.buildSync({
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      bundle: true,
      ...options,
      write: false,
      metafile: true,
      logLevel: 'silent',
      absWorkingDir: ROOT,
    });
    const inputs = {};
    // A generated entry (esbuild's stdin) is no file of the checkout.
    const files = Object.keys(result.metafile.inputs).filter(
      (file) => file !== '<stdin>' && file !== options.stdin?.sourcefile,
    );
    for (const file of stamped(files)) {
      inputs[file] = stamp(path.join(ROOT, file));
      if (inputs[file] === null) return null;
    }
    const manifest = { node: process.version, inputs, ...extra(result.metafile) };
    fs.mkdirSync(path.dirname(out), { recursive: true });
    writeAtomically(out, result.outputFiles[0].contents);
    writeAtomically(`${out}.json`, JSON.stringify(manifest));
    return manifest;
  } catch {
    return null;
  }
}

/** The code cache of `file` when it was made from this very bundle (same size and modification time). */
function readCodeCache(cacheFile, key) {
  try {
    const data = fs.readFileSync(cacheFile);
    const end = data.indexOf(10);
    return end > 0 && data.subarray(0, end).toString() === key ? data.subarray(end + 1) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs bundle `file` as a CommonJS module (registered in require.cache, as `require` would) and
 * returns its exports. The code cache is written when the process exits, so it also holds the
 * functions the command compiled; a cache V8 rejects (another Node, other flags) is written anew.
 * `requireOverride(id)` may answer a `require` of the bundle's before Node does (undefined: Node).
 */
function load(file, requireOverride = () => undefined) {
  const fd = fs.openSync(file, 'r');
  let source;
  let key;
  try {
    const s = fs.fstatSync(fd);
    key = `${s.size}:${s.mtimeMs}`;
    source = fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
  const cacheFile = `${file}.v8`;
  const cachedData = readCodeCache(cacheFile, key);
  // A shebang (cli/main.ts has one) is no JavaScript once wrapped; Node's loader skips it too.
  if (source.startsWith('#!')) source = `//${source.slice(2)}`;
  const script = new vm.Script(Module.wrap(source), {
    filename: file,
    cachedData,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (!cachedData || script.cachedDataRejected) {
    process.once('exit', () => {
      try {
        writeAtomically(cacheFile, Buffer.concat([Buffer.from(`${key}\n`), script.createCachedData()]));
      } catch {
        // A cache is an optimisation: a read-only folder only makes the next start compile again.
      }
    });
  }
  const mod = new Module(file, module);
  mod.filename = file;
  mod.paths = Module._nodeModulePaths(path.dirname(file));
  Module._cache[file] = mod;
  const bundleRequire = (id) => requireOverride(id) ?? mod.require(id);
  bundleRequire.resolve = (request, options) => Module._resolveFilename(request, mod, false, options);
  bundleRequire.cache = Module._cache;
  bundleRequire.main = require.main;
  try {
    script.runInThisContext()(mod.exports, bundleRequire, mod, file, path.dirname(file));
  } catch (err) {
    delete Module._cache[file];
    throw err;
  }
  mod.loaded = true;
  return mod.exports;
}

/** Runs a TypeScript entry of this checkout through tsx, as the CLI did before it had bundles. */
function runFromSource(entry) {
  require('tsx/cjs');
  require(path.join(ROOT, entry));
}

module.exports = { ROOT, build, freshManifest, load, runFromSource };
