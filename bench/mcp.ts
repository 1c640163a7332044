/**
 * What an MCP tool call costs through the agent, in one run on one dev server, against
 * server-everything's `echo` over stdio:
 *  - the same call made directly with the SDK client (no Temporal, no pool);
 *  - the call through an agent step (scripted model, one echo call per step) as a regular activity
 *    (`localActivities` 'never') and as a local one ('tools': echo is read-only and idempotent),
 *    timed in workflow time from the call's start to its result (the `tool_finished` event);
 *  - one activity round trip: a bare workflow of trivial activities on the same server (regular and
 *    local), wall clock per activity;
 *  - discovery (connect, list, build the catalog): cold (a new server process) and pooled, and the
 *    `mcpDiscover` activity as the runs saw it;
 *  - calls/s over one pooled connection, one call at a time and many in flight.
 *
 *   npx tsx bench/mcp.ts [steps=50] [runs=5] [warm-up=2]
 */
import { performance } from 'node:perf_hooks';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { FileContentStore } from '../activities/content/file-store';
import { discover } from '../activities/mcp/discover';
import { McpPool } from '../activities/mcp/pool';
import { closeMcpConnections } from '../activities/mcp';
import type { AgentInput, AgentResult, Policy } from '../shared/agent';
import { eventsQuery } from '../shared/agent';
import type { ScriptedTurn } from '../shared/model';
import type { WorkflowHandle } from '@temporalio/client';
import type { DevServerFixture } from '../testkit/dev-server';
import { startDevServerFixture, withDevWorker } from '../testkit/dev-server';
import { MCP_SERVERS, everythingServer, mcpConfig } from '../testkit/mcp';
import { tempDir, uid } from '../testkit/temporal';
import { floorBundle, withFloorWorker } from './fixtures/floor';
import { percentile, summary } from './stats';

const STEPS = Number(process.argv[2] ?? 50);
const RUNS = Number(process.argv[3] ?? 5);
/** Unrecorded rounds first: a new worker's first runs pay for compiling its code. */
const WARM_UP = Number(process.argv[4] ?? 2);
/** Direct and pooled calls measured one after another. */
const SEQUENTIAL = 300;
/** Direct calls paced like agent steps: how many, and the pause before each (about an agent step). */
const PACED = 100;
const PACE_MS = 40;
/** Calls in flight at once over the one pooled connection, and how many in all. */
const IN_FLIGHT = 16;
const CONCURRENT = 1000;
const COLD_DISCOVERIES = 5;
const WARM_DISCOVERIES = 50;

const p50 = (v: number[]) => percentile(v, 50);
const time = async (fn: () => Promise<unknown>): Promise<number> => {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
};
const echo = (client: Client, i: number) =>
  client.callTool({ name: 'echo', arguments: { message: `m${i}` } });

/**
 * The call made directly with the SDK client, over its own stdio connection: back to back, and
 * paced as an agent's steps are (a pause before each call, so the server process sleeps between).
 */
async function direct(): Promise<{ hot: number[]; paced: number[] }> {
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [MCP_SERVERS.everything, 'stdio'] }),
  );
  try {
    for (let i = 0; i < 30; i++) await echo(client, i);
    const hot: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) hot.push(await time(() => echo(client, i)));
    const paced: number[] = [];
    for (let i = 0; i < PACED; i++) {
      await new Promise((r) => setTimeout(r, PACE_MS));
      paced.push(await time(() => echo(client, i)));
    }
    return { hot, paced };
  } finally {
    await client.close();
  }
}

/** Calls/s over one pooled connection (the worker's pool), sequential and with many in flight. */
async function throughput(): Promise<{ sequential: number; concurrent: number }> {
  const pool = new McpPool(mcpConfig({ everything: everythingServer('bench-mcp-throughput') }));
  const call = (i: number) => pool.use('everything', (client) => echo(client, i));
  try {
    for (let i = 0; i < 30; i++) await call(i);
    const seq = await time(async () => {
      for (let i = 0; i < SEQUENTIAL; i++) await call(i);
    });
    let next = 0;
    const conc = await time(() =>
      Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (next < CONCURRENT) await call(next++);
        }),
      ),
    );
    return { sequential: SEQUENTIAL / (seq / 1000), concurrent: CONCURRENT / (conc / 1000) };
  } finally {
    await pool.close();
  }
}

