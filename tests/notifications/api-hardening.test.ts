/**
 * The HTTP API against what a web page can send, on a real dev server: a DNS-rebinding `Host`, a
 * cross-origin "simple request" (`text/plain`, no preflight), `Sec-Fetch-Site`, wrong content
 * types, CORS off by default and an allow-list when configured, the body size limit, and a token
 * that lifts the `Host` check. Each refusal is checked to have created nothing.
 */
import http from 'node:http';
import { WorkflowNotFoundError } from '@temporalio/client';
import { DEFAULT_RATE_LIMIT } from '../../server/api/app';
import { ApiConfigError, loadApiConfig, startApiServer } from '../../server/api/server';
import type { RunningApiServer } from '../../server/api/server';
import { inboxWorkflowId } from '../../shared/notifications/messages';
import { uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const TOKEN = 'hardening-token-0123456789';
const APP_ORIGIN = 'https://app.example';

// Notifications are sent by update, which a worker must accept.
const dev = useDevServer({ worker: true, queue: 'hardening' });
const { taskQueue } = dev;
let open: RunningApiServer;
let allowList: RunningApiServer;
let withToken: RunningApiServer;

beforeAll(async () => {
  const base = { client: dev.fx.client, taskQueue, host: '127.0.0.1', port: 0, logError: () => undefined };
  open = await startApiServer(base);
  allowList = await startApiServer({ ...base, corsOrigins: [APP_ORIGIN] });
  withToken = await startApiServer({ ...base, token: TOKEN });
  dev.defer(() => Promise.all([open, allowList, withToken].map((s) => s.close())));
});

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * A raw request (fetch would not let a test set `Host`), as a browser or an attacker would send it.
 * A 503 `no_worker` (the worker did not answer the update within the door's 10 s, as on a machine
 * running the whole suite) is retried as its Retry-After says, as any client does: these tests are
 * about what the API lets through, and a request it let through reached Temporal.
 */
async function send(
  server: RunningApiServer,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Reply> {
  for (let attempt = 1; ; attempt++) {
    const reply = await sendOnce(server, method, path, headers, body);
    if (reply.status !== 503 || attempt === 3 || !reply.body.includes('"no_worker"')) return reply;
    await new Promise((r) => setTimeout(r, Number(reply.headers['retry-after'] ?? 1) * 1000));
  }
}

function sendOnce(
  server: RunningApiServer,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        method,
        path,
        headers: { host: `127.0.0.1:${server.port}`, ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const create = (user: string) => JSON.stringify({ target: inboxWorkflowId(user), message: 'hello' });

/** Whether the inbox exists: a refused request must not have created it. */
async function inboxExists(user: string): Promise<boolean> {
  try {
    await dev.fx.client.workflow.getHandle(inboxWorkflowId(user)).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

test('without a token, a Host that is not loopback (DNS rebinding) is refused', async () => {
  const user = uid('rebind');
  const json = { 'content-type': 'application/json' };
  for (const host of ['evil.example', `evil.example:${open.port}`, '10.0.0.5', 'localhost.evil.example']) {
    const res = await send(open, 'POST', '/api/notifications', { ...json, host }, create(user));
    expect(res.status).toBe(421);
    expect(JSON.parse(res.body).error).toMatch(/Host must be a loopback name or address/);
  }
  expect((await send(open, 'GET', '/healthz', { host: 'evil.example' })).status).toBe(421);
  expect(await inboxExists(user)).toBe(false);

  for (const host of [`localhost:${open.port}`, `127.0.0.1:${open.port}`, `[::1]:${open.port}`]) {
    const res = await send(open, 'POST', '/api/notifications', { ...json, host }, create(user));
    expect(res.status).toBe(202);
  }
  expect(await inboxExists(user)).toBe(true);
});

test('a cross-origin simple request (text/plain, no preflight) is refused and creates nothing', async () => {
  const user = uid('csrf');
  const evil = { origin: 'https://evil.example', 'content-type': 'text/plain' };
  const created = await send(open, 'POST', '/api/notifications', evil, create(user));
  expect(created.status).toBe(403);
  expect(JSON.parse(created.body).error).toMatch(
    /Cross-origin request refused \(Origin https:\/\/evil\.example/,
  );
  const read = await send(
    open,
    'POST',
    '/api/notifications/read',
    evil,
    JSON.stringify({ target: inboxWorkflowId(user), all: true }),
  );
  expect(read.status).toBe(403);
  // Even with the right content type, and from another port of this machine (same-site).
  const json = { 'content-type': 'application/json' };
  for (const origin of ['https://evil.example', 'http://localhost:3000', 'null']) {
    expect((await send(open, 'POST', '/api/notifications', { ...json, origin }, create(user))).status).toBe(
      403,
    );
  }
  for (const site of ['cross-site', 'same-site']) {
    const res = await send(
      open,
      'POST',
      '/api/notifications',
      { ...json, 'sec-fetch-site': site },
      create(user),
    );
    expect(res.status).toBe(403);
  }
  expect(
    (await send(open, 'GET', `/api/notifications?target=inbox:${user}`, { origin: 'https://evil.example' }))
      .status,
  ).toBe(403);
  expect(await inboxExists(user)).toBe(false);

  // The API's own origin and a request typed in the address bar (Sec-Fetch-Site none) pass.
  const own = { ...json, origin: `http://127.0.0.1:${open.port}`, 'sec-fetch-site': 'same-origin' };
  expect((await send(open, 'POST', '/api/notifications', own, create(user))).status).toBe(202);
  expect(await inboxExists(user)).toBe(true);
});

test('a body must be application/json; other content types get 415', async () => {
  const user = uid('ctype');
  for (const type of [
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    '',
  ]) {
    const res = await send(
      open,
      'POST',
      '/api/notifications',
      type ? { 'content-type': type } : {},
      create(user),
    );
    expect([res.status, JSON.parse(res.body)]).toEqual([
      415,
      { error: 'Content-Type must be application/json' },
    ]);
  }
  expect(await inboxExists(user)).toBe(false);
  const charset = await send(
    open,
    'POST',
    '/api/notifications',
    { 'content-type': 'application/json; charset=utf-8' },
    create(user),
  );
  expect(charset.status).toBe(202);
});

test('CORS is off by default: no allow headers, and a preflight is refused', async () => {
  const res = await send(open, 'GET', '/healthz', {});
  expect(res.status).toBe(200);
  expect(res.headers['access-control-allow-origin']).toBeUndefined();
  const preflight = await send(open, 'OPTIONS', '/api/notifications', {
    origin: APP_ORIGIN,
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'content-type',
  });
  expect(preflight.status).toBe(403);
  expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
});

test('with an allow-list, only listed origins get CORS headers and through', async () => {
  const user = uid('cors');
  const preflight = await send(allowList, 'OPTIONS', '/api/notifications', {
    origin: APP_ORIGIN,
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'content-type',
  });
  expect(preflight.status).toBe(204);
  expect(preflight.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
  expect(preflight.headers['access-control-allow-headers']).toMatch(/Content-Type/);

  const json = { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' };
  const ok = await send(
    allowList,
    'POST',
    '/api/notifications',
    { ...json, origin: APP_ORIGIN },
    create(user),
  );
  expect(ok.status).toBe(202);
  expect(ok.headers['access-control-allow-origin']).toBe(APP_ORIGIN);

  const other = await send(
    allowList,
    'POST',
    '/api/notifications',
    { ...json, origin: 'https://evil.example' },
    create(uid('x')),
  );
  expect(other.status).toBe(403);
  expect(other.headers['access-control-allow-origin']).toBeUndefined();
  // An allow-listed page still cannot send a preflight-free text/plain body.
  const plain = await send(
    allowList,
    'POST',
    '/api/notifications',
    { 'content-type': 'text/plain', origin: APP_ORIGIN },
    create(user),
  );
  expect(plain.status).toBe(415);
});

test('a body over the limit gets 413 before it is read whole', async () => {
  const big = JSON.stringify({
    target: inboxWorkflowId(uid('big')),
    message: 'x',
    detail: 'd'.repeat(600_000),
  });
  const res = await send(open, 'POST', '/api/notifications', { 'content-type': 'application/json' }, big);
  expect(res.status).toBe(413);
  expect(JSON.parse(res.body).error).toMatch(/Body larger than 524288 bytes/);
});

test('with a token the Host check is lifted (as before), but a token is still required', async () => {
  const json = { 'content-type': 'application/json', host: 'agent.internal.example' };
  const user = uid('token');
  expect((await send(withToken, 'POST', '/api/notifications', json, create(user))).status).toBe(401);
  const ok = await send(
    withToken,
    'POST',
    '/api/notifications',
    { ...json, authorization: `Bearer ${TOKEN}` },
    create(user),
  );
  expect(ok.status).toBe(202);
  // Cross-origin pages stay out even with a token in hand.
  const evil = await send(
    withToken,
    'POST',
    '/api/notifications',
    { ...json, authorization: `Bearer ${TOKEN}`, origin: 'https://evil.example' },
    create(user),
  );
  expect(evil.status).toBe(403);
});

test('the allow-list is read from the environment and must hold bare origins', () => {
  expect(
    loadApiConfig({ DURABLE_AGENT_API_CORS_ORIGINS: 'https://a.example, http://localhost:5173/' }),
  ).toEqual({
    corsOrigins: ['https://a.example', 'http://localhost:5173'],
    rateLimit: DEFAULT_RATE_LIMIT,
  });
  for (const bad of ['*', 'https://a.example/app', 'a.example', 'file:///x']) {
    expect(() => loadApiConfig({ DURABLE_AGENT_API_CORS_ORIGINS: bad })).toThrow(ApiConfigError);
    expect(() => loadApiConfig({ DURABLE_AGENT_API_CORS_ORIGINS: bad })).toThrow(
      /is not an origin; write scheme:\/\/host/,
    );
  }
});
