/**
 * Re-records the replay histories under tests/replay/histories from real runs on a dev server.
 * Run it on purpose, after a deliberate and versioned workflow change:
 *
 *   npx tsx scripts/record-histories.ts [scenario ...]
 */
import fs from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { closeMcpConnections } from '../activities/mcp';
import { PROJECT_ROOT } from '../shared/project-root';
import { SCENARIOS } from '../testkit/replay-scenarios';
import { startDevServerFixture, withDevWorker } from '../testkit/dev-server';

const OUT = path.join(PROJECT_ROOT, 'tests', 'replay', 'histories');

async function main() {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((w) => !SCENARIOS.some((s) => s.name === w));
  if (unknown.length)
    throw new Error(
      `Unknown scenario(s) ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`,
    );
  const fx = await startDevServerFixture();
  try {
    for (const scenario of SCENARIOS.filter((s) => !wanted.length || wanted.includes(s.name))) {
      await withDevWorker(
        fx,
        async (taskQueue) => {
          const ids = await scenario.run(fx.client, taskQueue, `replay-${scenario.name}`);
          for (const [i, ref] of ids.entries()) {
            const [workflowId, runId] = ref.split('@') as [string, string | undefined];
            const history = await fx.client.workflow.getHandle(workflowId, runId).fetchHistory();
            const file = path.join(OUT, `${scenario.name}${ids.length > 1 ? `-${i + 1}` : ''}.json`);
            fs.writeFileSync(file, `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 1)}\n`);
            console.log(
              `recorded ${path.relative(PROJECT_ROOT, file)} (${history.events?.length ?? 0} events)`,
            );
          }
        },
        scenario.config?.() ?? {},
      );
    }
  } finally {
    // The MCP servers the scenarios configured (stdio processes) end with their connections.
    await closeMcpConnections();
    await fx.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
