/**
 * Over-budget and flood input at every door of the notifications contract, on a real dev server and
 * a worker process: the `notify` update (validator), the `notify` signal (dropped, logged without the
 * value), the HTTP API (400 naming the field, 429 per target, pages, 503 without a worker or server),
 * the CLI, and the notify_user tool. Nothing over budget is sent or stored, nothing else is lost.
 */
import { Client, Connection, WorkflowUpdateFailedError } from '@temporalio/client';
import { createNotificationActivities } from '../../activities/notifications';
import { startApiServer } from '../../server/api/server';
import type { RunningApiServer } from '../../server/api/server';
import { createRateLimiter } from '../../server/api/rate-limit';
import {
  inboxWorkflowId,
  notificationsQuery,
  notifySignal,
  notifyUpdate,
} from '../../shared/notifications/messages';
import { freePort, runCli } from '../../testkit/processes';
import { uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

/** 50,000 CJK characters: inside the 50,000-character limit, 146.5 KiB of UTF-8. */
const HUGE_DETAIL = `SECRET-MARKER-${'界'.repeat(50_000 - 14)}`;
const DETAIL_ERROR = 'detail is 146.5 KiB (UTF-8), over its budget of 64 KiB';

const dev = useDevServer({ worker: true, queue: 'doors' });
const { taskQueue } = dev;
let api: RunningApiServer;
const errors: string[] = [];

beforeAll(async () => {
  api = await startApiServer({
    client: dev.fx.client,
    taskQueue,
    host: '127.0.0.1',
    port: 0,
    rateLimit: { burst: 3, perSecond: 0.5 },
    logError: (m) => errors.push(m),
  });
  dev.defer(() => api.close());
});

async function call(method: string, path: string, body?: unknown, base = api.url) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body !== undefined ? { 'content-type': 'application/json' } : {},
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

const q = (target: string, extra = '') => `/api/notifications?target=${encodeURIComponent(target)}${extra}`;

test('the notify update refuses over-budget input in its validator: the caller gets the error, history gets nothing', async () => {
  const target = inboxWorkflowId(uid('update'));
  const h = await dev.fx.client.workflow.start('inboxWorkflow', {
    workflowId: target,
    taskQueue,
    args: [{}],
  });
  const ok = await h.executeUpdate(notifyUpdate, { args: [{ message: 'kept', id: 'k' }] });
  expect(ok).toMatchObject({ id: 'k', no: 0, created: true, update: 1, count: 1, evicted: 0 });

  const refused = await h
    .executeUpdate(notifyUpdate, { args: [{ message: 'x', detail: HUGE_DETAIL }] })
    .catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
  expect((refused as WorkflowUpdateFailedError).cause?.message).toBe(DETAIL_ERROR);

  const after = await h.query(notificationsQuery);
  expect(after).toMatchObject({ count: 1, update: 1 });
  const history = await h.fetchHistory();
  const accepted = (history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes);
  expect(accepted).toHaveLength(1);
  // The refused value never reached history.
  expect(JSON.stringify(history)).not.toContain('SECRET-MARKER');
});

test('an over-budget notify signal is dropped and logged by field, without the value', async () => {
  const target = inboxWorkflowId(uid('signal'));
  const h = await dev.fx.client.workflow.start('inboxWorkflow', {
    workflowId: target,
    taskQueue,
    args: [{}],
  });
  await h.signal(notifySignal, { message: 'x', detail: HUGE_DETAIL });
  await h.signal(notifySignal, { message: 'after' });
  const list = await h.query(notificationsQuery);
  expect(list.notifications.map((n) => n.message)).toEqual(['after']);
  const deadline = Date.now() + 20_000;
  const dropped = () => dev.worker.lines.find((l) => String(l.msg).startsWith('notify signal dropped'));
  while (!dropped() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(dropped()).toMatchObject({ fields: ['detail'] });
  expect(JSON.stringify(dev.worker.lines)).not.toContain('SECRET-MARKER');
  const history = await h.fetchHistory();
  expect((history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
});

test('HTTP: 400 naming the field, its size and the budget; nothing created', async () => {
  const target = inboxWorkflowId(uid('http-budget'));
  const res = await call('POST', '/api/notifications', { target, message: 'x', detail: HUGE_DETAIL });
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ error: DETAIL_ERROR, issues: [{ field: 'detail', message: DETAIL_ERROR }] });
  await expect(dev.fx.client.workflow.getHandle(target).describe()).rejects.toThrow(/not found/i);
});

test('HTTP: changes per target are rate limited with 429 and Retry-After; other targets are not', async () => {
  const target = inboxWorkflowId(uid('rate'));
  const other = inboxWorkflowId(uid('rate-other'));
  for (let i = 0; i < 3; i++) {
    expect((await call('POST', '/api/notifications', { target, message: `m${i}` })).status).toBe(202);
  }
  const limited = await call('POST', '/api/notifications', { target, message: 'one too many' });
  expect(limited.status).toBe(429);
  expect(limited.body).toMatchObject({ code: 'rate_limited' });
  expect(limited.body.error).toMatch(/limit is 3 at once and 0.5 per second; retry in 2 s/);
  expect(limited.headers.get('retry-after')).toBe('2');
  expect((await call('POST', '/api/notifications', { target: other, message: 'fine' })).status).toBe(202);
  // The refused one was not sent.
  expect((await call('GET', q(target))).body).toMatchObject({ count: 3 });
});

test('the rate limiter refills at its rate', () => {
  let now = 0;
  const limiter = createRateLimiter({ burst: 2, perSecond: 4 }, () => now);
  expect([limiter.take('a'), limiter.take('a'), limiter.take('a')]).toEqual([0, 0, 250]);
  now = 250;
  expect(limiter.take('a')).toBe(0);
  expect(limiter.take('b')).toBe(0);
  expect(() => createRateLimiter({ burst: 0, perSecond: 1 })).toThrow(/burst ≥ 1/);
});

test('HTTP and queries: pages with limit/before say when they are truncated', async () => {
  const target = inboxWorkflowId(uid('pages'));
  const h = await dev.fx.client.workflow.start('inboxWorkflow', {
    workflowId: target,
    taskQueue,
    args: [{}],
  });
  for (let i = 0; i < 5; i++)
    await h.executeUpdate(notifyUpdate, { args: [{ message: `n${i}`, id: `n${i}` }] });
  const first = await call('GET', q(target, '&limit=2'));
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({ count: 5, truncated: true, before: 3 });
  expect((first.body.notifications as { id: string }[]).map((n) => n.id)).toEqual(['n3', 'n4']);
  const second = await call('GET', q(target, '&limit=2&before=3'));
  expect((second.body.notifications as { id: string }[]).map((n) => n.id)).toEqual(['n1', 'n2']);
  const whole = await h.query(notificationsQuery);
  expect(whole).toMatchObject({ count: 5, truncated: false });
  expect(whole).not.toHaveProperty('before');
  const bad = await call('GET', q(target, '&limit=0'));
  expect(bad.status).toBe(400);
  expect(bad.body.issues).toEqual([{ field: 'limit', message: 'limit must be a whole number ≥ 1' }]);
});

test('HTTP tells "no such inbox", "no worker" and "server unreachable" apart', async () => {
  const missing = await call('GET', q(inboxWorkflowId(uid('missing'))));
  expect(missing).toMatchObject({ status: 404, body: { code: 'not_found' } });

  // A workflow on a queue no worker polls: the query cannot be answered.
  const orphan = inboxWorkflowId(uid('orphan'));
  await dev.fx.client.workflow.start('inboxWorkflow', {
    workflowId: orphan,
    taskQueue: uid('nobody'),
    args: [{}],
  });
  const deadPort = await freePort();
  const deadClient = new Client({ connection: Connection.lazy({ address: `127.0.0.1:${deadPort}` }) });
  const offline = await startApiServer({ client: deadClient, taskQueue, host: '127.0.0.1', port: 0 });
  try {
    // Both wait out a deadline (the query's, the connection's retries): asked at once, not in turn.
    const [noWorker, unreachable] = await Promise.all([
      call('GET', q(orphan)),
      call('GET', q(orphan), undefined, offline.url),
    ]);
    expect(noWorker).toMatchObject({ status: 503, body: { code: 'no_worker' } });
    expect(noWorker.body.error).toMatch(/No worker answered/);
    expect(noWorker.headers.get('retry-after')).toBe('5');
    expect(unreachable).toMatchObject({ status: 503, body: { code: 'unreachable' } });
  } finally {
    await offline.close();
    await deadClient.connection.close();
  }
  expect(errors).toEqual([]);
}, 120_000);

test('CLI: an over-budget field exits 1 with the message and sends nothing', async () => {
  const target = inboxWorkflowId(uid('cli-budget'));
  const out = await runCli(['notify', target, 'x', '--detail', '界'.repeat(30_000)], {
    TEMPORAL_ADDRESS: dev.fx.address,
    DURABLE_AGENT_TASK_QUEUE: taskQueue,
  });
  expect(out.code).toBe(1);
  expect(out.stderr).toContain('detail is 87.9 KiB (UTF-8), over its budget of 64 KiB');
  await expect(dev.fx.client.workflow.getHandle(target).describe()).rejects.toThrow(/not found/i);
}, 120_000);

test('notify_user tool: an over-budget field goes back to the model as an error; nothing is delivered', async () => {
  const { notify_user } = createNotificationActivities({});
  const result = await notify_user({
    args: { message: 'x', detail: HUGE_DETAIL },
    toolCallId: 'c1',
  });
  expect(result).toEqual({ content: DETAIL_ERROR, isError: true });
});
