/**
 * Where the agent's workflow code is and how it is bundled: every bundle of it (a worker's, the
 * tests', replay's, the benches') is built with these options.
 */
import type { WorkerOptions } from '@temporalio/worker';

/** Path of the workflows entry, resolvable from source (tsx, jest) and from dist/. */
export const WORKFLOWS_PATH = require.resolve('../workflows');

/**
 * Path of the entry a versioned worker bundles: the same workflows, each declaring its versioning
 * behaviour (see workflows/versioned.ts for why an unversioned worker must not load it).
 */
export const VERSIONED_WORKFLOWS_PATH = require.resolve('../workflows/versioned');

type BundlerOptions = NonNullable<WorkerOptions['bundlerOptions']>;
type WebpackConfig = Parameters<NonNullable<BundlerOptions['webpackConfigHook']>>[0];

/**
 * The JavaScript the workflow code is compiled to. The SDK's bundler compiles TypeScript for
 * es2017, where every object spread becomes a call of a helper that copies property by property;
 * the notification state and the agent's state are updated by spreads, and those helpers were the
 * largest cost of an inbox's updates. Node runs es2022 natively; the code means the same either way.
 */
export const WORKFLOW_JS_TARGET = 'es2022';

/** Sets the target of the bundler's TypeScript loader (swc-loader) to {@link WORKFLOW_JS_TARGET}. */
function compileForWorkflowTarget(config: WebpackConfig): WebpackConfig {
  for (const rule of config.module?.rules ?? []) {
    const use = rule && typeof rule === 'object' ? rule.use : undefined;
    if (!use || typeof use !== 'object' || Array.isArray(use)) continue;
    const options = use.options;
    if (!String(use.loader).includes('swc-loader') || !options || typeof options !== 'object') continue;
    const jsc = (options as { jsc?: { target?: string } }).jsc;
    if (jsc) jsc.target = WORKFLOW_JS_TARGET;
  }
  return config;
}

/**
 * How every bundle of workflows/ is built (the worker's own, the tests', replay's, the benches'):
 * zod and the schema cache (shared/schema-once.ts) are evaluated once per worker and shared by the
 * workflows it runs, so a cached workflow does not carry its own copy of every schema; and the code
 * is compiled for {@link WORKFLOW_JS_TARGET}.
 */
export const WORKFLOW_BUNDLER_OPTIONS = {
  preloadModules: [require.resolve('../shared/schema-once')],
  webpackConfigHook: compileForWorkflowTarget,
} satisfies BundlerOptions;

/** Names what {@link WORKFLOW_BUNDLER_OPTIONS} build, for caches of built bundles. */
export const WORKFLOW_BUNDLE_FLAVOUR = `${WORKFLOW_JS_TARGET}-schemas-shared`;
