/**
 * The fast path for quick steps, side by side in one run on one dev server: the same scripted agent
 * run (a model turn and one calculator call per step) with `policy.localActivities` 'never' (every
 * step two regular activities), 'tools' (the calculator local) and 'auto' (the model call local too),
 * and the bare workflow of the same shape with regular and with local activities.
 *
 * Runs go in turns (one of each way, round after round) after warm-up rounds, so every way meets
 * the same worker state; the warm-up runs are printed too.
 *
 *   npx tsx bench/fast-path.ts [steps=50] [runs=10] [warm-up=3]
 */
import { performance } from 'node:perf_hooks';
import type { AgentInput, AgentResult, Policy } from '../shared/agent';
import type { ScriptedTurn } from '../shared/model';
import type { DevServerFixture } from '../testkit/dev-server';
import { startDevServerFixture, withDevWorker } from '../testkit/dev-server';
import { uid } from '../testkit/temporal';
import { floorBundle, withFloorWorker } from './fixtures/floor';
import { percentile, summary } from './stats';

const STEPS = Number(process.argv[2] ?? 50);
const RUNS = Number(process.argv[3] ?? 10);
/** Unrecorded runs of each lane first: a new worker's first runs pay for compiling its code. */
const WARM_UP = Number(process.argv[4] ?? 3);

/** A way to run the same steps, and its runs' wall clock per step. */
interface Lane {
  label: string;
  run: () => Promise<number>;
  cold: number[];
  warm: number[];
}
/** Goal for the fast path's step p50 on this machine. */
const GOAL_MS = 8;

function script(steps: number): ScriptedTurn[] {
  const turns: ScriptedTurn[] = [];
  for (let i = 1; i < steps; i++)
    turns.push({ toolCalls: [{ name: 'calculator', arguments: { expression: `${i}+1` } }] });
  turns.push({ content: 'done' });
  return turns;
}

/** One scripted agent run of STEPS steps; returns its wall clock per step. */
async function agentRun(
  fx: DevServerFixture,
  taskQueue: string,
  mode: Policy['localActivities'],
): Promise<number> {
  const input: AgentInput = {
    task: 'bench',
    tools: ['calculator'],
    model: { provider: 'scripted', turns: script(STEPS) },
    policy: { maxSteps: STEPS + 1, localActivities: mode },
  };
  const t0 = performance.now();
  const result = (await fx.client.workflow.execute('agentWorkflow', {
    taskQueue,
    workflowId: uid(`fast-${mode}`),
    args: [input],
  })) as AgentResult;
  if (result.steps !== STEPS) throw new Error(`expected ${STEPS} steps, got ${result.steps}`);
  return (performance.now() - t0) / STEPS;
}

/** One bare run of STEPS steps; returns its wall clock per step. */
async function bareRun(fx: DevServerFixture, taskQueue: string, workflow: string): Promise<number> {
  const t0 = performance.now();
  await fx.client.workflow.execute(workflow, { taskQueue, workflowId: uid('floor'), args: [STEPS] });
  return (performance.now() - t0) / STEPS;
}

async function main(): Promise<void> {
  const fx = await startDevServerFixture();
  try {
    const bundle = await floorBundle();
    const lanes = await withDevWorker(fx, (agentQueue) =>
      withFloorWorker(fx, bundle, async (floorQueue) => {
        const all: Lane[] = [
          { label: `agent, localActivities 'never' (today): `, run: () => agentRun(fx, agentQueue, 'never') },
          { label: `agent, localActivities 'tools':         `, run: () => agentRun(fx, agentQueue, 'tools') },
          { label: `agent, localActivities 'auto':          `, run: () => agentRun(fx, agentQueue, 'auto') },
          {
            label: `bare workflow, 2 regular activities:    `,
            run: () => bareRun(fx, floorQueue, 'floorWorkflow'),
          },
          {
            label: `bare workflow, 2 local activities:      `,
            run: () => bareRun(fx, floorQueue, 'floorLocalWorkflow'),
          },
        ].map((lane) => ({ ...lane, cold: [] as number[], warm: [] as number[] }));
        // In turns (one run of each, round after round), so no lane meets a colder worker than another.
        for (let r = 0; r < WARM_UP + RUNS; r++) {
          for (const lane of all) (r < WARM_UP ? lane.cold : lane.warm).push(await lane.run());
        }
        return all;
      }),
    );
    const [never, tools, auto, regular, local] = lanes as [Lane, Lane, Lane, Lane, Lane];
    const p50 = (v: number[]) => percentile(v, 50);
    console.log(
      `Wall clock per step, ${STEPS} steps × ${RUNS} runs each after ${WARM_UP} warm-up runs each ` +
        `(model turn + one calculator call), one agent worker and one bare worker, dev server`,
    );
    for (const lane of lanes) {
      const goal =
        lane === auto ? `   goal p50 ≤ ${GOAL_MS} ms: ${p50(lane.warm) <= GOAL_MS ? 'met' : 'NOT met'}` : '';
      console.log(`${lane.label} ${summary(lane.warm)}${goal}`);
    }
    console.log(
      `fast path over today: ×${(p50(never.warm) / p50(auto.warm)).toFixed(1)} faster; ` +
        `agent logic over the bare local workflow: ${(p50(auto.warm) - p50(local.warm)).toFixed(2)} ms per step; ` +
        `'tools' ${p50(tools.warm).toFixed(1)} ms, bare regular ${p50(regular.warm).toFixed(1)} ms`,
    );
    console.log(
      `warm-up runs (a new worker's first ${WARM_UP}), per step: fast path ${auto.cold.map((v) => v.toFixed(1)).join(', ')} ms; ` +
        `bare local ${local.cold.map((v) => v.toFixed(1)).join(', ')} ms`,
    );
  } finally {
    await fx.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
