import fs from 'node:fs';
import path from 'node:path';
import { notificationDelivery } from '../client/deliver';
import { Client, Connection } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { NativeConnection } from '@temporalio/worker';
import type { DevServerOptions } from '../workers/dev-server';
import { devServerStatus, startDevServer, stopDevServer } from '../workers/dev-server';
import { CLIENT_CHANNEL_ARGS } from '../workers/connect';
import { retryInterceptor } from '../workers/grpc-retry';
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

/** Starts at a free port tried this many times: see {@link startDevServerOnFreePort}. */
const PORT_ATTEMPTS = 3;

/**
 * Starts a headless dev server in a fresh folder on a free port. A port found free can be taken
 * before the server binds it (the other jest worker starts dev servers too, each opening ports of its
 * own), and the server then exits with "address already in use": that start is retried on another
 * port, in another folder. Any other failure is thrown as it is.
 */
export async function startDevServerOnFreePort(
  pickPort: () => Promise<number> = freePort,
  dynamicConfig: DevServerOptions['dynamicConfig'] = {},
): Promise<{ dataDir: string; port: number; attempts: number }> {
  for (let attempt = 1; ; attempt++) {
    const dataDir = tempDir('devserver');
    const port = await pickPort();
    try {
      await startDevServer({ dataDir, port, headless: true, dynamicConfig });
      return { dataDir, port, attempts: attempt };
    } catch (err) {
      const log = path.join(dataDir, 'temporal.log');
      const raced =
        (err instanceof Error && err.message.includes('already in use')) ||
        (fs.existsSync(log) && fs.readFileSync(log, 'utf8').includes('address already in use'));
      if (!raced || attempt >= PORT_ATTEMPTS) throw err;
      await stopDevServer({ dataDir, port }).catch(() => undefined);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
}

/**
 * Starts a dev server from the pinned binary on a free port, with `dynamicConfig` over the dev
 * server's own (a server timer a test would otherwise wait out).
 */
export async function startDevServerFixture(
  dynamicConfig: DevServerOptions['dynamicConfig'] = {},
): Promise<DevServerFixture> {
  quietRuntime();
  const { dataDir, port } = await startDevServerOnFreePort(freePort, dynamicConfig);
  const address = `127.0.0.1:${port}`;
  const client = new Client({
    connection: await Connection.connect({
      address,
      channelArgs: CLIENT_CHANNEL_ARGS,
      interceptors: [retryInterceptor()],
    }),
  });
  return {
    address,
    port,
    dataDir,
    client,
    async stop() {
      await client.connection.close();
      // Killed, not shut down: SIGTERM's graceful shutdown takes a second of every test file, and a
      // test's server has nothing to keep (its folder is temporary; restarts are tested apart).
      const { pid } = await devServerStatus({ dataDir, port });
      try {
        if (pid !== null) process.kill(pid, 'SIGKILL');
      } catch {
        // It exited since: stopDevServer finds no server and removes its pid file.
      }
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
