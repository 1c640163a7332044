/**
 * Throughput and density of one worker on the dev server, against the bare engine in the same run.
 * For each N: N concurrent scripted agent runs (a model turn and one calculator call per step) with
 * `policy.localActivities` 'never' (today's path) and 'auto' (the fast path), then N bare workflows
 * of the same shape (two activities per step); steps/s, per-step latency and worker RSS for each.
 * Then N agent runs parked in the worker's cache (waiting for an approval) and N parked bare
 * workflows: RSS per cached workflow. Agent runs start as the CLI starts them (with their search
 * attributes). The worker runs in this process; RSS is the process's. Before the first N, an
 * unrecorded batch of 20 runs of each kind warms the worker up.
 *
 *   NODE_OPTIONS=--expose-gc npx tsx bench/density.ts [--n 10,100,500,2000] [--steps 5]
 *     [--modes never,auto] [--cache N] [--wft-slots N] [--act-slots N] [--la-slots N]
 *     [--wft-pollers N] [--act-pollers N] [--reuse-v8 true|false] [--no-density] [--density-only]
 *     [--preload <module>,...]   (more modules the workflow sandbox evaluates once and shares, frozen;
 *     zod and the schemas are always shared: WORKFLOW_BUNDLER_OPTIONS)
 */
import { notificationDelivery } from '../client/deliver';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import type { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, bundleWorkflowCode } from '@temporalio/worker';
import { devServerStatus } from '../workers/dev-server';
import { startAgentRun } from '../client/start-run';
import type { AgentInput, Policy } from '../shared/agent';
import type { ScriptedTurn } from '../shared/model';
import type { DevServerFixture } from '../testkit/dev-server';
import { startDevServerFixture } from '../testkit/dev-server';
import { testConfig, uid, workflowBundle } from '../testkit/temporal';
import type { WorkerTuning } from '../workers/worker';
import { WORKFLOWS_PATH, WORKFLOW_BUNDLER_OPTIONS, createAgentWorker } from '../workers/worker';
import { floorBundle, withFloorWorker } from './fixtures/floor';
import { percentile } from './stats';

const { values: flags } = parseArgs({
  options: {
    n: { type: 'string', default: '10,100,500,2000' },
    steps: { type: 'string', default: '5' },
    modes: { type: 'string', default: 'never,auto' },
    cache: { type: 'string' },
    'wft-slots': { type: 'string' },
    'act-slots': { type: 'string' },
    'la-slots': { type: 'string' },
    'wft-pollers': { type: 'string' },
    'act-pollers': { type: 'string' },
    'reuse-v8': { type: 'string' },
    'no-density': { type: 'boolean', default: false },
    preload: { type: 'string' },
    'density-only': { type: 'boolean', default: false },
  },
});

function positive(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`--${name} must be a positive whole number, got "${text}"`);
  return n;
}

const COUNTS = (flags.n ?? '').split(',').map((t) => positive('n', t.trim()));
/**
 * Fewest parked runs whose memory is measured: the workflows live on the SDK's workflow thread,
 * whose heap this process cannot collect on demand, so RSS moves by 10–20 MB between readings; 100
 * runs of ~0.3 MB each are within that noise (readings of −0.18 and +0.29 MB per run). The exact
 * heap of a parked run is measured by tests/integration/workflow-memory.test.ts (workflows on the
 * test's own thread, collected before each reading).
 */
