/**
 * Live tokens end to end, on a real dev server with a worker process publishing to a stream
 * folder (the one-machine channel) and the HTTP API reading it: `run` and `watch` type the answer
 * and the tool calls the model writes as they come; `GET /api/runs/:id/stream` hands the deltas in
 * order, a late joiner the answer so far, and a client that resumes with `Last-Event-ID` after the
 * API restarted mid-stream what it missed, once; a model call's history is the same size in events
 * for a 10-token and a 2,000-token answer; and a worker whose channel is down finishes its runs all
 * the same.
 */
import fs from 'node:fs';
import path from 'node:path';
import { FileStreamChannel } from '../../activities/streaming/file-channel';
import { startApiServer } from '../../server/api/server';
import type { RunningApiServer } from '../../server/api/server';
import type { AgentInput, AgentResult } from '../../shared/agent';
import { startAgentRun } from '../../client/start-run';
import { withDevWorker } from '../../testkit/dev-server';
import { freePort, runCli, startCli } from '../../testkit/processes';
import { tempDir, uid } from '../../testkit/temporal';
import { readSse } from '../../testkit/sse';
import { useDevServer } from '../support/environments';

const streams = tempDir('live-e2e');
const dev = useDevServer({ worker: { DURABLE_AGENT_STREAM: streams }, queue: 'live' });

const words = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `w${from + i}`).join(' ');

function answering(content: string, tokenDelayMs = 0): AgentInput {
  return {
    task: 'say words',
    tools: [],
    model: { provider: 'scripted', turns: [{ content, tokenDelayMs }] },
  };
}

interface Sse {
  event: string;
  id?: string;
  data: Record<string, unknown>;
}

/** Opens the run's stream and hands each event on, its data parsed, until `onEvent` says stop or the stream ends. */
function readStream(
  url: string,
  onEvent: (e: Sse) => boolean | void,
  headers: Record<string, string> = {},
): Promise<void> {
  return readSse(url, (e) => onEvent({ ...e, data: JSON.parse(e.data) as Record<string, unknown> }), {
    headers,
  });
}

const texts = (events: Sse[]) =>
  events.flatMap((e) => (e.event === 'token' && e.data.kind === 'text' ? [e.data.text as string] : []));

let api: RunningApiServer;
beforeAll(async () => {
  api = await startApiServer({
    client: dev.fx.client,
    taskQueue: dev.taskQueue,
    host: '127.0.0.1',
    port: 0,
    webUi: false,
    mcp: false,
    liveTokens: new FileStreamChannel(streams),
  });
  dev.defer(() => api.close());
});

test('run types the answer as it comes, and does not print it twice', async () => {
  const file = path.join(tempDir('live-input'), 'input.json');
  fs.writeFileSync(file, JSON.stringify(answering(words(40), 40)));
  const cli = startCli(dev.env, ['run', '--input', file]);
  // The first words are on screen while the model still answers (40 words, 40 ms apart).
  await cli.waitFor('stdout', '[step 1] w0 w1 w2', 20_000);
  expect(cli.stdout()).not.toContain('w39');
  const code = await cli.exited;
  expect(code).toBe(0);
  const out = cli.stdout();
  expect(out).toContain(`[step 1] ${words(40)}\n`);
  expect(out).toMatch(/\[step 1\] model answered in \d+ ms\n/);
  expect(out.split('w39')).toHaveLength(3); // typed once, and the final answer once
  const plain = await runCli(['run', '--no-stream', '--input', file], dev.env);
  expect(plain.stdout).toMatch(/\[step 1\] model answered in \d+ ms: w0 w1/);
}, 60_000);

