/**
 * A query no worker answers, at every door, on a real dev server. Temporal ends such a query in more
 * than one way, depending on which timer fires first (see client/temporal-errors.ts); each way is
 * made to happen on purpose here, and each must reach the user as "no worker" (HTTP 503 `no_worker`
 * with Retry-After, the CLI's message), never as a 500 "Internal error".
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Interceptor, StatusObject } from '@grpc/grpc-js';
import { InterceptingCall, status as Status } from '@grpc/grpc-js';
import { Client, Connection, isGrpcServiceError } from '@temporalio/client';
import { ANSWER_TIMEOUT_MS, readNotifications } from '../../client/notification-client';
import { startApiServer } from '../../server/api/server';
import type { RunningApiServer } from '../../server/api/server';
import { inboxWorkflowId, notificationsQuery } from '../../shared/notifications/messages';
import type { DevServerFixture } from '../../testkit/dev-server';
import { startDevServerFixture } from '../../testkit/dev-server';
import { runCli, startWorkerProcess } from '../../testkit/processes';
import { uid } from '../../testkit/temporal';

/**
 * How long after a task queue's last poll the dev server answers a query "no poller seen" instead of
 * waiting out the deadline: its `matching.queryPollerUnavailableWindow`, 20 s by default.
 */
const POLLER_WINDOW_MS = 20_000;
/** The deadline the server is given when it is made to time the query out before the client does. */
const SERVER_DEADLINE_MS = 300;
/** Tries before giving up on seeing the server reset a stream; it does so about one time in two. */
const MAX_TRIES = 30;
const QUERY_WORKFLOW_PATH = '/temporal.api.workflowservice.v1.WorkflowService/QueryWorkflow';

let fx: DevServerFixture;
let api: RunningApiServer;
const errors: string[] = [];

beforeAll(async () => {
  fx = await startDevServerFixture();
  api = await startApiServer({
    client: fx.client,
    taskQueue: uid('unused'),
    host: '127.0.0.1',
    port: 0,
    logError: (m) => errors.push(m),
  });
}, 120_000);

afterAll(async () => {
  await api?.close();
  await fx?.stop();
});

