import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { LogEntry } from '@temporalio/worker';
import { closeContentStores } from '../activities/content/config';
import { closeEmailConnections } from '../activities/email';
import { closeSqlConnections } from '../activities/sql';
import type { WorkerConfig } from './config';
import type { TemporalTarget } from './connect';
import { connectClient, connectWorker } from './connect';
import { startTracing } from './start-tracing';
import { createAgentWorker } from './worker';

/** A started worker: `done` settles when it has shut down; `stop` asks it to, and waits. */
export interface RunningWorker {
  done: Promise<void>;
  stop(): Promise<void>;
}

let runtimeInstalled = false;

/**
 * Routes Temporal's logs (the worker's and the activities') through one logger: Temporal's own
 * text lines on stderr, or with `json` one object per line on stdout (for log shippers and tests).
 * Takes effect once per process, before the first connection.
 */
export function installLogging(level: WorkerConfig['logLevel'], format: WorkerConfig['logFormat']): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const logger =
    format === 'text'
      ? new DefaultLogger(level)
      : new DefaultLogger(level, (entry: LogEntry) => {
          const line = {
            time: new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString(),
            level: entry.level,
            msg: entry.message,
            ...entry.meta,
          };
          process.stdout.write(`${JSON.stringify(line)}\n`);
        });
  Runtime.install({ logger });
}

/**
 * Connects and runs the agent worker until stopped. With `installSignalHandlers` (the default, for
 * the `worker` command) SIGINT/SIGTERM drain in-flight tasks and exit cleanly.
 */
export function runWorker(opts: {
  config: WorkerConfig;
  target: TemporalTarget;
  installSignalHandlers?: boolean;
}): RunningWorker {
  if (opts.installSignalHandlers !== false) installLogging(opts.config.logLevel, opts.config.logFormat);
  let stopRequested = false;
  let shutdown: (() => void) | undefined;
  const done = (async () => {
    const connection = await connectWorker(opts.target);
    const tracing = startTracing(opts.config);
    // The worker's own client (notification signals) carries the trace on, too.
    const client = await connectClient(opts.target, tracing?.clientInterceptors);
    try {
      const worker = await createAgentWorker({
        connection,
        namespace: opts.target.namespace,
        config: opts.config,
        client,
        tracing,
      });
      shutdown = () => worker.shutdown();
      if (stopRequested) return;
      if (opts.installSignalHandlers !== false) {
        console.error(
          `Worker polling task queue "${opts.config.taskQueue}" on ${opts.target.connectionOptions.address} ` +
            `(namespace ${opts.target.namespace}); Ctrl-C to stop`,
        );
        const t = opts.config.tracing;
        if (t.exporter !== 'off') {
          console.error(
            `Tracing on: spans of service "${t.serviceName}" go to ` +
              (t.exporter === 'console'
                ? 'stderr, one JSON line each'
                : (t.endpoint ?? 'http://localhost:4318/v1/traces')),
          );
        }
      }
      await worker.run();
    } finally {
      closeEmailConnections();
      await closeSqlConnections();
      await closeContentStores();
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