test('run types the tool calls the model writes, their arguments as they come', async () => {
  const expression = Array.from({ length: 150 }, () => '1').join('+');
  const args = JSON.stringify({ expression });
  const file = path.join(tempDir('live-tool-input'), 'input.json');
  const input: AgentInput = {
    task: 'add up',
    tools: ['calculator'],
    model: {
      provider: 'scripted',
      turns: [
        // 38 pieces of arguments, 40 ms apart.
        {
          content: 'Adding up.',
          toolCalls: [{ id: 'sum', name: 'calculator', arguments: { expression } }],
          tokenDelayMs: 40,
        },
        { content: 'The sum is {{result:sum}}.' },
      ],
    },
  };
  fs.writeFileSync(file, JSON.stringify(input));
  const cli = startCli(dev.env, ['run', '--input', file]);
  await cli.waitFor('stdout', '[step 1] → calculator {"expression":"1+1', 20_000);
  // The call's head and the start of its arguments are on screen before the model wrote the rest.
  expect(cli.stdout()).not.toContain(args);
  expect(await cli.exited).toBe(0);
  const out = cli.stdout();
  expect(out).toContain(`[step 1] Adding up.\n[step 1] → calculator ${args} (sum)\n`);
  expect(out).toContain('The sum is 150.');
}, 60_000);

test('run prints each step once and in step order, though tokens come before the polled events', async () => {
  // A quick model: each step's answer streams within milliseconds, its events are read every 250 ms.
  const out = (await runCli(['run', '--model', 'scripted:demo', 'Plan my Tokyo trip budget'], dev.env))
    .stdout;
  const steps = [...out.matchAll(/^\[step (\d+)\]/gm)].map((m) => Number(m[1]));
  expect(steps.length).toBeGreaterThan(10);
  expect(steps).toEqual([...steps].sort((a, b) => a - b));
  // Five tool calls, each on one line (typed as the model wrote it, not again as its start event).
  const calls = out.split('\n').filter((l) => / → /.test(l));
  expect(calls.map((l) => /→ (\w+)/.exec(l)?.[1])).toEqual([
    'get_time',
    'calculator',
    'notify_user',
    'calculator',
    'notify_user',
  ]);
  expect(out.match(/model answered in/g)).toHaveLength(3);
}, 60_000);

test('the stream: deltas in order, then the run’s events and the end', async () => {
  const id = uid('live');
  // A first step that waits, so the client is there before the answer streams.
  const input: AgentInput = {
    task: 'wait, then say words',
    tools: ['wait'],
    model: {
      provider: 'scripted',
      turns: [
        { toolCalls: [{ id: 'w', name: 'wait', arguments: { seconds: 1 } }] },
        { content: words(30), tokenDelayMs: 10 },
      ],
    },
  };
  await startAgentRun(dev.fx.client, input, { workflowId: id, taskQueue: dev.taskQueue });
  const got: Sse[] = [];
  await readStream(`${api.url}/api/runs/${encodeURIComponent(id)}/stream`, (e) => {
    got.push(e);
    return e.event === 'end';
  });
  expect(got.some((e) => e.event === 'partial')).toBe(false);
  expect(texts(got).join('')).toBe(words(30));
  // Each call's frames in order, from its start (step 1's tool call, if it streamed after the
  // client came, and step 2's answer).
  const tokens = got.filter((e) => e.event === 'token');
  const calls = [...new Set(tokens.map((e) => `${e.data.call}.${e.data.attempt}`))];
  expect(tokens.at(-1)?.data).toMatchObject({ step: 2, kind: 'end' });
  for (const call of calls) {
    const seqs = tokens.filter((e) => `${e.data.call}.${e.data.attempt}` === call).map((e) => e.data.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i));
  }
  expect(got.some((e) => e.event === 'run' && e.data.kind === 'final_answer')).toBe(true);
  expect(got.at(-1)).toMatchObject({ event: 'end', data: { status: 'COMPLETED' } });
}, 60_000);