const MIN_PARKED = 500;
/** Runs of each kind in the unrecorded warm-up batch before the first N. */
const WARM_UP_RUNS = 20;
const STEPS = positive('steps', flags.steps ?? '5');
const MODES = (flags.modes ?? '').split(',').map((m) => {
  if (m !== 'never' && m !== 'tools' && m !== 'auto') throw new Error(`--modes: unknown mode "${m}"`);
  return m;
});
const opt = (name: keyof typeof flags): number | undefined => {
  const v = flags[name];
  return typeof v === 'string' ? positive(name, v) : undefined;
};
const TUNING: WorkerTuning = {
  ...(opt('cache') ? { maxCachedWorkflows: opt('cache') } : {}),
  ...(opt('wft-slots') ? { maxConcurrentWorkflowTaskExecutions: opt('wft-slots') } : {}),
  ...(opt('act-slots') ? { maxConcurrentActivityTaskExecutions: opt('act-slots') } : {}),
  ...(opt('la-slots') ? { maxConcurrentLocalActivityExecutions: opt('la-slots') } : {}),
  ...(opt('wft-pollers')
    ? { workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: opt('wft-pollers') } }
    : {}),
  ...(opt('act-pollers')
    ? { activityTaskPollerBehavior: { type: 'simple-maximum', maximum: opt('act-pollers') } }
    : {}),
  ...(flags['reuse-v8'] !== undefined ? { reuseV8Context: flags['reuse-v8'] !== 'false' } : {}),
};

/** Goals, printed beside each figure. */
const GOALS = { ofBare: 0.8, mbPerCached: 0.5 };
const MB = 1024 * 1024;

function script(steps: number, park: boolean): ScriptedTurn[] {
  const turns: ScriptedTurn[] = [];
  for (let i = 1; i <= steps; i++)
    turns.push({ toolCalls: [{ name: 'calculator', arguments: { expression: `${i}+1` } }] });
  // Parked: a call that waits for a person's approval keeps the run in the worker's cache.
  turns.push(park ? { toolCalls: [{ name: 'get_time', arguments: {} }] } : { content: 'done' });
  return turns;
}

function agentInput(mode: Policy['localActivities'], park: boolean): AgentInput {
  return {
    task: 'density',
    tools: ['calculator', 'get_time'],
    model: { provider: 'scripted', turns: script(park ? STEPS : STEPS - 1, park) },
    policy: {
      maxSteps: STEPS + 2,
      localActivities: mode,
      ...(park ? { requireApproval: ['get_time'], approvalTimeout: '1 day' } : {}),
    },
  };
}

/** Runs `fn` over `items`, at most `limit` at a time. */
async function pool<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

/**
 * Waits until `n` workflows matching `query` are closed. Counting closed ones, not running ones: the
 * visibility store may not list a just-started workflow yet, so "none running" can be true too soon.
 */
