/**
 * The notifications HTTP API against a real dev server and a worker process: auth, create, history,
 * incremental sync, mark read, the live SSE stream, unknown targets, bind refusal, the `api` command,
 * and bad input through this door.
 */
import { spawn } from 'node:child_process';
import type { WorkflowHandle } from '@temporalio/client';
import { DEFAULT_RATE_LIMIT } from '../../server/api/app';
import { ApiConfigError, loadApiConfig, startApiServer } from '../../server/api/server';
import type { RunningApiServer } from '../../server/api/server';
import { inboxWorkflowId } from '../../shared/notifications/messages';
import type { Notification } from '../../shared/notifications/schema';
import { runCli } from '../../testkit/processes';
import { CLI, uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const TOKEN = 'test-token-0123456789abcdef';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const dev = useDevServer({ worker: true, queue: 'api' });
const { taskQueue } = dev;
let api: RunningApiServer;
const errors: string[] = [];

beforeAll(async () => {
  api = await startApiServer({
    client: dev.fx.client,
    taskQueue,
    host: '127.0.0.1',
    port: 0,
    token: TOKEN,
    pollIntervalMs: 100,
    heartbeatMs: 300,
    logError: (m) => errors.push(m),
  });
  dev.defer(() => api.close());
});

afterEach(() => {
  // No request in these tests should hit an unexpected server error.
  expect(errors).toEqual([]);
});

/** A response body: known keys typed, the rest checked by matchers. */
interface Json {
  error?: string;
  issues?: { field: string; message: string }[];
  notifications?: Notification[];
  [key: string]: unknown;
}

async function call(method: string, path: string, body?: unknown, token: string | null = TOKEN) {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: {
      ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Json, headers: res.headers };
}

const q = (target: string, extra = '') => `/api/notifications?target=${encodeURIComponent(target)}${extra}`;

async function noWorkflowTaskFailures(handle: WorkflowHandle): Promise<void> {
  const history = await handle.fetchHistory();
  expect((history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
}

test('a bearer token guards /api/*; /healthz stays open', async () => {
  const target = inboxWorkflowId(uid('auth'));
  expect(await call('GET', '/healthz', undefined, null)).toMatchObject({
    status: 200,
    body: { status: 'ok', openStreams: 0 },
  });
  const none = await call('GET', q(target), undefined, null);
  expect(none.status).toBe(401);
  expect(none.body.error).toMatch(/Missing or invalid bearer token/);
  expect(none.headers.get('www-authenticate')).toBe('Bearer');
  expect((await call('GET', q(target), undefined, `${TOKEN}x`)).status).toBe(401);
  expect((await call('POST', '/api/notifications', { target, message: 'x' }, 'short')).status).toBe(401);
  // Refused before anything was sent: the inbox was never created.
  await expect(dev.fx.client.workflow.getHandle(target).describe()).rejects.toThrow(/not found/i);
});

test('create (API defaults, uuid assigned), history, incremental since, mark read', async () => {
  const target = inboxWorkflowId(uid('api-user'));
  const created = await call('POST', '/api/notifications', {
    target,
    message: 'Report ready',
    title: 'Reports',
  });
  expect(created.status).toBe(202);
  expect(created.body.target).toBe(target);
  expect(created.body.id).toMatch(UUID_V4);
  const second = await call('POST', '/api/notifications', {
    target,
    message: 'Quota at 90%',
    type: 'warning',
    priority: '20',
    display_time: -4,
    id: 'quota',
    detail: '<i>soon</i>',
  });
  expect(second).toMatchObject({ status: 202, body: { id: 'quota', target } });

  const history = await call('GET', q(target));
  expect(history.status).toBe(200);
  expect(history.body).toMatchObject({ target, count: 2, unread: 2, update: 2, evicted: 0 });
  expect(history.body.notifications).toEqual([
    expect.objectContaining({
      no: 0,
      id: created.body.id,
      type: 'info',
      priority: 10,
      display_time: 3,
      title: 'Reports',
      read: false,
    }),
    expect.objectContaining({
      no: 1,
      id: 'quota',
      type: 'warning',
      priority: 20,
      display_time: 3,
      detail: '<i>soon</i>',
    }),
  ]);
  const { guid, update } = history.body;

  const read = await call('POST', '/api/notifications/read', { target, ids: ['quota'] });
  expect(read).toMatchObject({ status: 202, body: { target, unread: 1 } });
  expect((await call('POST', '/api/notifications', { target, message: 'Third' })).status).toBe(202);

  const since = await call('GET', q(target, `&since=${update}&guid=${guid}`));
  expect(since.status).toBe(200);
  expect(since.body).toMatchObject({ target, guid, reset: false, update: 4, count: 3 });
  expect(since.body.notifications!.map((n) => [n.no, n.id, n.read])).toEqual([
    [1, 'quota', true],
    [2, expect.stringMatching(UUID_V4), false],
  ]);
  // A stale guid (as after a clear) asks the client to replace its list.
  const stale = await call('GET', q(target, `&since=${update}&guid=not-the-guid`));
  expect(stale.body).toMatchObject({ reset: true, count: 3 });

  expect(await call('POST', '/api/notifications/read', { target, all: true })).toMatchObject({
    status: 202,
    body: { unread: 0 },
  });
  await noWorkflowTaskFailures(dev.fx.client.workflow.getHandle(target));
});

test('an unknown target is a 404 with a clear message on every route', async () => {
  const run = uid('no-such-run');
  const expected = new RegExp(`No run with id "${run}" in this namespace`);
  for (const res of [
    await call('GET', q(run)),
    await call('POST', '/api/notifications', { target: run, message: 'hi' }),
    await call('POST', '/api/notifications/read', { target: run, all: true }),
    await call('GET', `/api/notifications/stream?target=${run}`),
  ]) {
    expect(res.status).toBe(404);
    expect(res.body.error).toMatch(expected);
  }
  const inbox = await call('GET', q('inbox:never-notified'));
  expect(inbox).toMatchObject({
    status: 404,
    body: { error: 'No inbox for user "never-notified" yet: an inbox is created by its first notification' },
  });
  expect((await call('GET', '/api/nothing-here')).status).toBe(404);
});

/** Reads SSE events from a fetch body as they arrive. */
function sseReader(body: ReadableStream<Uint8Array>) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let comments = 0;
  const next = async (): Promise<{ event: string; data: Json }> => {
    for (;;) {
      const end = buffered.indexOf('\n\n');
      if (end >= 0) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const lines = block.split('\n');
        if (lines.every((l) => l.startsWith(':'))) {
          comments += 1;
          continue;
        }
        const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message';
        const data = lines
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n');
        return { event, data: JSON.parse(data) as Json };
      }
      const chunk = await reader.read();
      if (chunk.done) throw new Error('stream ended');
      buffered += decoder.decode(chunk.value, { stream: true });
    }
  };
  return { next, comments: () => comments, cancel: () => reader.cancel() };
}

test('the SSE stream sends a snapshot, then live changes, heartbeats, and a reset after a clear', async () => {
  const target = inboxWorkflowId(uid('sse'));
  expect((await call('POST', '/api/notifications', { target, message: 'before', id: 'before' })).status).toBe(
    202,
  );
  const abort = new AbortController();
  const res = await fetch(`${api.url}/api/notifications/stream?target=${encodeURIComponent(target)}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
    signal: abort.signal,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const sse = sseReader(res.body!);
  try {
    const snapshot = await sse.next();
    expect(snapshot.event).toBe('snapshot');
    expect(snapshot.data).toMatchObject({ target, count: 1, unread: 1 });
    expect(snapshot.data.notifications![0]).toMatchObject({ id: 'before', no: 0 });

    expect(
      (await call('POST', '/api/notifications', { target, message: 'live one', id: 'live', type: 'success' }))
        .status,
    ).toBe(202);
    const live = await sse.next();
    expect(live.event).toBe('changes');
    expect(live.data).toMatchObject({ guid: snapshot.data.guid, count: 2, dropped: 0, updated: [] });
    expect(live.data.added).toEqual([
      expect.objectContaining({ no: 1, id: 'live', message: 'live one', type: 'success' }),
    ]);

    await call('POST', '/api/notifications/read', { target, ids: ['before'] });
    const read = await sse.next();
    expect(read.data).toMatchObject({
      added: [],
      updated: [expect.objectContaining({ id: 'before', read: true })],
    });

    // Quiet for longer than the heartbeat interval: comments keep the connection alive.
    await new Promise((r) => setTimeout(r, 800));
    await dev.fx.client.workflow.getHandle(target).signal('clearNotifications');
    const reset = await sse.next();
    expect(reset.event).toBe('reset');
    expect(reset.data).toMatchObject({ count: 0, notifications: [] });
    expect(reset.data.guid).not.toBe(snapshot.data.guid);
    expect(sse.comments()).toBeGreaterThan(0);
    expect((await call('GET', '/healthz')).body.openStreams).toBe(1);
  } finally {
    abort.abort();
  }
  // The server noticed the disconnect and ended the stream's polling loop.
  const deadline = Date.now() + 5000;
  while ((await call('GET', '/healthz')).body.openStreams !== 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  expect((await call('GET', '/healthz')).body.openStreams).toBe(0);
});

test('a stream opened with since resumes with what changed after that update, or a reset for another guid', async () => {
  const target = inboxWorkflowId(uid('resume'));
  await call('POST', '/api/notifications', { target, message: 'seen', id: 'seen' });
  const seen = (await call('GET', q(target))).body;
  await call('POST', '/api/notifications', { target, message: 'missed', id: 'missed' });
  const open = async (query: string) => {
    const abort = new AbortController();
    const res = await fetch(
      `${api.url}/api/notifications/stream?target=${encodeURIComponent(target)}${query}`,
      {
        headers: { authorization: `Bearer ${TOKEN}` },
        signal: abort.signal,
      },
    );
    expect(res.status).toBe(200);
    try {
      return await sseReader(res.body!).next();
    } finally {
      abort.abort();
    }
  };
  const resumed = await open(`&since=${seen.update}&guid=${seen.guid}`);
  expect(resumed.event).toBe('resume');
  expect(resumed.data).toMatchObject({ target, guid: seen.guid, reset: false, count: 2, evicted: 0 });
  expect(resumed.data.notifications).toEqual([expect.objectContaining({ id: 'missed', no: 1 })]);
  const otherList = await open(`&since=${seen.update}&guid=not-this-list`);
  expect(otherList.data).toMatchObject({ reset: true, count: 2 });
  const bad = await call('GET', `/api/notifications/stream?target=${encodeURIComponent(target)}&limit=3`);
  expect(bad.status).toBe(400);
  expect(bad.body.issues).toEqual([
    { field: 'limit', message: 'a stream takes since and guid, not limit or before' },
  ]);
});

test('refuses to bind a non-loopback address without a token; a weak token is refused without echoing it', async () => {
  await expect(
    startApiServer({ client: dev.fx.client, taskQueue, host: '0.0.0.0', port: 0 }),
  ).rejects.toThrow(
    new ApiConfigError(
      'Refusing to bind 0.0.0.0 without a token: set DURABLE_AGENT_API_TOKEN, or bind 127.0.0.1',
    ),
  );
  await expect(startApiServer({ client: dev.fx.client, taskQueue, host: '::', port: 0 })).rejects.toThrow(
    /Refusing to bind ::/,
  );
  const open = await startApiServer({
    client: dev.fx.client,
    taskQueue,
    host: '0.0.0.0',
    port: 0,
    token: TOKEN,
  });
  await open.close();

  expect(() => loadApiConfig({ DURABLE_AGENT_API_TOKEN: 'hunter2' })).toThrow(
    /DURABLE_AGENT_API_TOKEN: must be at least 16 characters/,
  );
  expect(() => loadApiConfig({ DURABLE_AGENT_API_TOKEN: 'hunter2' })).not.toThrow(/hunter2/);
  expect(loadApiConfig({})).toEqual({ corsOrigins: [], rateLimit: DEFAULT_RATE_LIMIT });

  const refused = await runCli(['api', '--host', '0.0.0.0', '--port', '0'], {
    TEMPORAL_ADDRESS: dev.fx.address,
    DURABLE_AGENT_API_TOKEN: '',
  });
  expect(refused.code).toBe(1);
  expect(refused.stderr.trim()).toBe(
    'error: Refusing to bind 0.0.0.0 without a token: set DURABLE_AGENT_API_TOKEN, or bind 127.0.0.1',
  );
});

test('`durable-agent api` serves the API with the token from the environment and stops on SIGTERM', async () => {
  const child = spawn(CLI[0]!, [CLI[1]!, 'api', '--port', '0'], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: dev.fx.address,
      DURABLE_AGENT_TASK_QUEUE: taskQueue,
      DURABLE_AGENT_API_TOKEN: TOKEN,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const deadline = Date.now() + 30_000;
    while (!/listening on (http:\S+)/.test(out) && Date.now() < deadline && child.exitCode === null) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const url = /listening on (http:\S+)/.exec(out)?.[1];
    expect(out).toMatch(/\(bearer token required\)/);
    const target = inboxWorkflowId(uid('cmd'));
    const post = await fetch(`${url}/api/notifications`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ target, message: 'via the command' }),
    });
    expect(post.status).toBe(202);
    expect((await fetch(`${url}/api/notifications?target=${target}`)).status).toBe(401);
    const h = await dev.fx.client.workflow.getHandle(target).query('notifications');
    expect(h).toMatchObject({
      count: 1,
      notifications: [expect.objectContaining({ message: 'via the command' })],
    });
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited).toBe(0);
  // The token is a secret: it never appears in the output.
  expect(out).not.toContain(TOKEN);
}, 60_000);

test('bad input through the HTTP door: 400 with field-level issues, nothing created, nothing lost', async () => {
  const target = inboxWorkflowId(uid('bad-http'));
  expect((await call('POST', '/api/notifications', { target, message: 'keep me', id: 'keep' })).status).toBe(
    202,
  );
  const before = await call('GET', q(target));

  const cases: [unknown, string, { field: string; message: string }[]][] = [
    [
      { target, message: 'x', type: 'critical' },
      'Invalid notification type: critical',
      [{ field: 'type', message: 'Invalid notification type: critical' }],
    ],
    [
      { target, message: 'x', priority: 15 },
      'Invalid notification priority: 15',
      [{ field: 'priority', message: 'Invalid notification priority: 15' }],
    ],
    [
      { target, message: '', type: 'nope', priority: 15 },
      'Invalid notification type: nope',
      [{ field: 'type', message: 'Invalid notification type: nope' }],
    ],
    [{ target, message: '' }, 'Message is required', [{ field: 'message', message: 'Message is required' }]],
    [
      { target, message: '  ' },
      'Message is required',
      [{ field: 'message', message: 'Message is required' }],
    ],
    [{ target }, 'Message is required', [{ field: 'message', message: 'Message is required' }]],
    [
      { target, message: 42 },
      'message must be a string',
      [{ field: 'message', message: 'message must be a string' }],
    ],
    [
      { target, message: 'x', priority: [20] },
      'Invalid notification priority: [20]',
      [{ field: 'priority', message: 'Invalid notification priority: [20]' }],
    ],
    [
      { target, message: 'x', title: ['a'], group: 7 },
      'title must be a string; group must be a string',
      [
        { field: 'title', message: 'title must be a string' },
        { field: 'group', message: 'group must be a string' },
      ],
    ],
    [
      { target, message: 'x', detail: 'd'.repeat(50_001) },
      'detail must be at most 50000 characters',
      [{ field: 'detail', message: 'detail must be at most 50000 characters' }],
    ],
    [
      { target, message: 'x', displayTime: 5 },
      'unknown field displayTime',
      [{ field: 'displayTime', message: 'unknown field displayTime' }],
    ],
    [
      { message: 'x' },
      'target is required: a run id or inbox:<user>',
      [{ field: 'target', message: 'target is required: a run id or inbox:<user>' }],
    ],
    [
      { target: 5, message: 'x' },
      'target must be a string: a run id or inbox:<user>',
      [{ field: 'target', message: 'target must be a string: a run id or inbox:<user>' }],
    ],
    [
      '{not json',
      'body must be JSON (Content-Type: application/json)',
      [{ field: '(body)', message: 'body must be JSON (Content-Type: application/json)' }],
    ],
    [
      [{ target, message: 'x' }],
      'body must be a JSON object',
      [{ field: '(body)', message: 'body must be a JSON object' }],
    ],
  ];
  for (const [body, error, issues] of cases) {
    const res = await call('POST', '/api/notifications', body);
    expect([res.status, res.body]).toEqual([400, { error, issues }]);
  }
  const huge = await call('POST', '/api/notifications', {
    target,
    message: 'x',
    detail: 'd'.repeat(600_000),
  });
  expect(huge.status).toBe(413);

  const readCases: [unknown, string][] = [
    [{ target, ids: 'keep' }, 'ids'],
    [{ target }, '(body)'],
    [{ target, ids: ['keep'], all: true }, '(body)'],
    [{ target, all: true, everything: true }, 'everything'],
    [{ all: true }, 'target'],
  ];
  for (const [body, field] of readCases) {
    const res = await call('POST', '/api/notifications/read', body);
    expect(res.status).toBe(400);
    expect(res.body.issues!.map((i) => i.field)).toContain(field);
  }
  for (const query of ['&since=abc', '&since=-1', '&guid=g']) {
    const res = await call('GET', q(target, query));
    expect(res.status).toBe(400);
    expect(res.body.issues![0]!.field).toBe(query.includes('since') ? 'since' : 'guid');
  }
  expect((await call('GET', '/api/notifications')).body.issues).toEqual([
    { field: 'target', message: 'target is required: a run id or inbox:<user>' },
  ]);

  // Nothing created and nothing lost: the list, its read flags and its update number are as before.
  expect((await call('GET', q(target))).body).toEqual(before.body);
  await noWorkflowTaskFailures(dev.fx.client.workflow.getHandle(target));
});
