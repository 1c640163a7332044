/**
 * Long runs stay within Temporal's limits on the real dev server: large tool results travel by
 * reference, model calls carry only what is new, and a run flooded while it waits for approval
 * continues as new mid-turn instead of growing its history until the server terminates it.
 */
import type { AgentInput, AgentResult } from '../../shared/agent';
import { approveToolCallUpdate, stateQuery, transcriptQuery } from '../../shared/agent';
import { SIZE_BUDGETS } from '../../shared/temporal-limits';
import { notifySignal } from '../../shared/notifications/messages';
import type { History } from '../../client/debug/history';
import { withDevWorker } from '../../testkit/dev-server';
import { answerTurn, callTurn } from '../../testkit/scripts';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir, uid } from '../../testkit/temporal';
import { historyBytes, payloadsBytes, workflowTaskFailures, runChain } from '../../testkit/history';
import { useDevServer } from '../support/environments';

const dev = useDevServer();

/** Sizes of the activity inputs or results in history, by activity type, in order. */
function activityPayloads(
  events: NonNullable<History['events']>,
  which: 'input' | 'result',
): Record<string, number[]> {
  const typeOf = new Map<string, string>();
  const out: Record<string, number[]> = {};
  for (const e of events) {
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled) typeOf.set(String(e.eventId), scheduled.activityType?.name ?? '?');
    const type = scheduled
      ? (scheduled.activityType?.name ?? '?')
      : typeOf.get(String(e.activityTaskCompletedEventAttributes?.scheduledEventId));
    const payload = which === 'input' ? scheduled?.input : e.activityTaskCompletedEventAttributes?.result;
    if (type && payload) (out[type] ??= []).push(payloadsBytes(payload));
  }
  return out;
}

test('45 steps of 60 KB SQL results: the run finishes and history grows by a few KB a step', async () => {
  const steps = 45;
  // A script file, as real runs name their model: inline turns would repeat in every model call.
  const scripts = tempDir('scripts');
  const turns = [
    ...Array.from({ length: steps }, () =>
      callTurn(['sql_query', { sql: 'SELECT repeat(chr(65), 60000) AS big' }]),
    ),
    answerTurn('Read it {{last_tool_results}}'),
  ];
  fs.writeFileSync(path.join(scripts, 'big.json'), JSON.stringify({ turns }));
  const input: AgentInput = {
    task: 'Read the big value 45 times',
    model: { provider: 'scripted', script: 'big' },
    tools: ['sql_query'],
    policy: { maxSteps: steps + 1 },
  };
  await withDevWorker(
    dev.fx,
    async (taskQueue) => {
      const handle = await dev.fx.client.workflow.start('agentWorkflow', {
        taskQueue,
        workflowId: uid('big'),
        args: [input],
      });
      const result = (await handle.result()) as AgentResult;
      expect(result.stopReason).toBe('final_answer');
      expect(result.steps).toBe(steps + 1);
      // The model read the whole last result (60,000 A's), resolved from the content store.
      expect(result.answer).toContain('A'.repeat(60_000));

      const histories = await runChain(dev.fx.client, handle.workflowId, handle.firstExecutionRunId);
      const events = histories.flatMap((h) => h.events ?? []);
      expect(workflowTaskFailures(histories)).toEqual({});
      const total = histories.reduce((n, h) => n + historyBytes(h), 0);
      // Minus the final answer (it quotes 60 KB), a step costs a few KB of history, not 60+.
      expect((total - 80_000) / steps).toBeLessThan(10_000);
      const inputs = activityPayloads(events, 'input');
      const results = activityPayloads(events, 'result');
      // Model calls carry only what is new; SQL results are previews with a reference.
      expect(Math.max(...inputs.callModel!)).toBeLessThan(8_000);
      expect(Math.max(...results.sql_query!)).toBeLessThan(4_000);
      expect(Math.max(...results.callModel!.slice(0, -1))).toBeLessThan(4_000);
    },
    { scriptsDir: scripts },
  );
}, 300_000);

test('a flood of notifications while a call waits for approval: the run continues as new mid-turn, keeps waiting, and finishes', async () => {
  const input: AgentInput = {
    task: 'Compute after approval',
    model: {
      provider: 'scripted',
      turns: [
        callTurn(['calculator', { expression: '6 * 7' }, 'calc-1']),
        answerTurn('Result: {{last_tool_results}}'),
      ],
    },
    tools: ['calculator'],
    policy: { requireApproval: ['calculator'], approvalTimeout: '2 hours' },
  };
  await withDevWorker(dev.fx, async (taskQueue) => {
    const handle = await dev.fx.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('flood'),
      args: [input],
    });
    await waitFor(async () => (await handle.query(stateQuery)).status === 'waiting_for_approval');

    // ~10 KB notifications until the history is past the continue-as-new budget.
    const message = 'flood '.repeat(1700);
    const count = Math.ceil((SIZE_BUDGETS.continueAsNewHistoryBytes * 1.2) / 10_000);
    for (let i = 0; i < count; i += 20) {
      await Promise.all(
        Array.from({ length: Math.min(20, count - i) }, (_, j) =>
          handle.signal(notifySignal, { message: `${i + j} ${message}`, id: `n${i + j}` }),
        ),
      );
    }

    await waitFor(
      async () =>
        (await dev.fx.client.workflow.getHandle(handle.workflowId).describe()).runId !==
        handle.firstExecutionRunId,
    );
    const latest = dev.fx.client.workflow.getHandle(handle.workflowId);
    await waitFor(
      async () => (await latest.query(stateQuery)).pendingToolCalls[0]?.state === 'awaiting_approval',
    );
    const state = await latest.query(stateQuery);
    expect(state.status).toBe('waiting_for_approval');
    expect(state.pendingToolCalls.map((p) => p.toolCallId)).toEqual(['calc-1']);

    await latest.executeUpdate(approveToolCallUpdate, { args: [{ toolCallId: 'calc-1', approve: true }] });
    const result = (await latest.result()) as AgentResult;
    expect(result.answer).toBe('Result: 42');

    const histories = await runChain(dev.fx.client, handle.workflowId, handle.firstExecutionRunId);
    expect(histories.length).toBeGreaterThan(1);
    const events = histories.flatMap((h) => h.events ?? []);
    // Under a flood, continue-as-new may need a few attempts: the server refuses to close a run
    // while new signals arrive. Those are the only failures, and nothing is lost by them.
    for (const cause of Object.keys(workflowTaskFailures(histories))) {
      expect([
        'WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND',
        'WORKFLOW_TASK_FAILED_CAUSE_FORCE_CLOSE_COMMAND',
      ]).toContain(cause);
    }
    // The tool ran once, after the approval, in the continued run.
    const calculatorRuns = events.filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'calculator',
    );
    expect(calculatorRuns).toHaveLength(1);
    expect(
      (histories[0]?.events ?? []).some(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'calculator',
      ),
    ).toBe(false);
    for (const h of histories)
      expect(historyBytes(h)).toBeLessThan(SIZE_BUDGETS.refuseUpdatesHistoryBytes * 2);
    // The conversation is whole in the continued run's transcript.
    const transcript = (await latest.query(transcriptQuery)).entries;
    expect(transcript.map((t) => t.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
  });
}, 300_000);

async function waitFor(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // Not there yet (e.g. the query raced a continue-as-new).
    }
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 200));
  }
}
