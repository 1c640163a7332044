/**
 * The chaos script's own Temporal: a dev server from the pinned binary (free port, own data folder,
 * persistent SQLite file) and a few `durable-agent worker` processes, which the script SIGKILLs and
 * replaces, and a server it stops and starts again on the same file.
 */
import { Client, Connection } from '@temporalio/client';
import { startDevServer, stopDevServer } from '../../workers/dev-server';
import { CLIENT_CHANNEL_ARGS } from '../../workers/connect';
import { retryInterceptor } from '../../workers/grpc-retry';
import type { WorkerProcess } from '../../testkit/processes';
import { freePort, startWorkerProcess } from '../../testkit/processes';

/** A running dev server, its client and its worker processes. */
export class ChaosCluster {
  readonly address: string;
  /** Worker processes, one slot each; a killed worker's slot gets its replacement. */
  readonly workers: WorkerProcess[] = [];
  /** Workers that exited without being killed by the script (each is replaced). */
  unexpectedExits = 0;
  kills = 0;
  serverRestarts = 0;
  private stopping = false;
  private readonly killed = new WeakSet<WorkerProcess>();
  /** Per slot: settles when the slot's latest worker polls. */
  private readonly ready: Promise<void>[] = [];

  private constructor(
    readonly client: Client,
    readonly dataDir: string,
    readonly port: number,
    private readonly workerEnv: Record<string, string>,
  ) {
    this.address = `127.0.0.1:${port}`;
  }

  /** Starts the server and `workers` worker processes with `env` (task queue, config, secrets). */
  static async start(dataDir: string, workers: number, env: Record<string, string>): Promise<ChaosCluster> {
    const port = await freePort();
    await startDevServer({ dataDir, port, headless: true });
    const client = new Client({
      connection: await Connection.connect({
        address: `127.0.0.1:${port}`,
        channelArgs: CLIENT_CHANNEL_ARGS,
        interceptors: [retryInterceptor()],
      }),
    });
    const cluster = new ChaosCluster(client, dataDir, port, {
      ...env,
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
    });
    try {
      for (let i = 0; i < workers; i += 1) await cluster.startWorker(i);
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  /** Starts a worker in `slot` (retrying: the server may be down for a moment). */
  private startWorker(slot: number): Promise<void> {
    const starting = (async () => {
      for (let attempt = 1; ; attempt += 1) {
        if (this.stopping) return;
        try {
          const worker = await startWorkerProcess(this.workerEnv);
          this.workers[slot] = worker;
          void worker.exited.then(() => {
            if (this.stopping || this.killed.has(worker)) return;
            this.unexpectedExits += 1;
            this.startWorker(slot).catch(() => undefined);
          });
          return;
        } catch (err) {
          if (attempt >= 5 || this.stopping) throw err;
          await new Promise((r) => setTimeout(r, 1000));
        }
      }
    })();
    this.ready[slot] = starting.catch(() => undefined);
    return starting;
  }

  /**
   * SIGKILLs the worker in `slot` (no drain, no goodbye) and starts its replacement in the
   * background, so the next kill may come before it polls. A slot whose worker is still starting is
   * killed once it runs.
   */
  async killWorker(slot: number): Promise<void> {
    await this.ready[slot];
    if (this.stopping) return;
    const worker = this.workers[slot];
    if (!worker) throw new Error(`no worker in slot ${slot}`);
    this.killed.add(worker);
    worker.child.kill('SIGKILL');
    await worker.exited;
    this.kills += 1;
    void this.startWorker(slot).catch(() => undefined);
  }

  /** Stops the dev server (SIGTERM) and starts it again on the same port and SQLite file. */
  async restartServer(): Promise<void> {
    // Workers still starting would give up on a server that is away; let them poll first.
    await Promise.all(this.ready);
    await stopDevServer({ dataDir: this.dataDir, port: this.port });
    await new Promise((r) => setTimeout(r, 1000));
    await startDevServer({ dataDir: this.dataDir, port: this.port, headless: true });
    this.serverRestarts += 1;
  }

  /** Worker log lines with level WARN or above, for the report when something went wrong. */
  problems(): string[] {
    return this.workers.flatMap((w) => [
      ...w.lines.filter((l) => l.level === 'ERROR').map((l) => JSON.stringify(l).slice(0, 500)),
      ...w.stderr.map((s) => s.slice(0, 500)),
    ]);
  }

  /** Stops the workers and the server. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.allSettled(this.ready);
    await Promise.all(
      this.workers.map(async (w) => {
        if (w.child.exitCode !== null || w.child.signalCode !== null) return;
        // SIGKILL: what is checked happened already; a graceful drain would only add time.
        w.child.kill('SIGKILL');
        await w.exited;
      }),
    );
    await this.client.connection.close();
    await stopDevServer({ dataDir: this.dataDir, port: this.port });
  }
}