async function waitUntilClosed(client: Client, query: string, n: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { count } = await client.workflow.count(`${query} AND ExecutionStatus != 'Running'`);
    if (count >= n) return;
    if (Date.now() > deadline)
      throw new Error(`${n - count} of ${n} workflows still open after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

interface Throughput {
  stepsPerSecond: number;
  p50: number;
  p95: number;
  rssMb: number;
  /** CPU time per step of this process (the worker and the client) and of the dev server, ms. */
  workerCpuMs: number;
  serverCpuMs: number;
}

/** The dev server's process, whose CPU time each batch reports. */
let serverPid = 0;

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

/** CPU time the dev server process used so far, ms (user + system, from /proc). */
function serverCpuMs(pid: number): number {
  const fields = fs
    .readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  // After the command: state is field 3, utime 14 and stime 15 (1-based, counting from the pid).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
}

/** CPU time this process used so far, ms. */
function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** N workflows started at once, S steps each: steps/s from first start to last close, per-step latency per run. */
async function throughput(
  fx: DevServerFixture,
  taskQueue: string,
  n: number,
  start: (workflowId: string) => Promise<unknown>,
): Promise<Throughput> {
  const tag = uid('batch');
  const ids = Array.from({ length: n }, (_, i) => `${tag}-${i}`);
  const cpuAtStart = { own: ownCpuMs(), server: serverCpuMs(serverPid) };
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 200);
  await pool(ids, 50, start);
  await waitUntilClosed(
    fx.client,
    `TaskQueue = '${taskQueue}' AND WorkflowId STARTS_WITH '${tag}'`,
    n,
    1_800_000,
  );
  clearInterval(sampler);
  const cpu = { own: ownCpuMs() - cpuAtStart.own, server: serverCpuMs(serverPid) - cpuAtStart.server };
  const perStep: number[] = [];
  let first = Infinity;
  let last = 0;
  for await (const w of fx.client.workflow.list({ query: `WorkflowId STARTS_WITH '${tag}'` })) {
    if (w.status.name !== 'COMPLETED') throw new Error(`${w.workflowId} ended ${w.status.name}`);
    const s = w.startTime.getTime();
    const c = (w.closeTime as Date).getTime();
    first = Math.min(first, s);
    last = Math.max(last, c);
    perStep.push((c - s) / STEPS);
  }
  if (perStep.length !== n) throw new Error(`expected ${n} closed workflows, listed ${perStep.length}`);
  const wall = Math.max(1, last - first);
  return {
    stepsPerSecond: (n * STEPS * 1000) / wall,
    p50: percentile(perStep, 50),
    p95: percentile(perStep, 95),
    rssMb: peakRss / MB,
    workerCpuMs: cpu.own / (n * STEPS),
    serverCpuMs: cpu.server / (n * STEPS),
  };
}

function settledRss(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  return process.memoryUsage().rss;
}

/** Parks N workflows in the worker's cache; returns the RSS they add per workflow (MB), then terminates them. */
async function density(
  fx: DevServerFixture,
  n: number,
  start: (workflowId: string) => Promise<unknown>,
  parked: (tag: string) => Promise<number>,
): Promise<{ perCachedMb: number; rssMb: number }> {
  await new Promise((r) => setTimeout(r, 1000));
  const before = settledRss();
  const tag = uid('park');
  const ids = Array.from({ length: n }, (_, i) => `${tag}-${i}`);
  await pool(ids, 50, start);
  const deadline = Date.now() + 1_800_000;
  while ((await parked(tag)) < n) {
    if (Date.now() > deadline) throw new Error('workflows did not park in time');
    await new Promise((r) => setTimeout(r, 500));
  }
  await new Promise((r) => setTimeout(r, 1000));
  const after = settledRss();
  await pool(ids, 50, (id) => fx.client.workflow.getHandle(id).terminate('bench done'));
  return { perCachedMb: (after - before) / n / MB, rssMb: after / MB };
}

function row(label: string, t: Throughput, extra = ''): string {
  return `  ${label.padEnd(30)} ${t.stepsPerSecond.toFixed(1).padStart(8)} steps/s  step p50 ${t.p50.toFixed(1).padStart(7)} ms  p95 ${t.p95.toFixed(1).padStart(7)} ms  RSS ${t.rssMb.toFixed(0).padStart(5)} MB  CPU/step worker ${t.workerCpuMs.toFixed(2)} ms, server ${t.serverCpuMs.toFixed(2)} ms${extra}`;
}

async function main(): Promise<void> {
  const fx = await startDevServerFixture();
  const { pid } = await devServerStatus({ dataDir: fx.dataDir, port: fx.port });
  if (pid === null) throw new Error('the dev server of this bench is not running');
  serverPid = pid;
  const connection = await NativeConnection.connect({ address: fx.address });
  const agentQueue = uid('density');
  const preload = flags.preload?.split(',').filter(Boolean) ?? [];
  const bundle = preload.length
    ? await bundleWorkflowCode({
        workflowsPath: WORKFLOWS_PATH,
        logger: new DefaultLogger('WARN'),
        ...WORKFLOW_BUNDLER_OPTIONS,
        preloadModules: [...WORKFLOW_BUNDLER_OPTIONS.preloadModules, ...preload],
      })
    : await workflowBundle();
  const floor = await floorBundle();
  console.log(
    `One worker + dev server; ${STEPS} steps per run (model turn + one calculator call); tuning ${JSON.stringify(TUNING)}${preload.length ? `; preloaded ${preload.join(', ')}` : ''}`,
  );
  try {
    const worker = await createAgentWorker({
      connection,
      namespace: 'default',
      config: testConfig({ taskQueue: agentQueue }),
      deliver: notificationDelivery(fx.client, agentQueue),
      taskQueue: agentQueue,
      workflowBundle: bundle,
      tuning: TUNING,
    });
    await worker.runUntil(
      withFloorWorker(
        fx,
        floor,
        async (floorQueue) => {
          if (!flags['density-only']) {
            // A new worker's first runs pay for compiling its code (the agent's more than the bare
            // workflow's): one unrecorded batch of each first, so the first N measures the engine.
            await throughput(fx, floorQueue, WARM_UP_RUNS, (workflowId) =>
              fx.client.workflow.start('floorWorkflow', { taskQueue: floorQueue, workflowId, args: [STEPS] }),
            );
            for (const mode of MODES) {
              await throughput(fx, agentQueue, WARM_UP_RUNS, (workflowId) =>
                startAgentRun(fx.client, agentInput(mode, false), { taskQueue: agentQueue, workflowId }),
              );
            }
          }
          for (const n of COUNTS) {
            console.log(`N = ${n}`);
            if (!flags['density-only']) {
              const bare = await throughput(fx, floorQueue, n, (workflowId) =>
                fx.client.workflow.start('floorWorkflow', {
                  taskQueue: floorQueue,
                  workflowId,
                  args: [STEPS],
                }),
              );
              console.log(row('bare workflow (2 activities)', bare));
              for (const mode of MODES) {
                const agent = await throughput(fx, agentQueue, n, (workflowId) =>
                  startAgentRun(fx.client, agentInput(mode, false), { taskQueue: agentQueue, workflowId }),
                );
                const share = agent.stepsPerSecond / bare.stepsPerSecond;
                console.log(
                  row(
                    `agent, localActivities '${mode}'`,
                    agent,
                    `  ${(share * 100).toFixed(0)} % of bare (goal ≥ ${GOALS.ofBare * 100} %: ${share >= GOALS.ofBare ? 'met' : 'NOT met'})`,
                  ),
                );
              }
            }
            if (flags['no-density']) continue;
            if (n < MIN_PARKED) {
              console.log(
                `  RSS per cached workflow: not measured at N = ${n} (under ${MIN_PARKED}, the RSS noise of a few MB is larger than what ${n} runs add)`,
              );
              continue;
            }
            const agentPark = await density(
              fx,
              n,
              (workflowId) =>
                startAgentRun(fx.client, agentInput(MODES[0] ?? 'never', true), {
                  taskQueue: agentQueue,
                  workflowId,
                }),
              async (tag) =>
                (
                  await fx.client.workflow.count(
                    `WorkflowId STARTS_WITH '${tag}' AND AgentStatus = 'waiting_for_approval'`,
                  )
                ).count,
            );
            const barePark = await density(
              fx,
              n,
              (workflowId) =>
                fx.client.workflow.start('floorParkedWorkflow', {
                  taskQueue: floorQueue,
                  workflowId,
                  args: [STEPS],
                }),
              async (tag) =>
                (await fx.client.workflow.count(`WorkflowId STARTS_WITH '${tag}' AND AgentStatus = 'parked'`))
                  .count,
            );
            console.log(
              `  RSS per cached workflow: agent ${agentPark.perCachedMb.toFixed(3)} MB (goal ≤ ${GOALS.mbPerCached} MB: ${agentPark.perCachedMb <= GOALS.mbPerCached ? 'met' : 'NOT met'}), bare ${barePark.perCachedMb.toFixed(3)} MB; worker RSS with N parked agents ${agentPark.rssMb.toFixed(0)} MB`,
            );
          }
        },
        TUNING,
      ),
    );
  } finally {
    await connection.close();
    await fx.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
