import type { NativeConnection, WorkerOptions } from '@temporalio/worker';
import { Worker } from '@temporalio/worker';
import type { ActivityDeps } from '../activities';
import { createActivities } from '../activities';
import { contentStoreFor } from '../activities/content/config';
import type { ContentStore } from '../activities/content/store';
import type { WorkerConfig } from './config';
import { ActivityOutcomeLogger } from './interceptors';
import { PrivateValuesInterceptor } from './private-values';
import { ErrorSanitiser } from './sanitise-errors';
import { AesGcmCodec } from './payload-codec';
import { secretsOfConfig } from '../shared/redact-secrets';
import type { Tracing } from './tracing';

/** What a worker needs. Tests pass a prebuilt bundle and swapped providers. */
export interface AgentWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  config: WorkerConfig;
  /** Prebuilt workflow bundle (tests bundle once per suite); otherwise workflows/ is bundled at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  providers?: ActivityDeps['providers'];
  /** Client the notification activities signal with. */
  client?: ActivityDeps['client'];
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
 * Modules the workflow sandbox evaluates once and shares between the workflows it runs: zod and
 * the schema cache (shared/schema-once.ts), so a cached workflow does not carry its own copy of
 * every schema. Every bundle of workflows/ is built with them (bundleWorkflowCode's
 * `preloadModules`).
 */
export const WORKFLOW_PRELOAD_MODULES = [require.resolve('../shared/schema-once')];

/** Creates the agent worker: agent workflows plus the model activity and one activity per tool. */
export async function createAgentWorker(opts: AgentWorkerOptions): Promise<Worker> {
  const activities = {
    ...createActivities({
      config: opts.config,
      store: opts.store ?? contentStoreFor(opts.config.contentStore),
      providers: opts.providers,
      client: opts.client,
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
      : { workflowsPath: WORKFLOWS_PATH, bundlerOptions: { preloadModules: WORKFLOW_PRELOAD_MODULES } }),
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
    ...(opts.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: opts.maxCachedWorkflows } : {}),
    ...opts.tuning,
    interceptors: {
      // The call's arguments are known to everything inside it (to redact them from messages);
      // Temporal's tracing interceptor comes next, so the agent's spans nest under RunActivity.
      activity: [
        // Outermost: what leaves an activity (into the SDK's log and into history) is sanitised last.
        () => ({ inbound: new ErrorSanitiser(secrets) }),
        () => ({ inbound: new PrivateValuesInterceptor() }),
        ...(opts.tracing ? opts.tracing.activityInterceptors.slice(0, 1) : []),
        () => ({ inbound: new ActivityOutcomeLogger() }),
        ...(opts.tracing ? opts.tracing.activityInterceptors.slice(1) : []),
      ],
      ...(opts.tracing && !opts.workflowBundle ? { workflowModules: opts.tracing.workflowModules } : {}),
    },
    ...(opts.tracing ? { sinks: opts.tracing.sinks } : {}),
  });
}
