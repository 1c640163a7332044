/**
 * Content store size over many completed runs with garbage collection on, on the dev server.
 *
 * Runs short scripted agent jobs (one `sql_query` returning a 60 KB value unique to the run, kept
 * by reference, then an answer) in batches; after each batch the GC workflow collects the store
 * (the workflow the worker's schedule fires) and the store's size is printed. Without GC the store
 * grows by every run's content; with it, once runs are older than the retention, it stays flat.
 *
 * The server's shortest namespace retention is an hour, so the collector here reads the retention
 * as `--retention` (default 10 s): time compressed, the same rules. Everything else is real: the
 * dev server, the worker, the runs, DescribeWorkflowExecution for each claimant, the store.
 *
 *   npx tsx bench/content-gc.ts [--runs 1000] [--batch 100] [--concurrency 8] [--retention 10s] [--store file|postgres]
 */
import { NativeConnection } from '@temporalio/worker';
import { contentStoreFor } from '../activities/content/config';
import type { ContentStoreConfig } from '../activities/content/config';
import type { RunLiveness } from '../activities/content/gc';
import { temporalLiveness } from '../activities/content/liveness';
import { notificationDelivery } from '../client/deliver';
import type { AgentInput } from '../shared/agent';
import type { ContentGcReport } from '../shared/content-gc';
import { CONTENT_GC_WORKFLOW_TYPE } from '../shared/content-gc';
import { durationMs } from '../shared/schedule-spec';
import { formatBytes } from '../shared/temporal-limits';
import { createAgentWorker } from '../workers/worker';
import { pgSchemaStore } from '../testkit/content-store';
import { startDevServerFixture } from '../testkit/dev-server';
import { answerTurn, callTurn } from '../testkit/scripts';
import { tempDir, testConfig, uid, workflowBundle } from '../testkit/temporal';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

const RUNS = Number(arg('runs', '1000'));
const BATCH = Number(arg('batch', '100'));
const CONCURRENCY = Number(arg('concurrency', '8'));
const RETENTION_MS = durationMs(arg('retention', '10s')) ?? 10_000;
const STORE = arg('store', 'file');
/** Goal: after the retention, the store stays within this factor of its smallest size. */
const FLAT_FACTOR = 1.5;

function input(i: number): AgentInput {
  return {
    task: `bench run ${i}`,
    tools: ['sql_query'],
    model: {
      provider: 'scripted',
      turns: [
        callTurn(['sql_query', { sql: `SELECT '${i}:' || repeat('x', 60000) AS big` }, 'q']),
        answerTurn('done'),
      ],
    },
  };
}

async function main(): Promise<void> {
  const fx = await startDevServerFixture();
  const pg = STORE === 'postgres' ? await pgSchemaStore('benchgc') : undefined;
  const storeConfig: ContentStoreConfig = pg ? pg.config : { kind: 'file', dir: tempDir('bench-gc') };
  const store = contentStoreFor(storeConfig);
  const connection = await NativeConnection.connect({ address: fx.address });
  const real = temporalLiveness(connection.workflowService);
  // Time compressed: the namespace's retention read as --retention (the server's minimum is 1 h).
  const liveness: RunLiveness = {
    serviceId: () => real.serviceId(),
    retentionMs: async (ns) => ((await real.retentionMs(ns)) === null ? null : RETENTION_MS),
    status: (ns, id) => real.status(ns, id),
  };
  const taskQueue = uid('bench-gc');
  const worker = await createAgentWorker({
    connection,
    namespace: 'default',
    config: testConfig({ taskQueue, contentStore: storeConfig }),
    deliver: notificationDelivery(fx.client, taskQueue),
    taskQueue,
    workflowBundle: await workflowBundle(),
    contentLiveness: liveness,
  });
  const rows: { runs: number; seconds: number; bytes: number; values: number; removed: number }[] = [];
  const started = Date.now();
  let removedTotal = 0;
  try {
    await worker.runUntil(async () => {
      console.log(
        `content-gc: ${RUNS} runs (60 KB result each) in batches of ${BATCH}, ${CONCURRENCY} at once; ` +
          `${STORE} store; GC after each batch with retention read as ${RETENTION_MS / 1000} s`,
      );
      console.log('runs   time    store values   store size   removed by GC   written so far');
      for (let done = 0; done < RUNS;) {
        const batch = Math.min(BATCH, RUNS - done);
        let next = 0;
        await Promise.all(
          Array.from({ length: Math.min(CONCURRENCY, batch) }, async () => {
            while (next < batch) {
              const i = done + next++;
              await fx.client.workflow.execute('agentWorkflow', {
                taskQueue,
                workflowId: uid(`bench-${i}`),
                args: [input(i)],
              });
            }
          }),
        );
        done += batch;
        const report = (await fx.client.workflow.execute(CONTENT_GC_WORKFLOW_TYPE, {
          taskQueue,
          workflowId: uid('content-gc'),
          args: [{}],
        })) as ContentGcReport;
        removedTotal += report.removedBytes;
        const seconds = (Date.now() - started) / 1000;
        rows.push({
          runs: done,
          seconds,
          bytes: report.storeBytes,
          values: report.storeValues,
          removed: report.removedBytes,
        });
        console.log(
          `${String(done).padStart(5)}  ${seconds.toFixed(0).padStart(4)} s  ${String(report.storeValues).padStart(12)}  ` +
            `${formatBytes(report.storeBytes).padStart(11)}  ${formatBytes(report.removedBytes).padStart(14)}  ` +
            `${formatBytes(report.storeBytes + removedTotal).padStart(15)}`,
        );
      }
    });
  } finally {
    await connection.close();
    await store.close();
    await pg?.drop();
    await fx.stop();
  }
  // Flat after retention: every batch that ended a retention or more after the first one.
  const first = rows[0];
  const after = rows.filter((r) => first && r.seconds - first.seconds >= RETENTION_MS / 1000);
  const sizes = after.map((r) => r.bytes);
  const low = Math.min(...sizes);
  const high = Math.max(...sizes);
  const last = rows.at(-1);
  if (after.length === 0) {
    console.log('NOT MET: no batch ended a retention after the first: more runs or a shorter --retention');
    process.exitCode = 1;
    return;
  }
  console.log(
    `after retention (${after.length} batches): store ${formatBytes(low)}–${formatBytes(high)} ` +
      `(max/min ${(high / Math.max(low, 1)).toFixed(2)}; goal ≤ ${FLAT_FACTOR}, i.e. flat); ` +
      `without GC it would hold ${formatBytes((last?.bytes ?? 0) + removedTotal)}`,
  );
  if (high > FLAT_FACTOR * low) {
    console.log(
      'NOT MET: the store did not stay flat after the retention (more runs or a shorter --retention?)',
    );
    process.exitCode = 1;
  }
}

main().then(
  // The worker's native runtime keeps the process alive: exit when done.
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
