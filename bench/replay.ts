/**
 * How long replaying a long agent run takes. Records a 1,000-step scripted run (one calculator
 * call per step) on the dev server — the run continues as new every 100 steps, as long runs do, so
 * it is a chain of histories — then replays every history of the chain against the current code.
 * For scale it also replays the floor: a bare workflow with the same number of workflow tasks and
 * activities (two per step) and no agent logic, which is the SDK's own replay cost on this machine.
 *
 *   npx tsx bench/replay.ts [steps=1000] [continueAsNewAfter=100]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { History } from '../cli/debug/history';
import { historyJson } from '../cli/debug/history';
import { replayBundle, replayMany } from '../cli/debug/replay';
import { floorBundle, withFloorWorker } from './fixtures/floor';
import type { AgentInput, AgentResult } from '../shared/agent';
import type { DevServerFixture } from '../tests/support/dev-server';
import { startDevServerFixture, withDevWorker } from '../tests/support/dev-server';
import { tempDir, uid } from '../tests/support/temporal';

const STEPS = Number(process.argv[2] ?? 1000);
const CAN_AFTER = Number(process.argv[3] ?? 100);
const LANES = Math.max(1, Math.min(4, os.availableParallelism()));

async function recordAgentRun(fx: DevServerFixture): Promise<History[]> {
  const scripts = tempDir('bench-replay');
  const turns = [];
  for (let i = 1; i < STEPS; i++)
    turns.push({ toolCalls: [{ name: 'calculator', arguments: { expression: `${i}*2` } }] });
  turns.push({ content: 'done' });
  fs.writeFileSync(path.join(scripts, 'long.json'), JSON.stringify({ turns }));
  const workflowId = uid('bench-replay');
  await withDevWorker(
    fx,
    async (taskQueue) => {
      const input: AgentInput = {
        task: 'long run',
        tools: ['calculator'],
        model: { provider: 'scripted', script: 'long' },
        policy: { maxSteps: STEPS + 1, continueAsNewAfterSteps: CAN_AFTER },
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

async function timeReplay(bundle: WorkflowBundleWithSourceMap, histories: History[]) {
  const batch = histories.map((history, i) => ({ history, workflowId: `h${i}` }));
  const t = performance.now();
  for await (const outcome of replayMany(bundle, batch, LANES)) {
    if (!outcome.ok) throw new Error(`replay failed: ${JSON.stringify(outcome)}`);
  }
  return performance.now() - t;
}

async function main() {
  const fx = await startDevServerFixture();
  const bareBundle = await floorBundle();
  const t0 = performance.now();
  let agent: History[];
  let floor: History[];
  try {
    agent = await recordAgentRun(fx);
    floor = await recordFloor(fx, bareBundle);
  } finally {
    await fx.stop();
  }
  const recordMs = performance.now() - t0;
  const bundle = await replayBundle();
  const events = agent.reduce((n, h) => n + (h.events?.length ?? 0), 0);
  const bytes = agent.reduce((n, h) => n + historyJson(h).length, 0);
  await timeReplay(bundle, agent.slice(0, 1)); // warm-up: first worker thread and bundle load
  const agentMs = await timeReplay(bundle, agent);
  const floorMs = await timeReplay(bareBundle, floor);
  console.log(
    `Recorded a ${STEPS}-step run (and the floor) in ${(recordMs / 1000).toFixed(1)} s: ${agent.length} histories (continue-as-new every ${CAN_AFTER} steps), ${events} events, ${(bytes / 1e6).toFixed(1)} MB of JSON`,
  );
  console.log(
    `Replayed all ${agent.length} histories (${STEPS} steps) in ${(agentMs / 1000).toFixed(2)} s (${(agentMs / STEPS).toFixed(2)} ms per step, ${LANES} replay lanes on ${os.availableParallelism()} cores)`,
  );
  console.log(
    `Floor (bare workflow, same ${STEPS} steps × 2 activities, same lanes): ${(floorMs / 1000).toFixed(2)} s (${(floorMs / STEPS).toFixed(2)} ms per step); the agent logic adds ${((agentMs - floorMs) / STEPS).toFixed(2)} ms per step`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
