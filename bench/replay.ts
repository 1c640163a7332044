/**
 * How long replaying a long agent run takes. Records a 1,000-step scripted run (one calculator
 * call per step) on the dev server — the run continues as new every 100 steps, as long runs do, so
 * it is a chain of histories — then replays every history of the chain against the current code.
 *
 *   npx tsx bench/replay.ts [steps=1000] [continueAsNewAfter=100]
 */
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { replayBundle, replayMany } from '../cli/debug/replay';
import { historyJson } from '../cli/debug/history';
import type { AgentInput, AgentResult } from '../shared/agent';
import { startDevServerFixture, withDevWorker } from '../tests/support/dev-server';
import { tempDir } from '../tests/support/temporal';

const STEPS = Number(process.argv[2] ?? 1000);
const CAN_AFTER = Number(process.argv[3] ?? 100);

async function main() {
  const scripts = tempDir('bench-replay');
  const turns = [];
  for (let i = 1; i < STEPS; i++)
    turns.push({ toolCalls: [{ name: 'calculator', arguments: { expression: `${i}*2` } }] });
  turns.push({ content: 'done' });
  fs.writeFileSync(path.join(scripts, 'long.json'), JSON.stringify({ turns }));

  const fx = await startDevServerFixture();
  const workflowId = `bench-replay-${Date.now()}`;
  const t0 = performance.now();
  const runIds: string[] = [];
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
  const recordMs = performance.now() - t0;
  for await (const w of fx.client.workflow.list({ query: `WorkflowId='${workflowId}'` }))
    runIds.push(w.runId);
  const histories = await Promise.all(
    runIds.map((r) => fx.client.workflow.getHandle(workflowId, r).fetchHistory()),
  );
  await fx.stop();

  const bundle = await replayBundle();
  const events = histories.reduce((n, h) => n + (h.events?.length ?? 0), 0);
  const bytes = histories.reduce((n, h) => n + historyJson(h).length, 0);
  const t1 = performance.now();
  const batch = histories.map((history, i) => ({ history, workflowId: `${workflowId}-${i}` }));
  for await (const outcome of replayMany(bundle, batch)) {
    if (!outcome.ok) throw new Error(`replay failed: ${JSON.stringify(outcome)}`);
  }
  const replayMs = performance.now() - t1;
  console.log(
    `Recorded a ${STEPS}-step run in ${(recordMs / 1000).toFixed(1)} s: ${histories.length} histories (continue-as-new every ${CAN_AFTER} steps), ${events} events, ${(bytes / 1e6).toFixed(1)} MB of JSON`,
  );
  console.log(
    `Replayed all ${histories.length} histories (${STEPS} steps) in ${(replayMs / 1000).toFixed(2)} s (${(replayMs / STEPS).toFixed(2)} ms per step)`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
