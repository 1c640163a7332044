/**
 * How long replaying a long agent run takes, and how fast `replay --all` goes through many runs.
 *
 * Records, on the dev server, a scripted run of `--steps` steps (one calculator call per step) on
 * today's path (`policy.localActivities: 'never'`: two regular activities per step) and on the fast
 * path (`'auto'`: both local), each continuing as new every `--can` steps as long runs do (so each is
 * a chain of histories), and the bare workflow of the same shape (two activities per step, no agent
 * logic: the SDK's own replay cost). Then replays each against the current code, with the dev server
 * stopped, and prints each time beside the goal. Last, it records `--n` short runs and replays them
 * the way `durable-agent replay --all` does (listed and fetched from the server) and prints its
 * throughput line.
 *
 *   npx tsx bench/replay.ts [--steps 1000] [--can 100] [--n 200] [--histories <dir>] [--only long|all] [--no-sdk]
 *
 * `--histories <dir>` keeps the recorded long histories there and reuses them on the next run (so a
 * change to the workflow code can be measured without recording again).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ReplayWorkerOptions, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { Worker } from '@temporalio/worker';
import type { History } from '../client/debug/history';
import { fetchRunHistory, historyJson, readHistoryFile } from '../client/debug/history';
import { replayBundle, replayMany } from '../client/debug/replay';
import { formatThroughput, replayAll } from '../client/debug/replay-all';
import { floorBundle, withFloorWorker } from './fixtures/floor';
import type { AgentInput, AgentResult, Policy } from '../shared/agent';
import type { DevServerFixture } from '../testkit/dev-server';
import { startDevServerFixture, withDevWorker } from '../testkit/dev-server';
import { quietRuntime, tempDir, uid } from '../testkit/temporal';

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? (process.argv[i + 1] as string) : fallback;
}

const STEPS = Number(option('steps', '1000'));
const CAN_AFTER = Number(option('can', '100'));
const N = Number(option('n', '200'));
const HISTORIES = option('histories', '');
const ONLY = option('only', '');
const GOAL_MS = 2000;

type Kind = 'never' | 'auto' | 'floor';

async function recordAgentRun(
  fx: DevServerFixture,
  mode: Policy['localActivities'],
  scripts: string,
): Promise<History[]> {
  const workflowId = uid(`bench-replay-${mode}`);
  await withDevWorker(
    fx,
    async (taskQueue) => {
      const input: AgentInput = {
        task: 'long run',
        tools: ['calculator'],
        model: { provider: 'scripted', script: 'long' },
        policy: { maxSteps: STEPS + 1, continueAsNewAfterSteps: CAN_AFTER, localActivities: mode },
      };
      const handle = await fx.client.workflow.start('agentWorkflow', {
        taskQueue,
        workflowId,
        args: [input],
      });
      const result = (await handle.result()) as AgentResult;
      if (result.steps !== STEPS) throw new Error(`expected ${STEPS} steps, got ${result.steps}`);
    },
    { scriptsDir: scripts },
  );
  const runIds: string[] = [];
  for await (const w of fx.client.workflow.list({ query: `WorkflowId='${workflowId}'` }))
    runIds.push(w.runId);
  return Promise.all(runIds.map((r) => fx.client.workflow.getHandle(workflowId, r).fetchHistory()));
}

/** The same shape without the agent: STEPS/CAN_AFTER runs of CAN_AFTER steps, two activities each. */
function recordFloor(fx: DevServerFixture, bundle: WorkflowBundleWithSourceMap): Promise<History[]> {
  return withFloorWorker(fx, bundle, (taskQueue) =>
    Promise.all(
      Array.from({ length: Math.ceil(STEPS / CAN_AFTER) }, async () => {
        const handle = await fx.client.workflow.start('floorWorkflow', {
          taskQueue,
          workflowId: uid('floor'),
          args: [CAN_AFTER],
        });
        await handle.result();
        return handle.fetchHistory();
      }),
    ),
  );
}

