/**
 * The approvals gauges read from a real dev server: visibility counts the runs waiting for
 * approval, and their `state` queries say since when each call waits (`requestedAt`), so the age of
 * the oldest wait is known whichever worker holds the run.
 */
import type { AgentInput, AgentStateView } from '../../shared/agent';
import { stateQuery } from '../../shared/agent';
import { startAgentRun } from '../../client/start-run';
import { withDevWorker } from '../../testkit/dev-server';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { uid } from '../../testkit/temporal';
import { oldestWaitSeconds, waitingForApprovalQuery } from '../../workers/observability/approvals-gauge';
import { useDevServer } from '../support/environments';

const dev = useDevServer({ queue: 'gauge' });

test('the oldest approval wait is the age of the earliest requestedAt among the waiting runs', async () => {
  await withDevWorker(dev.fx, async (taskQueue) => {
    const input: AgentInput = {
      task: 'needs approval',
      tools: ['calculator'],
      policy: { requireApproval: ['calculator'] },
      model: {
        provider: 'scripted',
        turns: [callTurn(['calculator', { expression: '1+1' }, 'c']), answerTurn('x')],
      },
    };
    const first = await startAgentRun(dev.fx.client, input, { workflowId: uid('gauge-a'), taskQueue });
    let state: AgentStateView | undefined;
    for (let i = 0; i < 100 && !state?.approvals?.length; i++) {
      await new Promise((r) => setTimeout(r, 100));
      state = await first.query(stateQuery).catch(() => undefined);
    }
    const requestedAt = Date.parse(state?.approvals?.[0]?.requestedAt ?? '');
    expect(requestedAt).toBeGreaterThan(Date.now() - 60_000);
    // The deadline is the request plus the policy's timeout (1 hour by default).
    expect(Date.parse(state?.approvals?.[0]?.deadline ?? '') - requestedAt).toBe(3_600_000);
    await new Promise((r) => setTimeout(r, 1500));
    await startAgentRun(dev.fx.client, input, { workflowId: uid('gauge-b'), taskQueue });
    const query = waitingForApprovalQuery(taskQueue);
    // Visibility sees both once their search attributes say so.
    for (let i = 0; i < 100 && (await dev.fx.client.workflow.count(query)).count < 2; i++)
      await new Promise((r) => setTimeout(r, 100));
    const now = Date.now();
    const seconds = await oldestWaitSeconds(dev.fx.client, query, now);
    expect(seconds).toBeCloseTo((now - requestedAt) / 1000, 1);
    expect(seconds).toBeGreaterThanOrEqual(1.5);
    // None waits: nothing is old.
    expect(await oldestWaitSeconds(dev.fx.client, waitingForApprovalQuery(uid('empty')), now)).toBe(0);
    await first.cancel();
  });
}, 60_000);