/** Discovery as the `mcpDiscover` activity runs it: cold (new server process) and pooled. */
async function discovery(): Promise<{ cold: number[]; warm: number[] }> {
  const store = new FileContentStore(tempDir('bench-mcp-store'));
  const input = { refs: ['mcp:everything'], reserved: [] };
  // In an activity's context, as the worker runs it (discovery logs the tools it skips).
  const activity = new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });
  const config = mcpConfig({ everything: everythingServer('bench-mcp-discovery') });
  const cold: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < COLD_DISCOVERIES; i++) {
    const pool = new McpPool(config);
    try {
      cold.push(await time(() => activity.run(discover, pool, store, input)));
      if (i === COLD_DISCOVERIES - 1)
        for (let j = 0; j < WARM_DISCOVERIES; j++)
          warm.push(await time(() => activity.run(discover, pool, store, input)));
    } finally {
      await pool.close();
    }
  }
  return { cold, warm };
}

function script(steps: number, tool: AgentLane['tool']): ScriptedTurn[] {
  const turns: ScriptedTurn[] = [];
  for (let i = 1; i < steps; i++) {
    const args = tool === 'echo' ? { message: `step ${i}` } : { expression: `${i}+1` };
    turns.push({ toolCalls: [{ name: tool, arguments: args }] });
  }
  turns.push({ content: 'done' });
  return turns;
}

/** One agent lane's samples: its tool calls, wall clock per step, mcpDiscover. */
interface AgentLane {
  /** The MCP echo, or the built-in calculator: the agent's own activity round trip. */
  tool: 'echo' | 'calculator';
  mode: Policy['localActivities'];
  calls: number[];
  /** The call's activity from started to completed (the server's event times): the worker's part. */
  execs: number[];
  steps: number[];
  discover: number[];
}

async function agentRun(fx: DevServerFixture, taskQueue: string, lane: AgentLane, keep: boolean) {
  const input: AgentInput = {
    task: 'bench',
    tools: [lane.tool === 'echo' ? 'mcp:everything/echo' : 'calculator'],
    model: { provider: 'scripted', turns: script(STEPS, lane.tool) },
    policy: { maxSteps: STEPS + 1, localActivities: lane.mode },
  };
  const t0 = performance.now();
  const handle = await fx.client.workflow.start('agentWorkflow', {
    taskQueue,
    workflowId: uid(`bench-mcp-${lane.tool}-${lane.mode}`),
    args: [input],
  });
  const result = (await handle.result()) as AgentResult;
  const wall = performance.now() - t0;
  if (result.steps !== STEPS) throw new Error(`expected ${STEPS} steps, got ${result.steps}`);
  if (!keep) return;
  lane.steps.push(wall / STEPS);
  const events = await handle.query(eventsQuery, {});
  const calls = events.filter((e) => e.kind === 'tool_finished' && e.tool === lane.tool);
  if (calls.length !== STEPS - 1 || calls.some((e) => e.isError))
    throw new Error(`expected ${STEPS - 1} ${lane.tool} results: ${JSON.stringify(calls.slice(0, 2))}`);
  const history = (await handle.fetchHistory()).events ?? [];
  // A regular activity's round trip from history (µs); a local one has only workflow time (1 ms steps).
  lane.calls.push(
    ...(lane.mode === 'never'
      ? roundTrips(history, lane.tool === 'echo' ? 'mcp:everything/echo' : 'calculator')
      : calls.map((e) => e.durationMs ?? NaN)),
  );
  if (lane.mode === 'never')
    lane.execs.push(...executions(history, lane.tool === 'echo' ? 'mcp:everything/echo' : 'calculator'));
  lane.discover.push(...serverTimes(history, 'mcpDiscover'));
}