function scriptsDir(): string {
  const scripts = tempDir('bench-replay');
  const turns = [];
  for (let i = 1; i < STEPS; i++)
    turns.push({ toolCalls: [{ name: 'calculator', arguments: { expression: `${i}*2` } }] });
  turns.push({ content: 'done' });
  fs.writeFileSync(path.join(scripts, 'long.json'), JSON.stringify({ turns }));
  return scripts;
}

/** The long histories: read from `--histories` when recorded there before, else recorded now. */
async function longHistories(
  fx: () => Promise<DevServerFixture>,
  bareBundle: WorkflowBundleWithSourceMap,
): Promise<Record<Kind, History[]>> {
  const dir = HISTORIES ? path.join(HISTORIES, `${STEPS}-${CAN_AFTER}`) : '';
  const kinds: Kind[] = ['never', 'auto', 'floor'];
  if (dir && kinds.every((k) => fs.existsSync(path.join(dir, `${k}-0000.json`)))) {
    const out = {} as Record<Kind, History[]>;
    for (const k of kinds) {
      out[k] = fs
        .readdirSync(dir)
        .filter((f) => f.startsWith(`${k}-`))
        .sort()
        .map((f) => readHistoryFile(path.join(dir, f)));
    }
    console.log(`Long histories read from ${dir}`);
    return out;
  }
  const server = await fx();
  const t0 = performance.now();
  const scripts = scriptsDir();
  const out: Record<Kind, History[]> = {
    never: await recordAgentRun(server, 'never', scripts),
    auto: await recordAgentRun(server, 'auto', scripts),
    floor: await recordFloor(server, bareBundle),
  };
  console.log(`Recorded the long runs in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  if (dir) {
    fs.mkdirSync(dir, { recursive: true });
    for (const k of kinds)
      out[k].forEach((h, i) =>
        fs.writeFileSync(path.join(dir, `${k}-${String(i).padStart(4, '0')}.json`), historyJson(h)),
      );
  }
  return out;
}

/** For scale: the same replay with the SDK's own replay worker (a worker thread, its defaults), one lane. */
async function timeSdkReplay(bundle: WorkflowBundleWithSourceMap, histories: History[]): Promise<number> {
  const batch = histories.map((history, i) => ({ history, workflowId: `h${i}` }));
  const t = performance.now();
  const options = {
    workflowBundle: bundle,
    replayName: 'sdk-replay',
    debugMode: false,
  } as ReplayWorkerOptions;
  for await (const r of Worker.runReplayHistories(options, batch)) if (r.error) throw r.error;
  return performance.now() - t;
}

async function timeReplay(bundle: WorkflowBundleWithSourceMap, histories: History[]): Promise<number> {
  const batch = histories.map((history, i) => ({ history, workflowId: `h${i}` }));
  const t = performance.now();
  for await (const outcome of replayMany(bundle, batch)) {
    if (!outcome.ok) throw new Error(`replay failed: ${JSON.stringify(outcome)}`);
  }
  return performance.now() - t;
}

/** N short agent runs (3 steps, both paths), then replayed as `replay --all` does. */
async function replayAllThroughput(fx: DevServerFixture): Promise<void> {
  const tag = uid('all');
  const t0 = performance.now();
  await withDevWorker(fx, async (taskQueue) => {
    const turns = [
      { toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] },
      { toolCalls: [{ name: 'calculator', arguments: { expression: '2*3' } }] },
      { content: 'done' },
    ];
    const start = async (i: number) => {
      const input: AgentInput = {
        task: `short run ${i}`,
        tools: ['calculator'],
        model: { provider: 'scripted', turns },
        policy: { maxSteps: 5, localActivities: i % 2 ? 'auto' : 'never' },
      };
      await fx.client.workflow.execute('agentWorkflow', {
        taskQueue,
        workflowId: `${tag}-${i}`,
        args: [input],
      });
    };
    // A few at a time: the machine, not the server, is the limit.
    let next = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < N) await start(next++);
      }),
    );
  });
  const query = `WorkflowType='agentWorkflow' AND WorkflowId STARTS_WITH '${tag}-'`;
  // Visibility lags behind completion a little.
  for (let i = 0; i < 100; i++) {
    const { count } = await fx.client.workflow.count(query);
    if (count >= N) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  console.log(`Recorded ${N} short runs in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const bundle = await replayBundle();
  const totals = await replayAll(fx.client, query, bundle);
  if (totals.ok !== N) throw new Error(`replay --all: ${totals.ok} of ${N} OK`);
  console.log(`replay --all over ${N} runs (3 steps each), load ${loadNow()}: ${formatThroughput(totals)}`);
  // Where its time goes: fetching the histories alone, and replaying them alone from memory.
  let t = performance.now();
  const histories: History[] = [];
  for await (const w of fx.client.workflow.list({ query }))
    histories.push(await fetchRunHistory(fx.client, w.workflowId, w.runId));
  const fetchMs = performance.now() - t;
  t = performance.now();
  for await (const o of replayMany(
    bundle,
    histories.map((history, i) => ({ history, workflowId: `h${i}` })),
  ))
    if (!o.ok) throw new Error(`replay failed: ${JSON.stringify(o)}`);
  const replayMs = performance.now() - t;
  console.log(
    `  of which: fetching the ${N} histories one by one ${(fetchMs / 1000).toFixed(2)} s; replaying them from memory ${(replayMs / 1000).toFixed(2)} s (${(N / (replayMs / 1000)).toFixed(1)} histories/s)`,
  );
}

async function main(): Promise<void> {
  quietRuntime();
  console.log(`Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}, load ${loadNow()}`);
  let server: DevServerFixture | undefined;
  const fx = async () => (server ??= await startDevServerFixture());
  try {
    if (ONLY !== 'all') {
      const bareBundle = await floorBundle();
      const long = await longHistories(fx, bareBundle);
      // Replay with the server stopped: it is not part of a replay.
      await server?.stop();
      server = undefined;
      const bundle = await replayBundle();
      await timeReplay(bundle, long.never.slice(0, 1)); // warm-up: worker threads and bundle load
      await timeReplay(bareBundle, long.floor.slice(0, 1));
      const rows: [string, History[], WorkflowBundleWithSourceMap][] = [
        [`agent, today's path ('never')`, long.never, bundle],
        [`agent, fast path ('auto')`, long.auto, bundle],
        ['bare workflow, same shape', long.floor, bareBundle],
      ];
      console.log(
        `Replay of a ${STEPS}-step run (continue-as-new every ${CAN_AFTER} steps), goal ≤ ${GOAL_MS / 1000} s, load ${loadNow()}:`,
      );
      const times: number[] = [];
      for (const [label, histories, b] of rows) {
        const events = histories.reduce((n, h) => n + (h.events?.length ?? 0), 0);
        // The first replay of the code is what a `replay` command sees; the second has the JIT warm.
        const ms = await timeReplay(b, histories);
        const again = await timeReplay(b, histories);
        times.push(ms);
        const verdict = ms <= GOAL_MS ? 'met' : 'not met';
        console.log(
          `  ${label.padEnd(34)} ${(ms / 1000).toFixed(2)} s  (${histories.length} histories, ${events} events, ${(ms / STEPS).toFixed(2)} ms per step)  goal: ${verdict}; replayed again ${(again / 1000).toFixed(2)} s`,
        );
      }
      const floorMs = times[2] as number;
      console.log(
        `  the agent over the bare workflow: today's path ${(((times[0] as number) - floorMs) / STEPS).toFixed(2)} ms per step, fast path ${(((times[1] as number) - floorMs) / STEPS).toFixed(2)} ms per step`,
      );
      if (!process.argv.includes('--no-sdk')) {
        await timeSdkReplay(bundle, long.never.slice(0, 1));
        const sdk = await timeSdkReplay(bundle, long.never);
        const sdkFloor = await timeSdkReplay(bareBundle, long.floor);
        console.log(
          `  for scale, the SDK's own replay worker (one lane): today's path ${(sdk / 1000).toFixed(2)} s, bare workflow ${(sdkFloor / 1000).toFixed(2)} s (load ${loadNow()})`,
        );
      }
    }
    if (ONLY !== 'long' && N > 0) await replayAllThroughput(await fx());
    console.log(`Load at the end: ${loadNow()}`);
  } finally {
    await server?.stop();
  }
}

function loadNow(): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
