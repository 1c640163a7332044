/**
 * Run control over the HTTP API on a real dev server with a worker process: a web app starts a run,
 * sends it a message and cancels it with plain requests, and every refusal (bad input, a taken id,
 * an unknown or finished run, an empty message) is a status and one of the client SDK's codes,
 * with nothing started or changed.
 */
import type { AgentEvent, AgentResult } from '../../shared/agent';
import { startApiServer } from '../../server/api/server';
import type { RunningApiServer } from '../../server/api/server';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const dev = useDevServer({ worker: true, queue: 'run-control' });
let api: RunningApiServer;
const errors: string[] = [];

beforeAll(async () => {
  api = await startApiServer({
    client: dev.fx.client,
    taskQueue: dev.taskQueue,
    host: '127.0.0.1',
    port: 0,
    logError: (m) => errors.push(m),
  });
  dev.defer(() => api.close());
});

afterEach(() => expect(errors).toEqual([]));

interface Json {
  error?: string;
  code?: string;
  workflowId?: string;
  [key: string]: unknown;
}

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: body !== undefined ? { 'content-type': 'application/json' } : {},
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

async function until<T>(what: string, read: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const v = await read();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const events = async (id: string) =>
  (await call('GET', `/api/runs/${encodeURIComponent(id)}/events`)).body.events as AgentEvent[];

test('a run started over HTTP takes a message while it works and answers; a finished run takes no more', async () => {
  const id = uid('http-run');
  const started = await call('POST', '/api/runs', {
    id,
    input: {
      task: 'wait, then answer',
      tools: ['wait'],
      model: {
        provider: 'scripted',
        turns: [callTurn(['wait', { seconds: 3 }, 'w']), answerTurn('done')],
      },
    },
  });
  expect(started).toEqual({
    status: 201,
    body: {
      workflowId: id,
      links: { run: `/api/runs/${id}`, events: `/api/runs/${id}/events`, stream: `/api/runs/${id}/stream` },
    },
  });
  await until('the wait to start', async () =>
    (await events(id)).some((e) => e.kind === 'tool_started') ? true : undefined,
  );
  expect(await call('POST', `/api/runs/${id}/messages`, { text: 'also check the weekend' })).toEqual({
    status: 202,
    body: { workflowId: id, accepted: true },
  });
  const result = (await dev.fx.client.workflow.getHandle(id).result()) as AgentResult;
  expect(result.answer).toBe('done');
  expect((await events(id)).filter((e) => e.kind === 'user_message').map((e) => e.text)).toEqual([
    'also check the weekend',
  ]);

  expect(await call('POST', `/api/runs/${id}/messages`, { text: 'too late' })).toMatchObject({
    status: 409,
    body: { code: 'finished' },
  });
  expect(await call('POST', `/api/runs/${id}/cancel`)).toMatchObject({
    status: 409,
    body: { code: 'finished' },
  });
  // The id is taken: a second start is refused, the first run untouched.
  const again = await call('POST', '/api/runs', {
    id,
    input: { task: 'again', model: { provider: 'scripted', turns: [answerTurn('x')] } },
  });
  expect(again).toMatchObject({ status: 409, body: { code: 'id_taken' } });
  expect(((await dev.fx.client.workflow.getHandle(id).result()) as AgentResult).answer).toBe('done');
}, 120_000);

test('a run cancelled over HTTP stops its running tool and ends cancelled; its state stays readable', async () => {
  const started = await call('POST', '/api/runs', {
    input: {
      task: 'wait long',
      tools: ['wait'],
      model: {
        provider: 'scripted',
        turns: [callTurn(['wait', { seconds: 600 }, 'w']), answerTurn('never')],
      },
    },
  });
  expect(started.status).toBe(201);
  const id = started.body.workflowId as string;
  expect(id).toMatch(/^agent-/);
  await until('the wait to start', async () =>
    (await events(id)).some((e) => e.kind === 'tool_started') ? true : undefined,
  );
  expect(await call('POST', `/api/runs/${id}/cancel`)).toEqual({
    status: 202,
    body: { workflowId: id, cancelling: true },
  });
  const state = await until('the run to end', async () => {
    const r = await call('GET', `/api/runs/${id}`);
    const s = (r.body.state as { status?: string } | undefined)?.status;
    return s === 'cancelled' ? s : undefined;
  });
  expect(state).toBe('cancelled');
}, 120_000);

test('bad requests are refused with what to fix, and nothing starts', async () => {
  const id = uid('http-bad');
  const invalid = await call('POST', '/api/runs', {
    id,
    input: { task: '', model: { provider: 'scripted' } },
  });
  expect(invalid.status).toBe(400);
  expect(invalid.body.code).toBe('invalid_input');
  expect(invalid.body.error).toMatch(/^Invalid run: .*task/);
  expect((await call('GET', `/api/runs/${id}`)).status).toBe(404);

  expect(await call('POST', '/api/runs', '{"input":')).toMatchObject({
    status: 400,
    body: { error: 'body must be JSON (Content-Type: application/json)' },
  });
  expect((await call('POST', '/api/runs', { task: 'no input key' })).status).toBe(400);
  expect(
    await call('POST', '/api/runs', {
      id: ' ',
      input: { task: 't', model: { provider: 'scripted', turns: [answerTurn('x')] } },
    }),
  ).toMatchObject({ status: 400, body: { code: 'invalid_input' } });
  expect(await call('POST', `/api/runs/${uid('nobody')}/messages`, { text: 'hello' })).toMatchObject({
    status: 404,
    body: { code: 'not_found' },
  });
  expect(await call('POST', `/api/runs/${uid('nobody')}/cancel`)).toMatchObject({
    status: 404,
    body: { code: 'not_found' },
  });
  expect(await call('POST', `/api/runs/${uid('nobody')}/messages`, { text: '   ' })).toMatchObject({
    status: 400,
    body: { code: 'invalid_input' },
  });
});
