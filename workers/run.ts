import { closeContentStores } from '../activities/content/config';
import { closeKnowledgeBases } from '../activities/search/kb/open';
import { closeEmailConnections } from '../activities/email';
import { closeMcpConnections } from '../activities/mcp';
import { closeSqlConnections } from '../activities/sql';
import { closeStreamChannels } from '../activities/streaming';
import { checkConnectionRoles } from '../activities/sql/startup-check';
import type { Client } from '@temporalio/client';
import { Runtime } from '@temporalio/worker';
import type { NotificationDelivery } from '../shared/notifications/delivery';
import type { WorkerConfig } from './config';
import { ConfigError } from './config';
import type { TemporalTarget } from './connect';
import { connectClient, connectWorker } from './connect';
import { watchRunsWaitingForApproval } from './observability/approvals-gauge';
import { AgentMetrics } from './observability/metrics';
import { installRuntime, servesMetrics } from './observability/runtime';
import { startTracing } from './observability/start-tracing';
import { createAgentWorker } from './worker';
import { ensureContentGcSchedule } from './content-gc-schedule';
import { loadToolsModule } from './tools-module';

export { installLogging } from './observability/runtime';

/**
 * The agent's metrics when this process serves them; a configuration that asks for metrics the
 * runtime was installed without (by the caller, before this worker) gets a warning instead.
 */
function metricsOf(config: WorkerConfig, namespace: string): AgentMetrics | undefined {
  if (config.metrics.exporter === 'off') return undefined;
  if (!servesMetrics()) {
    console.error(
      'warning: DURABLE_AGENT_METRICS is set but metrics are not served: the Temporal runtime of this process was installed without them',
    );
    return undefined;
  }
  return new AgentMetrics(
    Runtime.instance().metricMeter.withTags({ namespace, taskQueue: config.taskQueue }),
  );
}

/** A started worker: `done` settles when it has shut down; `stop` asks it to, and waits. */
export interface RunningWorker {
  done: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Connects and runs the agent worker until stopped. With `installSignalHandlers` (the default, for
 * the `worker` command) SIGINT/SIGTERM drain in-flight tasks and exit cleanly.
 */
export function runWorker(opts: {
  config: WorkerConfig;
  target: TemporalTarget;
  /** How notifications are delivered over the worker's own client (client/deliver.ts). */
  deliveryFor: (client: Client, taskQueue: string) => NotificationDelivery;
  installSignalHandlers?: boolean;
}): RunningWorker {
  if (opts.installSignalHandlers !== false) {
    installRuntime({
      logLevel: opts.config.logLevel,
      logFormat: opts.config.logFormat,
      metrics: opts.config.metrics,
    });
  }
  let stopRequested = false;
  let shutdown: (() => void) | undefined;
  const done = (async () => {
    // Loaded first: a module that fails or exports no tools stops the worker before it connects.
    const tools = opts.config.toolsModule ? loadToolsModule(opts.config.toolsModule) : [];
    const roles = await checkConnectionRoles(opts.config.databases);
    if (roles.refused.length > 0) throw new ConfigError(roles.refused.join('\n'));
    if (roles.unchecked.length > 0) {
      console.error(
        `warning: could not reach database connection(s) ${roles.unchecked.join(', ')} to check their role; ` +
          'each is checked again on first use',
      );
    }
    const connection = await connectWorker(opts.target);
    const tracing = startTracing(opts.config);
    // The worker's own client (notification updates) carries the trace on, too.
    const client = await connectClient(opts.target, tracing?.clientInterceptors);
    const metrics = metricsOf(opts.config, opts.target.namespace);
    const stopGauge = metrics
      ? watchRunsWaitingForApproval({
          client,
          taskQueue: opts.config.taskQueue,
          metrics,
          logger: Runtime.instance().logger,
        })
      : undefined;
    try {
      const worker = await createAgentWorker({
        connection,
        namespace: opts.target.namespace,
        config: opts.config,
        ...(tools.length ? { tools } : {}),
        deliver: opts.deliveryFor(client, opts.config.taskQueue),
        tracing,
        metrics,
        // A prebuilt bundle lacks tracing's workflow modules and the encoding failure converter, and
        // is of the unversioned entry, so with tracing, payload encryption or Worker Versioning on,
        // workflows/ is bundled here.
        ...(opts.config.workflowBundle && !tracing && !opts.config.codecKeys && !opts.config.versioning
          ? { workflowBundle: { codePath: opts.config.workflowBundle } }
          : {}),
      });
      const gc = opts.config.contentGc;
      if (gc.everyMs !== null && !stopRequested) {
        // Not fatal: a role that may not create schedules still runs agents (and collects when fired).
        await ensureContentGcSchedule(client, {
          taskQueue: opts.config.taskQueue,
          everyMs: gc.everyMs,
          ...(gc.graceMs !== undefined ? { graceMs: gc.graceMs } : {}),
        }).catch((err: unknown) =>
          console.error(
            `warning: could not set up the content store's garbage collection schedule: ${(err as Error).message}`,
          ),
        );
      }
      if (opts.installSignalHandlers !== false && !stopRequested) {
        console.error(
          `Worker polling task queue "${opts.config.taskQueue}" on ${opts.target.connectionOptions.address} ` +
            `(namespace ${opts.target.namespace}); Ctrl-C to stop`,
        );
        const v = opts.config.versioning;
        if (v) {
          // A versioned worker gets no tasks until its build is current: say how, or it looks idle.
          console.error(
            `Worker Versioning on: build "${v.buildId}" of deployment "${v.deploymentName}"; it takes new runs once ` +
              `that build is current (temporal worker deployment set-current-version --deployment-name ${v.deploymentName} ` +
              `--build-id ${v.buildId})`,
          );
        }
        const t = opts.config.tracing;
        if (t.exporter !== 'off') {
          console.error(
            `Tracing on: spans of service "${t.serviceName}" go to ` +
              (t.exporter === 'console'
                ? 'stderr, one JSON line each'
                : (t.endpoint ?? 'http://localhost:4318/v1/traces')),
          );
        }
        if (metrics) console.error(`Metrics on: http://${opts.config.metrics.address}/metrics (Prometheus)`);
      }
      // A created worker holds its connection until it has run: one stopped before it polled (the
      // demo's, when another worker finished the job first) still runs, and shuts down at once.
      const running = worker.run();
      shutdown = () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
      };
      if (stopRequested) shutdown();
      await running;
    } finally {
      stopGauge?.();
      closeEmailConnections();
      await closeMcpConnections();
      await closeSqlConnections();
      await closeContentStores();
      await closeKnowledgeBases();
      // A PostgreSQL channel's idle pool would otherwise keep the process alive for its idle timeout.
      await closeStreamChannels();
      await tracing?.shutdown();
      await client.connection.close();
      await connection.close();
    }
  })();
  return {
    done,
    async stop() {
      stopRequested = true;
      shutdown?.();
      await done;
    },
  };
}
