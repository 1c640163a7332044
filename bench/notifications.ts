/**
 * Notification delivery on the real dev server with an in-process worker:
 * (1) signal → visible in a query, p50/p95 (the `notify` signal, then `notificationsSince` polled
 *     until the change shows);
 * (2) query latency against a full inbox (100 items): `notifications` (the whole list) and
 *     `notificationsSince` with nothing new (what a live follower pays per poll);
 * (3) signals per second into one inbox, counted until every signal is applied, continue-as-new
 *     (every 500 signals by default) included.
 *
 *   npx tsx bench/notifications.ts [samples=200] [signals=2000] [concurrency=20]
 */
import { performance } from 'node:perf_hooks';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, bundleWorkflowCode } from '@temporalio/worker';
import { startDevServer, stopDevServer } from '../cli/dev-server';
import {
  INBOX_WORKFLOW_TYPE,
  inboxWorkflowId,
  notificationsQuery,
  notificationsSinceQuery,
  notifySignal,
} from '../shared/notifications/messages';
import { DEFAULT_MAX_NOTIFICATIONS } from '../shared/notifications/schema';
import { loadWorkerConfig } from '../workers/config';
import { WORKFLOWS_PATH, createAgentWorker } from '../workers/worker';
import { freePort } from '../tests/support/processes';
import { tempDir } from '../tests/support/temporal';
import { summary } from './stats';

const SAMPLES = Number(process.argv[2] ?? 200);
const SIGNALS = Number(process.argv[3] ?? 2000);
const CONCURRENCY = Number(process.argv[4] ?? 20);
/** Give up on the throughput run after this long, so a stalled inbox is reported, not waited on forever. */
const THROUGHPUT_DEADLINE_MS = 180_000;

async function main() {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const dataDir = tempDir('bench-notifications');
  const port = await freePort();
  await startDevServer({ dataDir, port, headless: true });
  const address = `127.0.0.1:${port}`;
  const client = new Client({ connection: await Connection.connect({ address }) });
  const connection = await NativeConnection.connect({ address });
  const taskQueue = 'bench-notifications';
  const worker = await createAgentWorker({
    connection,
    namespace: 'default',
    config: loadWorkerConfig({}),
    taskQueue,
    client,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      logger: new DefaultLogger('WARN'),
    }),
  });

  const visible: number[] = [];
  const fullList: number[] = [];
  const nothingNew: number[] = [];
  let throughput = '';
  await worker.runUntil(async () => {
    const inbox = await client.workflow.signalWithStart(INBOX_WORKFLOW_TYPE, {
      workflowId: inboxWorkflowId(`bench-latency-${Date.now()}`),
      taskQueue,
      args: [{}],
      signal: notifySignal,
      signalArgs: [{ message: 'warm-up' }],
    });
    let update = (await inbox.query(notificationsQuery)).update;
    // One at a time, so each sample is one signal's path, not a queue behind others.
    for (let i = 0; i < SAMPLES; i++) {
      const t0 = performance.now();
      await inbox.signal(notifySignal, { message: `sample ${i}`, type: 'progress' });
      for (;;) {
        const changes = await inbox.query(notificationsSinceQuery, { updateNo: update });
        if (changes.update > update) {
          update = changes.update;
          break;
        }
      }
      visible.push(performance.now() - t0);
    }

    const history = await inbox.query(notificationsQuery);
    if (history.count !== DEFAULT_MAX_NOTIFICATIONS) throw new Error(`inbox not full: ${history.count}`);
    for (let i = 0; i < SAMPLES; i++) {
      let t0 = performance.now();
      await inbox.query(notificationsQuery);
      fullList.push(performance.now() - t0);
      t0 = performance.now();
      await inbox.query(notificationsSinceQuery, { updateNo: history.update, guid: history.guid });
      nothingNew.push(performance.now() - t0);
    }

    const flood = await client.workflow.start(INBOX_WORKFLOW_TYPE, {
      workflowId: inboxWorkflowId(`bench-throughput-${Date.now()}`),
      taskQueue,
      args: [{}],
    });
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < SIGNALS) {
          const i = next++;
          await flood.signal(notifySignal, { message: `flood ${i}`, id: `f-${i}` });
        }
      }),
    );
    const accepted = performance.now() - t0;
    for (;;) {
      const applied = (await flood.query(notificationsQuery)).update;
      if (applied >= SIGNALS) break;
      if (performance.now() - t0 > THROUGHPUT_DEADLINE_MS) {
        throughput = `STALLED: ${applied}/${SIGNALS} applied after ${THROUGHPUT_DEADLINE_MS / 1000} s`;
        return;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    const appliedMs = performance.now() - t0;
    throughput =
      `${((SIGNALS / appliedMs) * 1000).toFixed(0)} signals/s applied ` +
      `(${SIGNALS} signals from ${CONCURRENCY} concurrent senders; the server accepted them at ` +
      `${((SIGNALS / accepted) * 1000).toFixed(0)}/s)`;
  });
  await connection.close();
  await client.connection.close();
  await stopDevServer({ dataDir, port });

  console.log(`Notifications on the Temporal dev server (in-process worker)`);
  console.log(`signal → visible in query:            ${summary(visible)}`);
  console.log(`query "notifications", 100 items:      ${summary(fullList)}`);
  console.log(`query "notificationsSince", no change: ${summary(nothingNew)}`);
  console.log(`throughput into one inbox:             ${throughput}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
