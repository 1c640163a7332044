/**
 * A run waiting for approval, flooded with maximum-size notifications through raw `notify` signals
 * (the hostile case: a signal skips every validator and is in history before the workflow sees
 * it), on the real dev server. A burst lands in one workflow task; a steady flood follows. The
 * flood may delay the run but never kill it: no workflow task fails on it, the run stays
 * queryable, it continues as new while it waits so each history stays bounded, the approval is
 * taken after the flood, and the run finishes.
 */
import type { AgentInput, AgentResult } from '../../shared/agent';
import { approveToolCallUpdate, stateQuery } from '../../shared/agent';
import { SIZE_BUDGETS } from '../../shared/temporal-limits';
import { notifySignal } from '../../shared/notifications/messages';
import { maxSizeNotification } from '../../bench/chaos/flood';
import type { History } from '../../client/debug/history';
import { SIGNAL_BUDGET_PATCH } from '../../workflows/notifications';
import { withDevWorker } from '../../testkit/dev-server';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { uid } from '../../testkit/temporal';
import { historyBytes, workflowTaskFailures, runChain } from '../../testkit/history';
import { useDevServer } from '../support/environments';

/** Signals sent at once: three times one run's signal budget (about 100 of these). */
const BURST = Number(process.env.SIGNAL_FLOOD_BURST ?? 300);
/** Then a steady flood: twice the rate each held run of the chaos script's full flood gets. */
const STEADY = Number(process.env.SIGNAL_FLOOD_STEADY ?? 100);
const RATE = Number(process.env.SIGNAL_FLOOD_RATE ?? 5);

const dev = useDevServer();

/** The longest a workflow task took, started to completed (the worker's 5 s limit is on this work). */
function longestTaskMs(histories: History[]): number {
  let longest = 0;
  for (const h of histories) {
    const started = new Map<string, number>();
    for (const e of h.events ?? []) {
      const at = Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
      if (e.workflowTaskStartedEventAttributes) started.set(String(e.eventId), at);
      const done = e.workflowTaskCompletedEventAttributes ?? e.workflowTaskFailedEventAttributes;
      const from = done ? started.get(String(done.startedEventId)) : undefined;
      if (from !== undefined) longest = Math.max(longest, at - from);
    }
  }
  return longest;
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // Not there yet (e.g. the query raced a continue-as-new).
    }
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 250));
  }
}

test(`a burst of ${BURST} and ${STEADY} more maximum-size notify signals while a call waits for approval: no task fails, the run stays bounded, takes the approval and finishes`, async () => {
  const input: AgentInput = {
    task: 'Tell the time after approval',
    model: {
      provider: 'scripted',
      turns: [callTurn(['get_time', { timezone: 'UTC' }, 'gate']), answerTurn('Time: {{last_tool_results}}')],
    },
    tools: ['get_time'],
    policy: { approvals: { tools: { get_time: 'always' } }, approvalTimeout: '30 minutes' },
    notify: { user: uid('flooded') },
  };
  await withDevWorker(dev.fx, async (taskQueue) => {
    const handle = await dev.fx.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('signal-flood'),
      args: [input],
    });
    await waitFor(async () => (await handle.query(stateQuery)).status === 'waiting_for_approval');
    const latest = dev.fx.client.workflow.getHandle(handle.workflowId);
    const signal = (i: number) => latest.signal(notifySignal, maxSizeNotification(`flood-${i}`, i));

    let queriesOk = 0;
    let flooding = true;
    const prober = (async () => {
      while (flooding) {
        await latest.query(stateQuery).then(
          () => (queriesOk += 1),
          () => undefined,
        );
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    await Promise.all(Array.from({ length: BURST }, (_, i) => signal(i)));
    const started = Date.now();
    const sends: Promise<void>[] = [];
    for (let i = 0; i < STEADY; i += 1) {
      const wait = started + (i * 1000) / RATE - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      sends.push(signal(BURST + i));
    }
    await Promise.all(sends);
    flooding = false;
    await prober;
    expect(queriesOk).toBeGreaterThan(0);

    await waitFor(
      async () => (await latest.query(stateQuery)).pendingToolCalls[0]?.state === 'awaiting_approval',
    );
    await latest.executeUpdate(approveToolCallUpdate, { args: [{ toolCallId: 'gate', approve: true }] });
    const result = (await latest.result()) as AgentResult;
    expect(result.stopReason).toBe('final_answer');
    expect(result.answer).toMatch(/^Time: /);

    const histories = await runChain(dev.fx.client, handle.workflowId, handle.firstExecutionRunId);
    // No task failed on the flood (before the signal budget, a task holding the burst ran past the
    // worker's 5 s limit, and every retry held more). Two server causes are no failure of the run:
    // it refuses to close a run while new signals arrive (UNHANDLED_COMMAND), and it ends a task
    // early when too many signals queue behind it (FORCE_CLOSE_COMMAND, by the history service);
    // either way it hands the signals over in a new task at once.
    const failures = workflowTaskFailures(histories);
    delete failures.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND;
    delete failures.WORKFLOW_TASK_FAILED_CAUSE_FORCE_CLOSE_COMMAND;
    expect(failures).toEqual({});
    // For the log of a slow machine: the worker's limit is 5 s of workflow code per task.
    console.log(`longest workflow task: ${longestTaskMs(histories)} ms`);
    // The burst met the first run's signal budget: the rest were dropped, the patch marker says so.
    const markers = (histories[0]?.events ?? []).filter((e) =>
      Object.values(e.markerRecordedEventAttributes?.details ?? {}).some((p) =>
        (p.payloads ?? []).some((x) =>
          Buffer.from(x.data ?? [])
            .toString()
            .includes(SIGNAL_BUDGET_PATCH),
        ),
      ),
    );
    expect(markers).toHaveLength(1);
    // A signal is in history before the workflow sees it, so the burst's run holds the burst; it
    // continued as new at once after it. The steady flood made the run continue as new while it
    // waited, each later history bounded by the continue-as-new budget plus what came in meanwhile.
    const [burstRun, ...steadyRuns] = histories.map(historyBytes);
    expect(burstRun).toBeLessThan(
      BURST * SIZE_BUDGETS.notificationBytes + 2 * SIZE_BUDGETS.continueAsNewHistoryBytes,
    );
    expect(steadyRuns.length).toBeGreaterThan(1);
    for (const bytes of steadyRuns) expect(bytes).toBeLessThan(SIZE_BUDGETS.refuseUpdatesHistoryBytes);
  });
}, 600_000);