type HistoryEvents = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>;
const eventMs = (e: HistoryEvents[number] | undefined) =>
  Number(e?.eventTime?.seconds ?? 0) * 1000 + (e?.eventTime?.nanos ?? 0) / 1e6;

/**
 * Each activity of this type as the workflow waits for it: from its scheduling to the start of the
 * workflow task that reads its result (the server's event times).
 */
function roundTrips(history: HistoryEvents, type: string): number[] {
  const out: number[] = [];
  history.forEach((e, i) => {
    if (e.activityTaskScheduledEventAttributes?.activityType?.name !== type) return;
    const done = history.findIndex(
      (c, j) =>
        j > i && String(c.activityTaskCompletedEventAttributes?.scheduledEventId) === String(e.eventId),
    );
    const next = history.find((w, j) => j > done && w.workflowTaskStartedEventAttributes);
    if (done > 0 && next) out.push(eventMs(next) - eventMs(e));
  });
  return out;
}

/** Each activity of this type from scheduled to completed (the server's event times). */
function serverTimes(history: HistoryEvents, type: string): number[] {
  return history.flatMap((e) => {
    if (e.activityTaskScheduledEventAttributes?.activityType?.name !== type) return [];
    const done = history.find(
      (c) => String(c.activityTaskCompletedEventAttributes?.scheduledEventId) === String(e.eventId),
    );
    return done ? [eventMs(done) - eventMs(e)] : [];
  });
}

/** Each activity of this type from started to completed: the worker runs it and reports back. */
function executions(history: HistoryEvents, type: string): number[] {
  return history.flatMap((e) => {
    if (e.activityTaskScheduledEventAttributes?.activityType?.name !== type) return [];
    const id = String(e.eventId);
    const started = history.find(
      (c) => String(c.activityTaskStartedEventAttributes?.scheduledEventId) === id,
    );
    const done = history.find((c) => String(c.activityTaskCompletedEventAttributes?.scheduledEventId) === id);
    return started && done ? [eventMs(done) - eventMs(started)] : [];
  });
}

/** One activity round trip of the bare workflow (two trivial activities per step), from its history. */
async function floorRun(fx: DevServerFixture, taskQueue: string): Promise<number[]> {
  const handle = await fx.client.workflow.start('floorWorkflow', {
    taskQueue,
    workflowId: uid('floor'),
    args: [STEPS],
  });
  await handle.result();
  const history = (await handle.fetchHistory()).events ?? [];
  return [...roundTrips(history, 'first'), ...roundTrips(history, 'second')];
}

/** Wall clock per activity of the bare workflow with local activities. */
async function floorLocalRun(fx: DevServerFixture, taskQueue: string): Promise<number> {
  const wall = await time(() =>
    fx.client.workflow.execute('floorLocalWorkflow', { taskQueue, workflowId: uid('floor'), args: [STEPS] }),
  );
  return wall / (2 * STEPS);
}

