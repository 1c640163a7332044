import type { Client, ClientInterceptors } from '@temporalio/client';
import type * as WorkerConfig from '../workers/config';
import type { TemporalTarget } from '../workers/connect';
import { connectClient } from '../workers/connect';
import type * as StartTracing from '../workers/observability/start-tracing';

/** Runs `fn` with a client for `target` (with `interceptors`), closing the connection afterwards. */
export async function withClient<T>(
  target: TemporalTarget,
  fn: (client: Client) => Promise<T>,
  interceptors?: ClientInterceptors,
): Promise<T> {
  const client = await connectClient(target, interceptors);
  try {
    return await fn(client);
  } finally {
    await client.connection.close();
  }
}

/**
 * Runs `fn` with a client for `target`, closing the connection afterwards. With tracing on
 * (`DURABLE_AGENT_TRACING`), the command is one trace: a `durable-agent <command>` span whose
 * children are the client calls that change a run (signal, update, cancel), and through them the
 * worker's spans. Queries and describes add no span.
 */
export async function withCommandClient<T>(
  target: TemporalTarget,
  command: string,
  fn: (client: Client) => Promise<T>,
): Promise<T> {
  // Loaded here: reading commands (`withClient`) need neither the configuration's schemas nor tracing.
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand */
  const { loadWorkerConfig } = require('../workers/config') as typeof WorkerConfig;
  const { startTracing } = require('../workers/observability/start-tracing') as typeof StartTracing;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const tracing = startTracing(loadWorkerConfig(), command);
  try {
    return await withClient(target, fn, tracing?.clientInterceptors);
  } finally {
    await tracing?.shutdown();
  }
}
