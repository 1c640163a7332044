import { notificationDelivery } from '../client/deliver';
import { Client, Connection } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { NativeConnection } from '@temporalio/worker';
import { startDevServer, stopDevServer } from '../workers/dev-server';
import { CLIENT_CHANNEL_ARGS } from '../workers/connect';
import { createAgentWorker } from '../workers/worker';
import type { WorkerConfig } from '../workers/config';
import { freePort } from './processes';
import { quietRuntime, tempDir, testConfig, uid, workflowBundle } from './temporal';

/** A real dev server (own port and SQLite file) with a client, for one test file. */
export interface DevServerFixture {
  address: string;
  port: number;
  dataDir: string;
  client: Client;
  stop(): Promise<void>;
}

/** Starts a dev server from the pinned binary on a free port. */
export async function startDevServerFixture(): Promise<DevServerFixture> {
  quietRuntime();
  const dataDir = tempDir('devserver');
  const port = await freePort();
  await startDevServer({ dataDir, port, headless: true });
  const address = `127.0.0.1:${port}`;
  const client = new Client({
    connection: await Connection.connect({ address, channelArgs: CLIENT_CHANNEL_ARGS }),
  });
  return {
    address,
    port,
    dataDir,
    client,
    async stop() {
      await client.connection.close();
      await stopDevServer({ dataDir, port });
    },
  };
}

/** Runs `fn` while an in-process agent worker (with a client, so notifications work) polls a fresh queue. */
export async function withDevWorker<T>(
  fx: DevServerFixture,
  fn: (taskQueue: string) => Promise<T>,
  config: Partial<WorkerConfig> = {},
): Promise<T> {
  const taskQueue = uid('tq');
  const connection = await NativeConnection.connect({ address: fx.address });
  try {
    const worker: Worker = await createAgentWorker({
      connection,
      namespace: 'default',
      config: testConfig({ ...config, taskQueue }),
      deliver: notificationDelivery(fx.client, taskQueue),
      taskQueue,
      workflowBundle: await workflowBundle(),
    });
    return await worker.runUntil(fn(taskQueue));
  } finally {
    await connection.close();
  }
}
