/**
 * The fast path for quick steps, side by side in one run on one dev server: the same scripted agent
 * run (a model turn and one calculator call per step) with `policy.localActivities` 'never' (every
 * step two regular activities), 'tools' (the calculator local) and 'auto' (the model call local too),
 * and the bare workflow of the same shape with regular and with local activities.
 *
 *   npx tsx bench/fast-path.ts [steps=50] [runs=5]
 */
import { performance } from 'node:perf_hooks';
import type { AgentInput, AgentResult, Policy } from '../shared/agent';
import type { ScriptedTurn } from '../shared/model';
import type { DevServerFixture } from '../tests/support/dev-server';
import { startDevServerFixture, withDevWorker } from '../tests/support/dev-server';
import { uid } from '../tests/support/temporal';
import { floorBundle, withFloorWorker } from './fixtures/floor';
import { percentile, summary } from './stats';

const STEPS = Number(process.argv[2] ?? 50);
const RUNS = Number(process.argv[3] ?? 5);
/** Goal for the fast path's step p50 on this machine. */
const GOAL_MS = 8;

function script(steps: number): ScriptedTurn[] {
  const turns: ScriptedTurn[] = [];
  for (let i = 1; i < steps; i++)
    turns.push({ toolCalls: [{ name: 'calculator', arguments: { expression: `${i}+1` } }] });
  turns.push({ content: 'done' });
  return turns;
}

/** Wall clock per step (run duration / steps) of each run after a warm-up run. */
async function agentSteps(
  fx: DevServerFixture,
  taskQueue: string,
  mode: Policy['localActivities'],
): Promise<number[]> {
  const perStep: number[] = [];
  const turns = script(STEPS);
  for (let r = 0; r <= RUNS; r++) {
    const input: AgentInput = {
      task: 'bench',
      tools: ['calculator'],
      model: { provider: 'scripted', turns },
      policy: { maxSteps: STEPS + 1, localActivities: mode },
    };
    const t0 = performance.now();
    const result = (await fx.client.workflow.execute('agentWorkflow', {
      taskQueue,
      workflowId: uid(`fast-${mode}`),
      args: [input],
    })) as AgentResult;
    if (result.steps !== STEPS) throw new Error(`expected ${STEPS} steps, got ${result.steps}`);
    if (r > 0) perStep.push((performance.now() - t0) / STEPS);
  }
  return perStep;
}

async function bareSteps(fx: DevServerFixture, taskQueue: string, workflow: string): Promise<number[]> {
  const perStep: number[] = [];
  for (let r = 0; r <= RUNS; r++) {
    const t0 = performance.now();
    await fx.client.workflow.execute(workflow, { taskQueue, workflowId: uid('floor'), args: [STEPS] });
    if (r > 0) perStep.push((performance.now() - t0) / STEPS);
  }
  return perStep;
}

async function main(): Promise<void> {
  const fx = await startDevServerFixture();
  try {
    const agent = await withDevWorker(fx, async (taskQueue) => ({
      never: await agentSteps(fx, taskQueue, 'never'),
      tools: await agentSteps(fx, taskQueue, 'tools'),
      auto: await agentSteps(fx, taskQueue, 'auto'),
    }));
    const bare = await withFloorWorker(fx, await floorBundle(), async (taskQueue) => ({
      regular: await bareSteps(fx, taskQueue, 'floorWorkflow'),
      local: await bareSteps(fx, taskQueue, 'floorLocalWorkflow'),
    }));
    const p50 = (v: number[]) => percentile(v, 50);
    console.log(
      `Wall clock per step, ${STEPS} steps × ${RUNS} runs (model turn + one calculator call), one worker, dev server`,
    );
    console.log(`agent, localActivities 'never' (today):  ${summary(agent.never)}`);
    console.log(`agent, localActivities 'tools':          ${summary(agent.tools)}`);
    console.log(
      `agent, localActivities 'auto':           ${summary(agent.auto)}   goal p50 ≤ ${GOAL_MS} ms: ${p50(agent.auto) <= GOAL_MS ? 'met' : 'NOT met'}`,
    );
    console.log(`bare workflow, 2 regular activities:     ${summary(bare.regular)}`);
    console.log(`bare workflow, 2 local activities:       ${summary(bare.local)}`);
    console.log(
      `fast path over today: ×${(p50(agent.never) / p50(agent.auto)).toFixed(1)} faster; ` +
        `agent logic over the bare local workflow: ${(p50(agent.auto) - p50(bare.local)).toFixed(2)} ms per step`,
    );
  } finally {
    await fx.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
