/**
 * Live tokens (activities/streaming): how soon a watcher has a token, and what streaming costs the
 * run's history. On the real dev server with one in-process agent worker and the scripted model,
 * whose answer streams word by word (`--words` words, `--delay` ms apart):
 *
 *  - latency, for each channel (`file`: a .jsonl file per run in a temporary folder; `postgres`: a
 *    table and LISTEN/NOTIFY on the test database): the worker publishes through its own channel
 *    object, and two watchers read through channel objects of their own, as another process would:
 *     (1) `followLiveTokens` on a separate channel object;
 *     (2) `GET /api/runs/:id/stream` (SSE) of an API server with its own channel object, read by
 *         fetch in this process.
 *    A sample is one `text` frame: the time the watcher had it (Date.now()) minus the frame's `at`
 *    (when the worker had the delta; one clock, one process). A frame that merged deltas while a
 *    send was in flight carries the `at` of its first delta, so its sample is the longest of its
 *    words'. A watcher's first frames can come as the answer so far (`partial`, not counted).
 *  - history: the same scripted run with the worker's stream off and on (file), run by run: events
 *    and protobuf bytes of the whole history per model call (testkit/history.ts historyBytes), and
 *    the event types in order. Bytes are compared without event times, task ids, the history size
 *    a workflow task started at and the times in local activities' markers: their values differ
 *    from run to run, and with them, by a byte or two, their size, streaming or not. The ids that
 *    differ too (workflow, run, task queue, request) do so in value only, never in size.
 *
 * Everything runs in one process (worker, watchers, API and its client), so the figures include
 * their contention for one event loop (separate processes would not share it). Runs after
 * unrecorded warm-up runs, one at a time.
 *
 *   npx tsx bench/streaming.ts [--runs 5] [--warm-up 1] [--words 200] [--delay 10]
 */
import fs from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import type { temporal } from '@temporalio/proto';
import type { StreamChannel, StreamConfig } from '../activities/streaming';
import { closeStreamChannels } from '../activities/streaming';
import { FileStreamChannel } from '../activities/streaming/file-channel';
import { PostgresStreamChannel } from '../activities/streaming/postgres-channel';
import { followLiveTokens } from '../client/live-tokens';
import { startAgentRun } from '../client/start-run';
import type { RunningApiServer } from '../server/api/server';
import { startApiServer } from '../server/api/server';
import type { History } from '../client/debug/history';
import type { AgentInput, AgentResult } from '../shared/agent';
import type { DevServerFixture } from '../testkit/dev-server';
import { startDevServerFixture, withDevWorker } from '../testkit/dev-server';
import { historyBytes, scheduledActivityTypes } from '../testkit/history';
import { PG_URL } from '../testkit/sql-fixtures';
import { tempDir, uid } from '../testkit/temporal';
import { readSse } from '../testkit/sse';
import { percentile, summary } from './stats';