async function main(): Promise<void> {
  const { hot: directCalls, paced: directPaced } = await direct();
  const pooled = await throughput();
  const disc = await discovery();

  const fx = await startDevServerFixture();
  const never: AgentLane = { tool: 'echo', mode: 'never', calls: [], execs: [], steps: [], discover: [] };
  const tools: AgentLane = { tool: 'echo', mode: 'tools', calls: [], execs: [], steps: [], discover: [] };
  const builtIn: AgentLane = {
    tool: 'calculator',
    mode: 'never',
    calls: [],
    execs: [],
    steps: [],
    discover: [],
  };
  const floorRegular: number[] = [];
  const floorLocal: number[] = [];
  try {
    const bundle = await floorBundle();
    const mcp = mcpConfig({ everything: everythingServer('bench-mcp-agent') });
    await withDevWorker(
      fx,
      (agentQueue) =>
        withFloorWorker(fx, bundle, async (floorQueue) => {
          // In turns (one run of each, round after round), so no lane meets a colder worker.
          for (let r = 0; r < WARM_UP + RUNS; r++) {
            const keep = r >= WARM_UP;
            await agentRun(fx, agentQueue, never, keep);
            await agentRun(fx, agentQueue, tools, keep);
            await agentRun(fx, agentQueue, builtIn, keep);
            const regular = await floorRun(fx, floorQueue);
            const local = await floorLocalRun(fx, floorQueue);
            if (keep) {
              floorRegular.push(...regular);
              floorLocal.push(local);
            }
          }
        }),
      { mcp },
    );
  } finally {
    await closeMcpConnections();
    await fx.stop();
  }

  const added = p50(never.calls) - p50(directCalls);
  const addedLocal = p50(tools.calls) - p50(directCalls);
  const roundTrip = p50(floorRegular);
  const row = (label: string, figure: string, note = '') =>
    console.log(`${label.padEnd(46)}${figure}${note}`);
  console.log(
    `MCP tool call cost: server-everything echo over stdio; agent runs of ${STEPS} steps (one echo call each) ` +
      `× ${RUNS} runs per lane after ${WARM_UP} warm-up rounds; one agent worker, one bare worker, dev server`,
  );
  row('direct, SDK client, back to back:', summary(directCalls));
  row(
    `direct, SDK client, ${PACE_MS} ms apart:`,
    summary(directPaced),
    '  (the server process sleeps between)',
  );
  row(
    'through an agent step, regular activity:',
    summary(never.calls),
    '  (scheduled → the workflow task that reads the result)',
  );
  row('one activity round trip, bare workflow:', summary(floorRegular), '  (the same, a trivial activity)');
  row(
    'built-in calculator through an agent step:',
    summary(builtIn.calls),
    '  (the same: the agent worker’s own activity round trip)',
  );
  row(
    'added cost per call, p50:',
    `${added.toFixed(2)} ms`,
    `   goal: added cost per call ≤ the cost of one activity round trip (${roundTrip.toFixed(2)} ms): ` +
      `${added <= roundTrip ? 'met' : 'NOT met'}; over the round trip: ${(added - roundTrip).toFixed(2)} ms`,
  );
  const addedPaced = p50(never.calls) - p50(directPaced);
  row(
    'added cost per call against the paced call:',
    `${addedPaced.toFixed(2)} ms`,
    `   (the same goal: ${addedPaced <= roundTrip ? 'met' : 'NOT met'}; over the round trip: ${(addedPaced - roundTrip).toFixed(2)} ms)`,
  );
  row(
    'MCP over the built-in tool, p50:',
    `${(p50(never.calls) - p50(builtIn.calls)).toFixed(2)} ms`,
    `   (echo through the agent − calculator through the agent; the direct call is ${p50(directCalls).toFixed(2)} ms back to back, ${p50(directPaced).toFixed(2)} ms paced)`,
  );
  row('echo activity, started → completed:', summary(never.execs));
  row(
    'calculator activity, started → completed:',
    summary(builtIn.execs),
    `  (difference ${(p50(never.execs) - p50(builtIn.execs)).toFixed(2)} ms: the MCP call inside the worker)`,
  );
  row('through an agent step, local activity:', summary(tools.calls), '  (workflow time, 1 ms steps)');
  row('one local activity, bare workflow:', summary(floorLocal), '  (wall clock per activity)');
  row(
    'added cost per call (local), p50:',
    `${addedLocal.toFixed(2)} ms`,
    `   goal (against one local activity, ${p50(floorLocal).toFixed(2)} ms): ${addedLocal <= p50(floorLocal) ? 'met' : 'NOT met'}`,
  );
  row('agent step wall clock, regular:', summary(never.steps), '  (model turn + echo call)');
  row('agent step wall clock, local:', summary(tools.steps), '  (model turn + echo call)');
  row('discovery, cold (spawn + initialize + list):', summary(disc.cold));
  row('discovery, pooled connection, list cached:', summary(disc.warm));
  row(
    'mcpDiscover activity in the runs:',
    summary([...never.discover, ...tools.discover]),
    '  (scheduled → completed)',
  );
  row(
    'one pooled connection:',
    `${pooled.sequential.toFixed(0)} calls/s one at a time, ${pooled.concurrent.toFixed(0)} calls/s with ${IN_FLIGHT} in flight`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
