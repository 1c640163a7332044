/**
 * What Temporal adds to each agent step. Runs the same scripted loop (model turn → one no-op-sized
 * tool call → result) (a) in process, calling the same provider and activity functions directly, and
 * (b) as the agent workflow on the real dev server with an in-process worker, and prints per-step
 * p50/p95 for both and the difference; (c) a bare workflow of the same shape (two no-op activities
 * per step, no agent logic) on the same server, which is what Temporal itself costs per step here.
 *
 *   npx tsx bench/loop-overhead.ts [steps=50] [runs=3]
 */
import { performance } from 'node:perf_hooks';
import { createScriptedProvider } from '../activities/model/scripted';
import { calculator } from '../activities/utility/calculator';
import type { AgentInput, AgentResult } from '../shared/agent';
import { eventsQuery } from '../shared/agent';
import type { ChatMessage } from '../shared/conversation';
import type { ScriptedTurn } from '../shared/model';
import { CalculatorArgs } from '../shared/tools/calculator';
import type { DevServerFixture } from '../testkit/dev-server';
import { startDevServerFixture, withDevWorker } from '../testkit/dev-server';
import { uid } from '../testkit/temporal';
import { floorBundle, withFloorWorker } from './fixtures/floor';
import { summary, percentile } from './stats';

const STEPS = Number(process.argv[2] ?? 50);
const RUNS = Number(process.argv[3] ?? 3);

function script(steps: number): ScriptedTurn[] {
  const turns: ScriptedTurn[] = [];
  for (let i = 1; i < steps; i++)
    turns.push({ toolCalls: [{ name: 'calculator', arguments: { expression: `${i}+1` } }] });
  turns.push({ content: 'done' });
  return turns;
}

/** (a) The loop without Temporal: same provider, same validation, same activity function. */
async function inProcess(turns: ScriptedTurn[]): Promise<number[]> {
  const provider = createScriptedProvider('/nonexistent');
  const messages: ChatMessage[] = [{ role: 'user', content: 'bench' }];
  const steps: number[] = [];
  for (;;) {
    const t0 = performance.now();
    const out = await provider({ model: { provider: 'scripted', turns }, messages, tools: [] });
    messages.push({ role: 'assistant', content: out.content, toolCalls: out.toolCalls });
    if (out.toolCalls.length === 0) {
      steps.push(performance.now() - t0);
      return steps;
    }
    for (const call of out.toolCalls) {
      const args = CalculatorArgs.parse(call.arguments);
      const r = await calculator({ toolCallId: call.id, args });
      messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: r.content });
    }
    steps.push(performance.now() - t0);
  }
}

/** (c) Wall-clock per step of a bare two-activity workflow on the same server. */
async function floor(fx: DevServerFixture): Promise<number[]> {
  const perStep: number[] = [];
  await withFloorWorker(fx, await floorBundle(), async (taskQueue) => {
    for (let r = 0; r <= RUNS; r++) {
      const t0 = performance.now();
      await fx.client.workflow.execute('floorWorkflow', {
        taskQueue,
        workflowId: uid('floor'),
        args: [STEPS],
      });
      if (r > 0) perStep.push((performance.now() - t0) / STEPS);
    }
  });
  return perStep;
}

async function main() {
  const turns = script(STEPS);

  const local: number[] = [];
  await inProcess(turns); // warm-up
  for (let r = 0; r < RUNS; r++) local.push(...(await inProcess(turns)));

  const fx = await startDevServerFixture();
  const client = fx.client;
  const remote: number[] = [];
  const totals: number[] = [];
  await withDevWorker(fx, async (taskQueue) => {
    for (let r = 0; r <= RUNS; r++) {
      const input: AgentInput = {
        task: 'bench',
        tools: ['calculator'],
        model: { provider: 'scripted', turns },
        policy: { maxSteps: STEPS + 1 },
      };
      const workflowId = `bench-${Date.now()}-${r}`;
      const t0 = performance.now();
      const handle = await client.workflow.start('agentWorkflow', { taskQueue, workflowId, args: [input] });
      const result = (await handle.result()) as AgentResult;
      const total = performance.now() - t0;
      if (result.steps !== STEPS) throw new Error(`expected ${STEPS} steps, got ${result.steps}`);
      if (r === 0) continue; // warm-up: worker caches, first bundle load
      totals.push(total / STEPS);
      const starts = (await handle.query(eventsQuery, {}))
        .filter((e) => e.kind === 'model_started')
        .map((e) => Date.parse(e.at));
      for (let i = 1; i < starts.length; i++) remote.push((starts[i] as number) - (starts[i - 1] as number));
    }
  });
  const bare = await floor(fx);
  await fx.stop();

  console.log(`Agent loop, ${STEPS} steps × ${RUNS} runs, one calculator call per step`);
  console.log(`(a) in process:          ${summary(local)}`);
  console.log(`(b) Temporal dev server: ${summary(remote)}  (workflow-time step intervals)`);
  console.log(`    wall clock per step: ${summary(totals)}  (run duration / steps)`);
  console.log(
    `(c) bare workflow, same shape, wall clock per step: ${summary(bare)}  (Temporal's own cost here)`,
  );
  console.log(
    `agent logic over the bare workflow: p50 ${(percentile(totals, 50) - percentile(bare, 50)).toFixed(2)} ms per step`,
  );
  console.log(
    `added latency per step:  p50 ${(percentile(remote, 50) - percentile(local, 50)).toFixed(2)} ms, p95 ${(percentile(remote, 95) - percentile(local, 95)).toFixed(2)} ms`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
