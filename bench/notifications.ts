/**
 * Notification delivery on the real dev server with an in-process worker, the `notify` **update**
 * path (what the CLI, the API and the notify_user tool use) side by side with the `notify`
 * **signal** path (kept for compatibility):
 * (1) create → visible in a query, p50/p95 (update: the update returns once applied, then one
 *     `notificationsSince` confirms it; signal: the signal, then `notificationsSince` polled until
 *     the change shows);
 * (2) query latency against a full inbox (100 items): `notifications` (the whole list) and
 *     `notificationsSince` with nothing new (what a live follower pays per poll);
 * (3) notifications per second into one inbox, counted until every one is applied, continue-as-new
 *     included.
 * Goals (next to each figure): visible p50 ≤ 15 ms, full-inbox query p50 ≤ 8 ms, ≥ 300/s. The same
 * figures for a bare inbox (bench/fixtures/floor-workflow.ts: a list and the same messages, nothing
 * else) on its own worker in the same run are the engine's floor on the machine.
 *
 * Latency samples are taken in turns (one of each target, round after round) after 50 unrecorded
 * rounds, and each target's measured flood follows a warm-up flood of every target: measured one
 * target after another, the first paid for a cold process and server (3 ms of 15 at p50).
 *
 *   npx tsx bench/notifications.ts [samples=200] [count=2000] [concurrency=8]
 *
 * The server takes at most 10 updates in flight per workflow (more are refused with
 * RESOURCE_EXHAUSTED), so the update path's senders stay at or under 10.
 */
