// `durable-agent …` without tsx (all but the commands bin/durable-agent.js runs from source): two
// bundles under .data/cli/, built and kept fresh by bin/bundle.js.
//  - main.js: cli/main.ts and the code of ours it imports, with commander. Commands load what they
//    need when they run, so `--help` or a mistyped flag loads no Temporal code.
//  - vendor.js: the client-side packages (VENDORED below: Temporal's client and its gRPC, zod, OpenTelemetry, pg)
//    with everything they import, each started on its first `require`. Loading ~700 files through
//    Node's resolver and compiler took most of a command's start-up; one file with a code cache
//    takes a fraction of it. Any other npm package (the worker's, the MCP SDK, …) stays external.
// A package must load from one place only, or a process would hold two copies of it: no external
// package that a bundled command loads requires a vendored one (tests/e2e/cli-startup.test.ts checks
// that `status` and `notify` load none of them from node_modules). When a bundle cannot be built
// the CLI runs from source through tsx (main.js) or takes the packages from node_modules (vendor.js).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const pkg = require('../package.json');
const { ROOT, build, freshManifest, load, runFromSource } = require('./bundle');

const ENTRY = 'cli/main.ts';
// DURABLE_AGENT_CLI_BUNDLE: `off` runs the CLI through tsx; a .js path inside the checkout (its
// npm packages resolve from there) keeps the bundles in that folder instead, as their test does.
const SETTING = process.env.DURABLE_AGENT_CLI_BUNDLE;
const MAIN = SETTING?.endsWith('.js') ? path.resolve(SETTING) : path.join(ROOT, '.data', 'cli', 'main.js');
const VENDOR = path.join(path.dirname(MAIN), 'vendor.js');

/** Packages bundled into vendor.js (with their own dependencies): those the client-side commands run. */
const VENDORED = [
  '@grpc/grpc-js',
  '@temporalio/activity',
  '@temporalio/client',
  '@temporalio/common',
  '@temporalio/envconfig',
  '@temporalio/interceptors-opentelemetry',
  '@temporalio/proto',
  '@temporalio/workflow',
  '@opentelemetry/api',
  '@opentelemetry/context-async-hooks',
  '@opentelemetry/core',
  '@opentelemetry/exporter-trace-otlp-http',
  '@opentelemetry/resources',
  '@opentelemetry/sdk-trace-base',
  'pg',
  'zod',
];
/** npm's record of what node_modules holds, rewritten by every install. */
const NPM_RECORD = 'node_modules/.package-lock.json';
/** Optional dependencies of vendored packages that are not installed; required only when asked for. */
const NOT_INSTALLED = ['pg-native'];

/** The npm package an import names: `@scope/name` or `name`, without a subpath. */
function packageOf(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Every package the project declares but commander: imports of them stay `require`s in main.js. */
const EXTERNAL = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).filter(
  (n) => n !== 'commander',
);

/** The vendored imports of main.js (its manifest's `vendor`), read from esbuild's metafile. */
function vendoredImports(metafile) {
  const found = new Set();
  for (const input of Object.values(metafile.inputs)) {
    for (const imp of input.imports) {
      if (imp.external && imp.kind !== 'require-resolve' && VENDORED.includes(packageOf(imp.path)))
        found.add(imp.path);
    }
  }
  return { vendor: [...found].sort() };
}

/**
 * What vendor.js's freshness is checked by: the package.json of every package in it and npm's own
 * record of node_modules, which every install rewrites (fewer stamps than its ~700 files).
 */
function packageFiles(files) {
  const stamped = new Set(fs.existsSync(path.join(ROOT, NPM_RECORD)) ? [NPM_RECORD] : []);
  for (const file of files) {
    const root = file.match(/^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//)?.[1];
    stamped.add(root ? `${root}/package.json` : file);
  }
  return [...stamped];
}

/** vendor.js's source: one getter per import, so a package starts only when first required. */
function vendorEntry(specifiers) {
  const getters = specifiers.map(
    (s) => `  get ${JSON.stringify(s)}() { return require(${JSON.stringify(s)}); },`,
  );
  return `module.exports = {\n${getters.join('\n')}\n};\n`;
}

/** The vendored imports of main.js, answered from vendor.js (built or rebuilt when needed). */
function vendorRequire(specifiers) {
  const wanted = new Set(specifiers);
  let vendor;
  return (id) => {
    if (!wanted.has(id)) return undefined;
    if (vendor === undefined) {
      const covers = (m) => m && specifiers.every((s) => m.specifiers.includes(s));
      const manifest = freshManifest(VENDOR);
      const ready =
        covers(manifest) ||
        build(
          VENDOR,
          {
            stdin: { contents: vendorEntry(specifiers), resolveDir: ROOT, sourcefile: 'vendor.js' },
            external: NOT_INSTALLED,
            minifyWhitespace: true,
            minifySyntax: true,
          },
          { extra: () => ({ specifiers }), stamped: packageFiles },
        );
      vendor = ready ? load(VENDOR) : null;
    }
    return vendor ? vendor[id] : undefined;
  };
}

module.exports = function runCli() {
  if (SETTING !== 'off') {
    // `import()` becomes `require`, so an imported package goes through vendor.js like any other.
    const options = { entryPoints: [ENTRY], external: EXTERNAL, supported: { 'dynamic-import': false } };
    const manifest = freshManifest(MAIN) || build(MAIN, options, { extra: vendoredImports });
    if (manifest) {
      load(MAIN, vendorRequire(manifest.vendor ?? []));
      return;
    }
  }
  runFromSource(ENTRY);
};