async function get(path: string, base = api.url) {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

const q = (target: string) => `/api/notifications?target=${encodeURIComponent(target)}`;

/** The gRPC status a failed call carries, wherever the SDK put it in the cause chain. */
function statusOf(err: unknown): { code: number; details: string } | undefined {
  for (let e = err; e instanceof Error; e = e.cause) {
    if (isGrpcServiceError(e)) return { code: e.code, details: e.details };
  }
  return undefined;
}

/** The 503 every door owes a query no worker answered. */
function expectNoWorker(res: Awaited<ReturnType<typeof get>>): void {
  expect(res).toMatchObject({ status: 503, body: { code: 'no_worker' } });
  expect(res.body.error).toMatch(/No worker answered/);
  expect(res.headers.get('retry-after')).toBe('5');
}

test('a worker that has gone: the server says "no poller seen" before our deadline, and every door says no worker', async () => {
  const taskQueue = uid('gone');
  const target = inboxWorkflowId(uid('gone'));
  const worker = await startWorkerProcess({
    TEMPORAL_ADDRESS: fx.address,
    DURABLE_AGENT_TASK_QUEUE: taskQueue,
  });
  const handle = fx.client.workflow.getHandle(target);
  try {
    await fx.client.workflow.start('inboxWorkflow', { workflowId: target, taskQueue, args: [{}] });
    // Answered, so its first workflow task is done: later queries go to the task queue, not a buffer.
    expect(await handle.query(notificationsQuery)).toMatchObject({ count: 0 });
  } finally {
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
  const env = { TEMPORAL_ADDRESS: fx.address };
  // `status` sees the worker's poll of under 90 s ago, so it asks, without a deadline of its own:
  // the server keeps its query to its own 30 s limit, and "no poller seen" or timed out there, it
  // is no worker. So it asks now, and its 30 s run out beside the poller window below.
  const statusRun = runCli(['status', target], env);
  await sleep(POLLER_WINDOW_MS + 2000);

  const [raw, http, notifications, status] = await Promise.all([
    fx.client
      .withDeadline(Date.now() + ANSWER_TIMEOUT_MS, () => handle.query(notificationsQuery))
      .then(
        () => undefined,
        (err: unknown) => err,
      ),
    get(q(target)),
    runCli(['notifications', target], env),
    statusRun,
  ]);
  // What Temporal returns: FAILED_PRECONDITION a second before the deadline, not DEADLINE_EXCEEDED.
  expect(statusOf(raw)).toEqual({ code: 9, details: expect.stringMatching(/no poller seen/) });
  expectNoWorker(http);
  expect(notifications.code).toBe(1);
  expect(notifications.stderr).toMatch(/^error: No worker answered for "inbox:gone-/);
  expect(status.code).toBe(1);
  expect(status.stdout).toMatch(new RegExp(`workflow RUNNING; No worker polls task queue "${taskQueue}"`));
  expect(status.stderr).toBe('');
  expect(errors).toEqual([]);
}, 180_000);

/**
 * A client whose queries leave timing out to the server: the call keeps no deadline of its own and
 * tells the server `grpc-timeout` instead. That is what happens when our deadline timer fires late
 * (a busy event loop on a busy machine), which let the server's answer in first one time in six.
 * Every status the server ends a query with goes into `seen`.
 */
function serverDeadlineFirst(seen: StatusObject[]): Interceptor {
  return (options, nextCall) => {
    if (options.method_definition.path !== QUERY_WORKFLOW_PATH)
      return new InterceptingCall(nextCall(options));
    return new InterceptingCall(nextCall({ ...options, deadline: Infinity }), {
      start(metadata, _listener, next) {
        metadata.set('grpc-timeout', `${SERVER_DEADLINE_MS}m`);
        next(metadata, {
          onReceiveStatus(status, nextStatus) {
            seen.push(status);
            nextStatus(status);
          },
        });
      },
    });
  };
}

test('the server times the query out first: DEADLINE_EXCEEDED or a reset stream (CANCELLED), both no worker at every door', async () => {
  const seen: StatusObject[] = [];
  const connection = await Connection.connect({
    address: fx.address,
    interceptors: [serverDeadlineFirst(seen)],
  });
  const client = new Client({ connection });
  const racing = await startApiServer({
    client,
    taskQueue: uid('unused'),
    host: '127.0.0.1',
    port: 0,
    logError: (m) => errors.push(m),
  });
  try {
    // Never polled: its first workflow task waits, and so does every query (one at a time: the
    // server buffers one query per workflow until a worker takes the task).
    const orphan = inboxWorkflowId(uid('orphan'));
    await fx.client.workflow.start('inboxWorkflow', {
      workflowId: orphan,
      taskQueue: uid('nobody'),
      args: [{}],
    });

    // The server ends each query at its deadline with whichever comes first, its handler's
    // DEADLINE_EXCEEDED or its transport's RST_STREAM(CANCEL); ask until each door met the reset.
    const doors = {
      http: async () => expectNoWorker(await get(q(orphan), racing.url)),
      // What the CLI's `notifications` command calls.
      client: () => expect(readNotifications(client, orphan)).rejects.toMatchObject({ code: 'no_worker' }),
    };
    for (const [door, ask] of Object.entries(doors)) {
      const codes: Status[] = [];
      while (!codes.includes(Status.CANCELLED) && codes.length < MAX_TRIES) {
        const before = seen.length;
        await ask();
        expect(seen.length).toBe(before + 1);
        codes.push(seen[before]!.code);
      }
      expect({ door, reset: codes.includes(Status.CANCELLED) }).toEqual({ door, reset: true });
    }
    // Only the two ways the server ends a query at its deadline came back, each with its own words.
    const known = [
      `${Status.CANCELLED} Call cancelled`,
      `${Status.DEADLINE_EXCEEDED} query timed out before a worker could process it`,
    ];
    for (const s of seen) expect(known).toContain(`${s.code} ${s.details}`);
  } finally {
    await racing.close();
    await connection.close();
  }
  expect(errors).toEqual([]);
}, 180_000);
