import type { NativeConnection, WorkerOptions } from '@temporalio/worker';
import { Runtime, Worker } from '@temporalio/worker';
import type { ActivityDeps } from '../activities';
import { createActivities } from '../activities';
import { contentStoreFor } from '../activities/content/config';
import type { ContentStore } from '../activities/content/store';
import { createContentGcActivities } from '../activities/content/gc-activity';
import type { RunLiveness } from '../activities/content/gc';
import { temporalLiveness, temporalServiceId } from '../activities/content/liveness';
import type { WorkerConfig } from './config';
import { ActivityOutcomeLogger } from './observability/interceptors';
import { MeteredContentStore } from './observability/metered-store';
import type { AgentMetrics } from './observability/metrics';
import { AgentMetricsInterceptor } from './observability/metrics-interceptor';
import { PrivateValuesInterceptor } from './observability/private-values';
import { ErrorSanitizer } from './observability/sanitize-errors';
import { AesGcmCodec } from './payload-codec';
import { secretsOfConfig } from '../shared/redact-secrets';
import { hasEveryAgentAttribute } from '../shared/search-attributes';
import type { Tracing } from './observability/tracing';
import { workerDeploymentOptions } from './versioning';

/** What a worker needs. Tests pass a prebuilt bundle and swapped providers. */
export interface AgentWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  config: WorkerConfig;
  /**
   * Prebuilt workflow bundle (tests bundle once per suite); otherwise workflows/ is bundled at start.
   * With Worker Versioning on (`config.versioning`) it must be a bundle of {@link VERSIONED_WORKFLOWS_PATH}.
   */
  workflowBundle?: WorkerOptions['workflowBundle'];
  providers?: ActivityDeps['providers'];
  /** How the notification activities deliver (client/deliver.ts `notificationDelivery`). */
  deliver?: ActivityDeps['deliver'];
  /** Content store; the configured one (shared per process) when absent. */
  store?: ContentStore;
  /** Extra or replacement activities (tests: instrumented tools). */
  activityOverrides?: Record<string, (...args: never[]) => Promise<unknown>>;
  taskQueue?: string;
  /** Workflows kept in memory between tasks (0: none, so no sticky queue: tests that stop a worker). */
  maxCachedWorkflows?: number;
  /** Slots, pollers and sandbox settings over the SDK's defaults (bench/density.ts measures them). */
  tuning?: WorkerTuning;
  /**
   * Tracing to install (see createTracing). A prebuilt bundle must then include its
   * workflowModules (bundleWorkflowCode's workflowInterceptorModules) for workflow spans.
   */
  tracing?: Tracing;
  /** The agent's metrics to record (see AgentMetrics); none are recorded worker-side without. */
  metrics?: AgentMetrics;
  /**
   * What content garbage collection asks Temporal (retention, whether runs are open); the worker's
   * connection answers by default. Benches swap in one that reads retention shorter.
   */
  contentLiveness?: RunLiveness;
}

/** Worker options that trade memory and CPU for throughput. */
export type WorkerTuning = Partial<
  Pick<
    WorkerOptions,
    | 'maxCachedWorkflows'
    | 'maxConcurrentWorkflowTaskExecutions'
    | 'maxConcurrentActivityTaskExecutions'
    | 'maxConcurrentLocalActivityExecutions'
    | 'workflowTaskPollerBehavior'
    | 'activityTaskPollerBehavior'
    | 'reuseV8Context'
  >
>;

/** Path of the failure converter the workflow sandbox loads when payloads are encrypted. */
const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

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

/**
 * Whether the namespace has the agent search attributes, asked of the server once per worker, when
 * the first run starts: a namespace where the question is refused (some Cloud API keys) counts as
 * lacking them, as the client's start function counts it.
 */
function agentAttributesOf(connection: NativeConnection, namespace: string): () => Promise<boolean> {
  let known: Promise<boolean> | undefined;
  return () =>
    (known ??= connection.operatorService
      .listSearchAttributes({ namespace })
      .then((r) => hasEveryAgentAttribute(r.customAttributes))
      .catch(() => false));
}

/** Creates the agent worker: agent workflows plus the model activity and one activity per tool. */
export async function createAgentWorker(opts: AgentWorkerOptions): Promise<Worker> {
  const { metrics } = opts;
  const store = opts.store ?? contentStoreFor(opts.config.contentStore);
  const activities = {
    ...createActivities({
      config: opts.config,
      temporalService: await temporalServiceId(opts.connection.workflowService),
      store: metrics ? new MeteredContentStore(store, metrics) : store,
      providers: opts.providers,
      deliver: opts.deliver,
      // The runtime's logger: what MCP connections report reaches the worker's log like activities' lines.
      logger: Runtime.instance().logger,
      agentSearchAttributes: agentAttributesOf(opts.connection, opts.namespace),
    }),
    ...createContentGcActivities({
      store,
      liveness: opts.contentLiveness ?? temporalLiveness(opts.connection.workflowService),
      namespace: opts.namespace,
      ...(metrics
        ? { onCollected: (r) => metrics.contentCollected(r.dryRun ? 0 : r.removedBytes, r.storeBytes) }
        : {}),
    }),
    ...opts.activityOverrides,
  };
  const secrets = secretsOfConfig(opts.config);
  return Worker.create({
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue ?? opts.config.taskQueue,
    ...(opts.workflowBundle
      ? { workflowBundle: opts.workflowBundle }
      : {
          workflowsPath: opts.config.versioning ? VERSIONED_WORKFLOWS_PATH : WORKFLOWS_PATH,
          bundlerOptions: WORKFLOW_BUNDLER_OPTIONS,
        }),
    activities,
    ...(opts.config.codecKeys
      ? {
          dataConverter: {
            payloadCodecs: [new AesGcmCodec(opts.config.codecKeys)],
            failureConverterPath: FAILURE_CONVERTER_PATH,
          },
        }
      : {}),
    maxConcurrentActivityTaskExecutions: opts.config.maxConcurrentActivities,
    ...(opts.config.stickyQueueTimeoutMs !== undefined
      ? { stickyQueueScheduleToStartTimeout: opts.config.stickyQueueTimeoutMs }
      : {}),
    ...(opts.config.versioning
      ? { workerDeploymentOptions: workerDeploymentOptions(opts.config.versioning) }
      : {}),
    ...(opts.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: opts.maxCachedWorkflows } : {}),
    ...opts.tuning,
    interceptors: {
      // The call's arguments are known to everything inside it (to redact them from messages);
      // Temporal's tracing interceptor comes next, so the agent's spans nest under RunActivity.
      activity: [
        // Outermost: what leaves an activity (into the SDK's log and into history) is sanitized last.
        () => ({ inbound: new ErrorSanitizer(secrets) }),
        () => ({ inbound: new PrivateValuesInterceptor() }),
        ...(opts.tracing ? opts.tracing.activityInterceptors.slice(0, 1) : []),
        () => ({ inbound: new ActivityOutcomeLogger() }),
        ...(metrics
          ? [() => ({ inbound: new AgentMetricsInterceptor(metrics, opts.config.runDefaults.prices) })]
          : []),
        ...(opts.tracing ? opts.tracing.activityInterceptors.slice(1) : []),
      ],
      ...(opts.tracing && !opts.workflowBundle ? { workflowModules: opts.tracing.workflowModules } : {}),
    },
    ...(opts.tracing ? { sinks: opts.tracing.sinks } : {}),
  });
}