import { notificationDelivery } from '../client/deliver';
import { performance } from 'node:perf_hooks';
import { Client, Connection, WithStartWorkflowOperation } from '@temporalio/client';
import type { WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { startDevServer, stopDevServer } from '../workers/dev-server';
import {
  INBOX_WORKFLOW_TYPE,
  inboxWorkflowId,
  notificationsQuery,
  notificationsSinceQuery,
  notifySignal,
  notifyUpdate,
} from '../shared/notifications/messages';
import { DEFAULT_MAX_NOTIFICATIONS } from '../shared/notifications/schema';
import type { NotificationInput } from '../shared/notifications/schema';
import { loadWorkerConfig } from '../workers/config';
import { retryInterceptor } from '../workers/grpc-retry';
import { WORKFLOWS_PATH, WORKFLOW_BUNDLER_OPTIONS, createAgentWorker } from '../workers/worker';
import { freePort } from '../testkit/processes';
import { tempDir } from '../testkit/temporal';
import { floorBundle } from './fixtures/floor';
import { percentile, summary } from './stats';

const SAMPLES = Number(process.argv[2] ?? 200);
const COUNT = Number(process.argv[3] ?? 2000);
const CONCURRENCY = Number(process.argv[4] ?? 8);
/** Unrecorded rounds before the latency samples, and notifications per target before the measured floods. */
const WARM_UP = 50;
const WARM_UP_FLOOD = 300;
if (!Number.isInteger(CONCURRENCY) || CONCURRENCY < 1 || CONCURRENCY > 10) {
  console.error('concurrency must be 1–10: the server takes at most 10 updates in flight per workflow');
  process.exit(2);
}
/** Give up on the throughput run after this long, so a stalled inbox is reported, not waited on forever. */
const THROUGHPUT_DEADLINE_MS = 180_000;

type Path = 'update' | 'signal';

/** Where a path's notifications go: the inbox, or the bare inbox of bench/fixtures (the engine's floor). */
interface Target {
  label: string;
  workflowType: string;
  taskQueue: string;
  path: Path;
}

/** Sends one notification by `path`; the update path returns once the inbox applied it. */
async function send(handle: WorkflowHandle, path: Path, n: NotificationInput): Promise<void> {
  if (path === 'update') await handle.executeUpdate(notifyUpdate, { args: [n] });
  else await handle.signal(notifySignal, n);
}

interface PathFigures {
  visible: number[];
  fullList: number[];
  nothingNew: number[];
  throughput: string;
  perSecond: number;
  /** Items in the inbox the query figures were measured on. */
  listCount: number;
}

/** A target's latency inbox and the last update number a client has seen of it. */
interface Probe {
  target: Target;
  inbox: WorkflowHandle;
  update: number;
  figures: PathFigures;
}

/** Starts a target's latency inbox (update-with-start or signal-with-start, as its path does). */
async function openProbe(client: Client, target: Target): Promise<Probe> {
  const { workflowType, taskQueue, path } = target;
  const workflowId = inboxWorkflowId(`bench-${tag(target)}-latency-${Date.now()}`);
  const inbox =
    path === 'update'
      ? (await client.workflow.executeUpdateWithStart(notifyUpdate, {
          args: [{ message: 'warm-up' }],
          startWorkflowOperation: new WithStartWorkflowOperation(workflowType, {
            workflowId,
            taskQueue,
            args: [{}],
            workflowIdConflictPolicy: 'USE_EXISTING',
          }),
        }),
        client.workflow.getHandle(workflowId))
      : await client.workflow.signalWithStart(workflowType, {
          workflowId,
          taskQueue,
          args: [{}],
          signal: notifySignal,
          signalArgs: [{ message: 'warm-up' }],
        });
  const update = (await inbox.query(notificationsQuery)).update;
  const figures: PathFigures = {
    visible: [],
    fullList: [],
    nothingNew: [],
    throughput: '',
    perSecond: NaN,
    listCount: 0,
  };
  return { target, inbox, update, figures };
}

function tag(target: Target): string {
  return target.label.replace(/[^a-z]+/g, '-');
}

/** One notification's path: sent, then `notificationsSince` until it shows. Returns milliseconds. */
async function visibleOnce(probe: Probe, message: string): Promise<number> {
  const t0 = performance.now();
  await send(probe.inbox, probe.target.path, { message, type: 'progress' });
  for (;;) {
    const changes = await probe.inbox.query(notificationsSinceQuery, { updateNo: probe.update });
    if (changes.update > probe.update) {
      probe.update = changes.update;
      break;
    }
  }
  return performance.now() - t0;
}

/**
 * Latency figures of every target, taken in turns (one sample of each, round after round) after
 * warm-up rounds, so no target pays for a colder process or server than another.
 */
async function measureLatency(probes: Probe[]): Promise<void> {
  for (let i = 0; i < WARM_UP; i++) {
    for (const probe of probes) await visibleOnce(probe, `warm-up ${i}`);
  }
  // One at a time, so each sample is one notification's path, not a queue behind others.
  for (let i = 0; i < SAMPLES; i++) {
    for (const probe of probes) probe.figures.visible.push(await visibleOnce(probe, `sample ${i}`));
  }
  const lists = new Map<Probe, { update: number; guid: string }>();
  for (const probe of probes) {
    const history = await probe.inbox.query(notificationsQuery);
    const expected = Math.min(DEFAULT_MAX_NOTIFICATIONS, WARM_UP + SAMPLES + 1);
    if (history.count !== expected) {
      throw new Error(
        `${probe.target.label}: inbox holds ${history.count} notifications, expected ${expected}`,
      );
    }
    probe.figures.listCount = history.count;
    lists.set(probe, history);
  }
  for (let i = 0; i < SAMPLES; i++) {
    for (const probe of probes) {
      const { update, guid } = lists.get(probe)!;
      let t0 = performance.now();
      await probe.inbox.query(notificationsQuery);
      probe.figures.fullList.push(performance.now() - t0);
      t0 = performance.now();
      await probe.inbox.query(notificationsSinceQuery, { updateNo: update, guid });
      probe.figures.nothingNew.push(performance.now() - t0);
    }
  }
}

/**
 * Sends `count` notifications from CONCURRENCY senders into a new inbox and waits until all are
 * applied. Returns milliseconds until applied and until the server accepted the last, or the
 * number applied when it stalled.
 */
async function flood(
  client: Client,
  target: Target,
  count: number,
): Promise<{ appliedMs: number; acceptedMs: number } | { stalledAt: number }> {
  const inbox = await client.workflow.start(target.workflowType, {
    workflowId: inboxWorkflowId(`bench-${tag(target)}-throughput-${Date.now()}`),
    taskQueue: target.taskQueue,
    args: [{}],
  });
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const i = next++;
        await send(inbox, target.path, { message: `flood ${i}`, id: `f-${i}` });
      }
    }),
  );
  const acceptedMs = performance.now() - t0;
  for (;;) {
    const applied = (await inbox.query(notificationsQuery)).update;
    if (applied >= count) return { appliedMs: performance.now() - t0, acceptedMs };
    if (performance.now() - t0 > THROUGHPUT_DEADLINE_MS) return { stalledAt: applied };
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Throughput of every target: a short warm-up flood each, then the measured floods in turn. */
async function measureThroughput(client: Client, probes: Probe[]): Promise<void> {
  for (const probe of probes) await flood(client, probe.target, WARM_UP_FLOOD);
  for (const probe of probes) {
    const f = probe.figures;
    const r = await flood(client, probe.target, COUNT);
    if ('stalledAt' in r) {
      f.throughput = `STALLED: ${r.stalledAt}/${COUNT} applied after ${THROUGHPUT_DEADLINE_MS / 1000} s`;
      continue;
    }
    f.perSecond = (COUNT / r.appliedMs) * 1000;
    f.throughput =
      `${f.perSecond.toFixed(0)}/s applied (${COUNT} from ${CONCURRENCY} concurrent senders; ` +
      `the server accepted them at ${((COUNT / r.acceptedMs) * 1000).toFixed(0)}/s)`;
  }
}

/** `figure (goal …: met | not met)`. */
function goal(figure: number, target: number, better: 'lower' | 'higher', unit: string): string {
  const met = better === 'lower' ? figure <= target : figure >= target;
  return `goal ${better === 'lower' ? '≤' : '≥'} ${target} ${unit}: ${met ? 'met' : 'not met'}`;
}

async function main() {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const dataDir = tempDir('bench-notifications');
  const port = await freePort();
  await startDevServer({ dataDir, port, headless: true });
  const address = `127.0.0.1:${port}`;
  const client = new Client({
    connection: await Connection.connect({ address, interceptors: [retryInterceptor()] }),
  });
  const connection = await NativeConnection.connect({ address });
  const taskQueue = 'bench-notifications';
  const worker = await createAgentWorker({
    connection,
    namespace: 'default',
    config: loadWorkerConfig({}),
    taskQueue,
    deliver: notificationDelivery(client, taskQueue),
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      logger: new DefaultLogger('WARN'),
      ...WORKFLOW_BUNDLER_OPTIONS,
    }),
  });

  const floorQueue = 'bench-notifications-floor';
  const floorWorker = await Worker.create({
    connection,
    taskQueue: floorQueue,
    workflowBundle: await floorBundle(),
  });
  const targets: Target[] = [
    { label: 'update', workflowType: INBOX_WORKFLOW_TYPE, taskQueue, path: 'update' },
    { label: 'signal', workflowType: INBOX_WORKFLOW_TYPE, taskQueue, path: 'signal' },
    {
      label: 'bare workflow, update',
      workflowType: 'floorInboxWorkflow',
      taskQueue: floorQueue,
      path: 'update',
    },
    {
      label: 'bare workflow, signal',
      workflowType: 'floorInboxWorkflow',
      taskQueue: floorQueue,
      path: 'signal',
    },
  ];
  const figures = new Map<string, PathFigures>();
  await floorWorker.runUntil(
    worker.runUntil(async () => {
      const probes: Probe[] = [];
      for (const target of targets) probes.push(await openProbe(client, target));
      await measureLatency(probes);
      await measureThroughput(client, probes);
      for (const probe of probes) figures.set(probe.target.label, probe.figures);
    }),
  );
  await connection.close();
  await client.connection.close();
  await stopDevServer({ dataDir, port });

  console.log(
    `Notifications on the Temporal dev server (in-process workers), update path vs signal path, inbox vs bare workflow`,
  );
  console.log(`(${SAMPLES} samples, ${COUNT} notifications from ${CONCURRENCY} senders for throughput)`);
  for (const [label, f] of figures) {
    console.log(`— ${label} —`);
    console.log(
      `create → visible in query:             ${summary(f.visible)}  [${goal(percentile(f.visible, 50), 15, 'lower', 'ms p50')}]`,
    );
    console.log(
      `query "notifications", ${String(f.listCount).padStart(3)} items:     ${summary(f.fullList)}  [${goal(percentile(f.fullList, 50), 8, 'lower', 'ms p50')}]`,
    );
    console.log(`query "notificationsSince", no change: ${summary(f.nothingNew)}`);
    console.log(
      `throughput into one inbox:             ${f.throughput}  [${goal(f.perSecond, 300, 'higher', '/s')}]`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