function count(name: string, min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min)
      throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}`);
    return n;
  };
}

interface Options {
  runs: number;
  warmUp: number;
  words: number;
  delay: number;
}

/** Goal of the issue: a watcher has a token this soon after the worker had it, p50. */
const GOAL_P50_MS = 50;

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');

const input = (o: Options): AgentInput => ({
  task: 'say words',
  tools: [],
  model: { provider: 'scripted', turns: [{ content: words(o.words), tokenDelayMs: o.delay }] },
});

/** What one channel's runs measured. */
interface Lane {
  /** followLiveTokens on a separate channel object: ms per text frame. */
  follow: number[];
  /** The SSE route: ms per text frame. */
  sse: number[];
  /** Text frames per run, and words per run (frames < words when deltas were merged). */
  frames: number[];
}

/** One streamed run, watched by a follower and through the SSE route; samples go to `lane`. */
async function latencyRun(
  fx: DevServerFixture,
  taskQueue: string,
  watcher: StreamChannel,
  api: RunningApiServer,
  o: Options,
  lane: Lane | null,
): Promise<void> {
  const workflowId = uid('bench-live');
  const follow: number[] = [];
  const sse: number[] = [];
  let followText = '';
  let sseText = '';
  let ended!: () => void;
  const followEnded = new Promise<void>((r) => (ended = r));
  // Before the run starts: every frame arrives as a frame, none in a `partial`.
  const follower = followLiveTokens(watcher, workflowId, {
    onEvent: (e) => {
      if (e.type !== 'frame') return;
      if (e.frame.kind === 'text') {
        follow.push(Date.now() - e.frame.at);
        followText += e.frame.text ?? '';
      } else if (e.frame.kind === 'end') ended();
    },
  });
  await follower.ready;
  const handle = await startAgentRun(fx.client, input(o), { workflowId, taskQueue });
  const abort = new AbortController();
  const sseDone = readSse(
    `${api.url}/api/runs/${encodeURIComponent(workflowId)}/stream`,
    ({ event, data }) => {
      if (event === 'partial') sseText += (JSON.parse(data) as { text: string }).text;
      if (event === 'token') {
        const f = JSON.parse(data) as { kind: string; at: number; text?: string };
        if (f.kind === 'text') {
          sse.push(Date.now() - f.at);
          sseText += f.text ?? '';
        }
      }
      // The route's own end (the run closed): its loop over the run's events is over too, so
      // nothing of it is left querying when the client closes.
      return event === 'end';
    },
    { signal: abort.signal },
  );
  try {
    const result = (await handle.result()) as AgentResult;
    if (result.answer !== words(o.words)) throw new Error(`unexpected answer: ${result.answer}`);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([followEnded, sseDone]),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('the watchers did not see the end in 10 s')), 10_000);
      }),
    ]).finally(() => clearTimeout(timer));
  } finally {
    follower.stop();
    abort.abort();
  }
  if (followText !== words(o.words) || sseText !== words(o.words))
    throw new Error('a watcher did not get the whole answer');
  if (!lane) return;
  lane.follow.push(...follow);
  lane.sse.push(...sse);
  lane.frames.push(follow.length);
}

/** One channel: an in-process worker publishing to it, watchers on separate channel objects. */
async function latency(
  fx: DevServerFixture,
  config: StreamConfig,
  open: () => StreamChannel,
  o: Options,
): Promise<Lane> {
  const lane: Lane = { follow: [], sse: [], frames: [] };
  const watcher = open();
  try {
    await withDevWorker(
      fx,
      async (taskQueue) => {
        const apiChannel = open();
        const api = await startApiServer({
          client: fx.client,
          taskQueue,
          host: '127.0.0.1',
          port: 0,
          webUi: false,
          mcp: false,
          liveTokens: apiChannel,
        });
        try {
          for (let r = 0; r < o.warmUp + o.runs; r++)
            await latencyRun(fx, taskQueue, watcher, api, o, r >= o.warmUp ? lane : null);
        } finally {
          await api.close();
          await apiChannel.close();
        }
      },
      { stream: config },
    );
  } finally {
    await watcher.close();
  }
  return lane;
}

/**
 * Bytes of a history without what only says when and in which order things happened: event times,
 * task ids, the history size a workflow task started at, and the times in local activities'
 * markers (JSON, whose nanoseconds have 7 to 9 digits). Their values differ run to run and so, by a
 * byte here and there, does their size.
 */
function bytesWithoutTimes(history: History): number {
  type Payloads = temporal.api.common.v1.IPayloads;
  const timeless = (p: Payloads | null | undefined): Payloads | null | undefined =>
    p && {
      payloads: (p.payloads ?? []).map((x) => ({
        ...x,
        data:
          x.data &&
          Buffer.from(
            Buffer.from(x.data)
              .toString('utf8')
              .replace(/"nanos":\d+/g, '"nanos":0'),
          ),
      })),
    };
  const events = (history.events ?? []).map((e): temporal.api.history.v1.IHistoryEvent => {
    // Fields set to null are left out of the encoding.
    const started = e.workflowTaskStartedEventAttributes;
    const marker = e.markerRecordedEventAttributes;
    return {
      ...e,
      eventTime: null,
      taskId: null,
      ...(started ? { workflowTaskStartedEventAttributes: { ...started, historySizeBytes: null } } : {}),
      ...(marker
        ? {
            markerRecordedEventAttributes: {
              ...marker,
              details: Object.fromEntries(
                Object.entries(marker.details ?? {}).map(([k, v]) => [k, timeless(v) as Payloads]),
              ),
            },
          }
        : {}),
    };
  });
  return historyBytes({ events });
}

/** History of the same run with the worker's stream off or on. */
interface Shape {
  events: number[];
  bytes: number[];
  /** {@link bytesWithoutTimes}. */
  timeless: number[];
  modelCalls: number[];
  types: string[];
}

async function historyShape(fx: DevServerFixture, config: StreamConfig, o: Options): Promise<Shape> {
  const shape: Shape = { events: [], bytes: [], timeless: [], modelCalls: [], types: [] };
  await withDevWorker(
    fx,
    async (taskQueue) => {
      for (let r = 0; r < o.warmUp + o.runs; r++) {
        const handle = await startAgentRun(fx.client, input(o), { workflowId: uid('bench-hist'), taskQueue });
        const result = (await handle.result()) as AgentResult;
        if (result.answer !== words(o.words)) throw new Error(`unexpected answer: ${result.answer}`);
        if (r < o.warmUp) continue;
        const history = await handle.fetchHistory();
        const events = history.events ?? [];
        const calls = scheduledActivityTypes(history).filter((t) => t === 'callModel').length;
        shape.events.push(events.length);
        shape.bytes.push(historyBytes(history));
        shape.timeless.push(bytesWithoutTimes(history));
        shape.modelCalls.push(calls);
        const types = events.map((e) => Object.keys(e).find((k) => k.endsWith('EventAttributes')) ?? '?');
        shape.types.push(types.join(','));
      }
    },
    { stream: config },
  );
  return shape;
}

async function main(): Promise<void> {
  const o = new Command('streaming')
    .description('live tokens: token → watcher latency per channel, and history with streaming off and on')
    .option('--runs <n>', 'recorded runs of each kind', count('--runs', 1), 5)
    .option('--warm-up <n>', 'unrecorded runs of each kind first', count('--warm-up', 0), 1)
    .option('--words <n>', 'words of the streamed answer', count('--words', 1), 200)
    .option('--delay <ms>', 'ms between words', count('--delay', 0), 10)
    .parse()
    .opts<Options>();

  const dir = tempDir('bench-streams');
  const fx = await startDevServerFixture();
  let file: Lane, postgres: Lane, off: Shape, on: Shape;
  try {
    file = await latency(fx, { kind: 'file', dir }, () => new FileStreamChannel(dir), o);
    postgres = await latency(
      fx,
      { kind: 'postgres', url: PG_URL },
      () => new PostgresStreamChannel(PG_URL),
      o,
    );
    off = await historyShape(fx, { kind: 'off' }, o);
    on = await historyShape(fx, { kind: 'file', dir }, o);
  } finally {
    await closeStreamChannels();
    await fx.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }

  const row = (label: string, figure: string, note = '') =>
    console.log(`${label.padEnd(46)}${figure}${note}`);
  const goal = (v: number[]) =>
    `  goal p50 ≤ ${GOAL_P50_MS} ms: ${percentile(v, 50) <= GOAL_P50_MS ? 'met' : 'NOT met'}`;
  const range = (v: number[]) =>
    Math.min(...v) === Math.max(...v) ? `${v[0]}` : `${Math.min(...v)}–${Math.max(...v)}`;
  console.log(
    `Live tokens: ${o.runs} runs per channel after ${o.warmUp} warm-up, each a scripted answer of ` +
      `${o.words} words ${o.delay} ms apart; dev server, one in-process agent worker, watchers on ` +
      `separate channel objects (one process)`,
  );
  for (const [name, lane] of [
    ['file', file],
    ['postgres', postgres],
  ] as const) {
    row(`${name}: token → followLiveTokens:`, summary(lane.follow), goal(lane.follow));
    row(`${name}: token → SSE /api/runs/:id/stream:`, summary(lane.sse), goal(lane.sse));
    row(
      `${name}: text frames per run:`,
      range(lane.frames),
      `  (of ${o.words} words; fewer = deltas merged)`,
    );
  }
  const perCall = (s: Shape, v: number[]) => v.map((x, i) => x / (s.modelCalls[i] as number));
  const same = (a: number[], b: number[]) => range(a) === range(b) && new Set([...a, ...b]).size === 1;
  row('model calls per run, stream off / on:', `${range(off.modelCalls)} / ${range(on.modelCalls)}`);
  row(
    'history events per model call, off / on:',
    `${range(perCall(off, off.events))} / ${range(perCall(on, on.events))}`,
    `  goal unchanged: ${same(off.events, on.events) ? 'met' : 'NOT met'}`,
  );
  row(
    'history bytes per model call, off / on:',
    `${range(perCall(off, off.bytes))} / ${range(perCall(on, on.bytes))}`,
    '  (as stored: times and task ids vary in size run to run)',
  );
  row(
    'the same without times and task ids:',
    `${range(perCall(off, off.timeless))} / ${range(perCall(on, on.timeless))}`,
    `  goal equal: ${same(off.timeless, on.timeless) ? 'met' : 'NOT met'}`,
  );
  const types = new Set([...off.types, ...on.types]);
  row(
    'event types in order, off vs on:',
    types.size === 1 ? 'the same' : `${types.size} different sequences`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
