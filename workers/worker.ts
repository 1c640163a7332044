import type { NativeConnection, WorkerOptions } from '@temporalio/worker';
import { Worker } from '@temporalio/worker';
import type { ActivityDeps } from '../activities';
import type { ContentStore } from '../activities/content/store';
import type { RunLiveness } from '../activities/content/gc';
import { temporalLiveness, temporalServiceId } from '../activities/content/liveness';
import type { Tool } from '../activities/own-tools/define';
import type { WorkerConfig } from './config';
import type { AgentMetrics } from './observability/metrics';
import type { Tracing } from './observability/tracing';
import { DurableAgentPlugin } from './plugin';
import { workerDeploymentOptions } from './versioning';

export {
  VERSIONED_WORKFLOWS_PATH,
  WORKFLOWS_PATH,
  WORKFLOW_BUNDLER_OPTIONS,
  WORKFLOW_BUNDLE_FLAVOUR,
  WORKFLOW_JS_TARGET,
} from './workflows-bundle';

/** What a worker needs. Tests pass a prebuilt bundle and swapped providers. */
export interface AgentWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  config: WorkerConfig;
  /** Tools of the worker's own (`defineTool`). */
  tools?: readonly Tool[];
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

/** Creates the agent worker: the plugin's workflows and activities on the worker's connection and task queue. */
export async function createAgentWorker(opts: AgentWorkerOptions): Promise<Worker> {
  const plugin = new DurableAgentPlugin({
    config: opts.config,
    tools: opts.tools,
    temporalService: await temporalServiceId(opts.connection.workflowService),
    namespace: opts.namespace,
    contentLiveness: opts.contentLiveness ?? temporalLiveness(opts.connection.workflowService),
    ...(opts.store ? { store: opts.store } : {}),
    ...(opts.deliver ? { deliver: opts.deliver } : {}),
    ...(opts.providers ? { providers: opts.providers } : {}),
    ...(opts.activityOverrides ? { activityOverrides: opts.activityOverrides } : {}),
    ...(opts.tracing ? { tracing: opts.tracing } : {}),
    ...(opts.metrics ? { metrics: opts.metrics } : {}),
  });
  return Worker.create({
    plugins: [plugin],
    connection: opts.connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue ?? opts.config.taskQueue,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : {}),
    maxConcurrentActivityTaskExecutions: opts.config.maxConcurrentActivities,
    ...(opts.config.stickyQueueTimeoutMs !== undefined
      ? { stickyQueueScheduleToStartTimeout: opts.config.stickyQueueTimeoutMs }
      : {}),
    ...(opts.config.versioning
      ? { workerDeploymentOptions: workerDeploymentOptions(opts.config.versioning) }
      : {}),
    ...(opts.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: opts.maxCachedWorkflows } : {}),
    ...opts.tuning,
  });
}
