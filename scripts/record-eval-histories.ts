/**
 * Records the agent runs whose histories `durable-agent eval` is tested on, and writes each run's
 * history with its content bundle (as `durable-agent export --with-content` does) into
 * tests/fixtures/eval/. The runs use the scripted model, so they record the same decisions every
 * time: a calculation, a run that continues as new (one file per run of the chain) and a run whose
 * tool call a person approves.
 *
 *   npx tsx scripts/record-eval-histories.ts
 */
import fs from 'node:fs';
import path from 'node:path';
import { closeContentStores, collectContent, contentStoreFor } from '../client/debug/content';
import { fetchRunChain } from '../client/eval/sources';
import { historyJson } from '../client/debug/history';
import { decideApproval, listApprovals } from '../client/approval-client';
import type { AgentInput } from '../shared/agent';
import { PROJECT_ROOT } from '../shared/project-root';
import { startDevServerFixture, withDevWorker } from '../testkit/dev-server';
import { testConfig } from '../testkit/temporal';

const OUT = path.join(PROJECT_ROOT, 'tests', 'fixtures', 'eval');

/** The recorded runs: file name, workflow id and input. */
const RUNS: { name: string; input: AgentInput; approve?: boolean }[] = [
  {
    name: 'calculation',
    input: {
      task: 'Multiply 23 by 19.',
      tools: ['get_time', 'calculator', 'notify_user'],
      model: {
        provider: 'scripted',
        turns: [
          { toolCalls: [{ id: 'product', name: 'calculator', arguments: { expression: '23*19' } }] },
          { content: '23 multiplied by 19 is {{result:product}}.' },
        ],
      },
    },
  },
  {
    name: 'continued',
    input: {
      task: 'Add up the hotel (4 nights at 95 EUR), the flight (912 EUR) and the rail pass (350 EUR).',
      tools: ['calculator'],
      policy: { continueAsNewAfterSteps: 2 },
      model: {
        provider: 'scripted',
        turns: [
          { toolCalls: [{ id: 'hotel', name: 'calculator', arguments: { expression: '4*95' } }] },
          { toolCalls: [{ id: 'travel', name: 'calculator', arguments: { expression: '912+350' } }] },
          { toolCalls: [{ id: 'total', name: 'calculator', arguments: { expression: '380+1262' } }] },
          { content: 'All together: {{result:total}} EUR.' },
        ],
      },
    },
  },
  {
    name: 'approval',
    approve: true,
    input: JSON.parse(
      fs.readFileSync(path.join(PROJECT_ROOT, 'examples', 'runs', 'approval.json'), 'utf8'),
    ) as AgentInput,
  },
];

async function main(): Promise<void> {
  fs.mkdirSync(OUT, { recursive: true });
  const fx = await startDevServerFixture();
  const store = contentStoreFor(testConfig().contentStore);
  try {
    await withDevWorker(fx, async (taskQueue) => {
      for (const run of RUNS) {
        const workflowId = `eval-${run.name}`;
        const handle = await fx.client.workflow.start('agentWorkflow', {
          taskQueue,
          workflowId,
          args: [run.input],
          workflowIdConflictPolicy: 'TERMINATE_EXISTING',
        });
        if (run.approve) {
          for (;;) {
            const waiting = (await listApprovals(fx.client, { workflowId }).catch(() => [])).find(
              (a) => a.workflowId === workflowId,
            );
            if (waiting) {
              await decideApproval(fx.client, workflowId, { toolCallId: waiting.toolCallId, approve: true });
              break;
            }
            await new Promise((r) => setTimeout(r, 200));
          }
        }
        await handle.result();
        const chain = await fetchRunChain(fx.client, workflowId);
        for (const [i, { history }] of chain.entries()) {
          const file = path.join(OUT, chain.length > 1 ? `${run.name}-${i + 1}.json` : `${run.name}.json`);
          fs.writeFileSync(file, `${historyJson(history)}\n`);
          const { values, missing } = await collectContent(history, store);
          if (missing.length) throw new Error(`${file}: ${missing.length} stored values are missing`);
          fs.writeFileSync(file.replace(/\.json$/, '.content.json'), `${JSON.stringify(values)}\n`);
          console.log(`wrote ${path.relative(PROJECT_ROOT, file)} (${history.events?.length ?? 0} events)`);
        }
      }
    });
  } finally {
    await closeContentStores();
    await fx.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