test('a late joiner gets the answer so far in one event; after the API restarts mid-stream, a client resuming with Last-Event-ID gets the rest once', async () => {
  const id = uid('live');
  const content = words(80);
  await startAgentRun(dev.fx.client, answering(content, 30), { workflowId: id, taskQueue: dev.taskQueue });
  // This test's own API, on a port it starts again on.
  const port = await freePort();
  const startApi = () =>
    startApiServer({
      client: dev.fx.client,
      taskQueue: dev.taskQueue,
      host: '127.0.0.1',
      port,
      webUi: false,
      mcp: false,
      liveTokens: new FileStreamChannel(streams),
    });
  const url = `http://127.0.0.1:${port}/api/runs/${encodeURIComponent(id)}/stream`;
  const first = await startApi();
  let restarted: RunningApiServer | undefined;
  try {
    // Joins late: the first event is the answer so far, then the deltas after it.
    await new Promise((r) => setTimeout(r, 1200));
    const before: Sse[] = [];
    // Read until the API goes away under the client (the stream breaks or ends).
    const reading = readStream(url, (e) => void before.push(e)).catch((err: unknown) => err);
    for (let i = 0; texts(before).length < 5; i++) {
      if (i > 200) throw new Error(`too few deltas before the restart: ${JSON.stringify(before)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await first.close();
    await reading;
    const partial = before.find((e) => e.event === 'partial');
    expect(partial).toBeDefined();
    expect(before.findIndex((e) => e.event === 'partial')).toBeLessThan(
      before.findIndex((e) => e.event === 'token'),
    );
    const sofar = (partial?.data.text as string) + texts(before).join('');
    expect(content.startsWith(sofar)).toBe(true);
    // The restart came mid-answer: the answer was not whole yet.
    expect(sofar.length).toBeLessThan(content.length);
    expect(before.some((e) => e.event === 'end')).toBe(false);
    const lastId = before.at(-1)?.id as string;

    // The API starts again at the same address; the client resumes from the last id it saw.
    restarted = await startApi();
    const rest: Sse[] = [];
    await readStream(
      url,
      (e) => {
        rest.push(e);
        return e.event === 'end';
      },
      { 'Last-Event-ID': lastId },
    );
    expect(rest.some((e) => e.event === 'partial')).toBe(false);
    // Only what was missed, once: together the whole answer, nothing twice.
    expect(sofar + texts(rest).join('')).toBe(content);
    const seen = before.filter((e) => e.event === 'run').map((e) => e.data.seq);
    expect(rest.filter((e) => e.event === 'run' && seen.includes(e.data.seq))).toEqual([]);
    expect(rest.at(-1)).toMatchObject({ event: 'end', data: { status: 'COMPLETED' } });
  } finally {
    await first.close().catch(() => undefined);
    await restarted?.close();
  }
}, 60_000);

test('watch types a running answer from where it is, then the rest', async () => {
  const id = uid('live');
  await startAgentRun(dev.fx.client, answering(words(60), 40), { workflowId: id, taskQueue: dev.taskQueue });
  await new Promise((r) => setTimeout(r, 800));
  const out = await runCli(['watch', id], dev.env);
  expect(out.code).toBe(0);
  expect(out.stdout).toContain(`Watching ${id} (RUNNING)`);
  // The answer so far and the rest, typed on one line: w0 … w59.
  expect(out.stdout).toContain(`[step 1] ${words(60)}\n`);
}, 60_000);

test('a model call’s history has as many events for a 2,000-token answer as for a 10-token one', async () => {
  const events: number[] = [];
  for (const n of [10, 2000]) {
    const id = uid('live-size');
    const handle = await startAgentRun(dev.fx.client, answering(words(n)), {
      workflowId: id,
      taskQueue: dev.taskQueue,
    });
    const result = (await handle.result()) as AgentResult;
    expect(result.answer).toBe(words(n));
    // The deltas went out: the stream folder has this run's frames.
    expect(fs.readFileSync(path.join(streams, `${encodeURIComponent(id)}.jsonl`), 'utf8')).toContain(
      '"kind":"end"',
    );
    events.push((await handle.fetchHistory()).events?.length ?? 0);
  }
  expect(events[0]).toBe(events[1]);
}, 60_000);

test('a worker whose channel is down finishes its runs all the same', async () => {
  const blocked = path.join(tempDir('live-down'), 'file');
  fs.writeFileSync(blocked, 'not a folder');
  await withDevWorker(
    dev.fx,
    async (taskQueue) => {
      const handle = await startAgentRun(dev.fx.client, answering(words(20)), {
        workflowId: uid('live-down'),
        taskQueue,
      });
      expect(((await handle.result()) as AgentResult).answer).toBe(words(20));
    },
    { stream: { kind: 'file', dir: blocked } },
  );
}, 60_000);
