/**
 * Approvals and budgets on the time-skipping test server: the user is asked (and told in place how
 * it ended), decisions with edited arguments, refused decisions that never enter history, a worker
 * restart while a call waits, and token, cost and wall-clock budgets that warn at 80 % and stop at
 * 100 % after a summary turn.
 */
import { PATCHES_AT_START_PATCH } from '../../workflows/agent/patches';
import { notificationDelivery } from '../../client/deliver';
import type { Worker } from '@temporalio/worker';
import type { History } from '@temporalio/common/lib/proto-utils';
import { createAgentWorker } from '../../workers/worker';
import type { AgentEvent, AgentInput, AgentResult, AgentStateView } from '../../shared/agent';
import type { Notification } from '../../shared/notifications/schema';
import { approveToolCallUpdate, eventsQuery, stateQuery, transcriptQuery } from '../../shared/agent';
import { inboxWorkflowId, notificationsQuery } from '../../shared/notifications/messages';
import type { ScriptedTurn } from '../../shared/model';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { buildTimeline } from '../../client/debug/timeline';
import { replayHistory } from '../../client/debug/replay';
import { renderTimeline } from '../../cli/debug/render';
import { testConfig, uid, workflowBundle } from '../../testkit/temporal';
import { useTimeSkippingEnv } from '../support/environments';

const temporal = useTimeSkippingEnv();

/** Tool calls the instrumented tools ran. */
type Calls = { name: string; toolCallId: string; args: unknown }[];

async function agentWorker(taskQueue: string, calls: Calls, cache?: number): Promise<Worker> {
  const record =
    (name: string) =>
    async (input: ToolActivityInput<unknown>): Promise<ToolResult> => {
      calls.push({ name, toolCallId: input.toolCallId, args: input.args });
      return { content: `${name} done: ${JSON.stringify(input.args)}` };
    };
  return createAgentWorker({
    connection: temporal.env.nativeConnection,
    namespace: temporal.env.namespace ?? 'default',
    // Inboxes start on the worker's own queue; raised notifications are signalled with this client.
    config: testConfig({ taskQueue }),
    deliver: notificationDelivery(temporal.env.client, taskQueue),
    taskQueue,
    workflowBundle: await workflowBundle(),
    activityOverrides: { calculator: record('calculator'), send_email: record('send_email') },
    ...(cache !== undefined ? { maxCachedWorkflows: cache } : {}),
  });
}

async function withWorker<T>(fn: (taskQueue: string, calls: Calls) => Promise<T>): Promise<T> {
  const taskQueue = uid('tq');
  const calls: Calls = [];
  const worker = await agentWorker(taskQueue, calls);
  return worker.runUntil(fn(taskQueue, calls));
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const mail = { to: ['ann@example.com'], subject: 'Invoices', text: 'See attached.' };

function mailRun(user: string, timeout: string, turns?: ScriptedTurn[]): AgentInput {
  return {
    task: 'send the invoices',
    tools: ['send_email'],
    notify: { user },
    policy: { approvalTimeout: timeout },
    model: {
      provider: 'scripted',
      turns: turns ?? [callTurn(['send_email', mail, 's1']), answerTurn('{{last_tool_results}}')],
    },
  };
}

/** Update payloads accepted into history (decoded), in order. */
/** Accepted `approveToolCall` updates (the run's own notices arrive by the `notify` update too). */
function acceptedUpdates(history: History): unknown[] {
  return (history.events ?? [])
    .filter(
      (e) =>
        e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'approveToolCall',
    )
    .map((e) => {
      const data = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.args
        ?.payloads?.[0]?.data as Uint8Array;
      return JSON.parse(Buffer.from(data).toString('utf8')) as unknown;
    });
}

test('an approval left for its full timeout: the user is asked, the call is refused, the notice updated in place', async () => {
  await withWorker(async (taskQueue, calls) => {
    const user = uid('user');
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('timeout'),
      args: [mailRun(user, '2 hours')],
    });
    // No approval setting: send_email asks by default.
    const state = await until('the approval', async () => {
      const s = await handle.query(stateQuery);
      return s.approvals?.length ? s : undefined;
    });
    expect(state.status).toBe('waiting_for_approval');
    expect(state.approvals?.[0]).toMatchObject({
      toolCallId: 's1',
      tool: 'send_email',
      args: mail,
      summary: 'to: ann@example.com; subject: "Invoices"; text: "See attached."',
      reason: 'every email needs approval (recipients: ann@example.com)',
    });
    const asked = await until('the request in the inbox', async () => {
      const inbox = await temporal.env.client.workflow
        .getHandle(inboxWorkflowId(user))
        .query(notificationsQuery);
      return inbox.notifications.find((n) => n.title === 'Approval needed: send_email');
    });
    expect(asked).toMatchObject({ type: 'warning', priority: 20, group: 'approvals' });
    expect(asked.message).toContain(`until ${state.approvals?.[0]?.deadline}`);
    expect(asked.message).toContain('Asked: to: ann@example.com; subject: "Invoices"');
    expect(asked.detail).toContain(`durable-agent approve ${handle.workflowId} s1`);
    expect(asked.detail).toContain(`POST /api/approvals/${handle.workflowId}/s1`);

    const result = (await handle.result()) as AgentResult;
    expect(result.stopReason).toBe('final_answer');
    expect(result.answer).toMatch(/Approval for send_email timed out after 2 hours; the call was not made/);
    expect(calls).toHaveLength(0);
    for (const box of [handle, temporal.env.client.workflow.getHandle(inboxWorkflowId(user))]) {
      const { notifications } = await box.query(notificationsQuery);
      const mine = notifications.filter((n) => n.id === asked.id);
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({
        title: 'Approval timed out: send_email',
        type: 'warning',
        read: false,
      });
    }
  });
}, 300_000);

test('an approval given after 3 h proceeds with edited, re-validated arguments; refused decisions never enter history', async () => {
  await withWorker(async (taskQueue, calls) => {
    const user = uid('user');
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('edited'),
      args: [mailRun(user, '1 day')],
    });
    await until('the approval', async () => (await handle.query(stateQuery)).approvals?.length);
    await temporal.env.sleep('3 hours');

    const refusal = (decision: object) =>
      handle.executeUpdate(approveToolCallUpdate, { args: [decision as never] }).then(
        () => 'accepted',
        (e: Error & { cause?: Error }) => e.cause?.message ?? e.message,
      );
    expect(await refusal({ toolCallId: 'ghost', approve: true })).toBe(
      'No tool call ghost is waiting for approval; waiting: s1',
    );
    expect(await refusal({ toolCallId: 's1', approve: true, args: { to: [], subject: 'x' } })).toMatch(
      /^The edited arguments for send_email are invalid: to: .*; text: give text and\/or html$/,
    );
    expect(await refusal({ toolCallId: 's1', approve: false, args: mail })).toMatch(
      /Edited arguments go with an approval/,
    );
    const edited = { to: ['bob@example.com'], subject: 'Invoices (edited)', text: 'Only the summary.' };
    expect(
      await handle.executeUpdate(approveToolCallUpdate, {
        args: [{ toolCallId: 's1', approve: true, args: edited }],
      }),
    ).toEqual({ toolCallId: 's1', approved: true, editedArgs: true });
    expect(await refusal({ toolCallId: 's1', approve: true })).toMatch(
      /^(Tool call s1 was already decided|No tool call s1 is waiting for approval; none is waiting)$/,
    );

    const result = (await handle.result()) as AgentResult;
    expect(calls).toEqual([{ name: 'send_email', toolCallId: 's1', args: edited }]);
    // The result is the tool's value alone (a model quoting it quotes the value); the edit is told
    // in a message of its own after it.
    const value = `send_email done: ${JSON.stringify(edited)}`;
    expect(result.answer).toBe(value);
    const { entries } = await handle.query(transcriptQuery);
    const at = entries.findIndex((e) => e.role === 'tool' && e.toolCallId === 's1');
    expect(entries[at]?.text).toBe(value);
    expect(entries[at + 1]).toMatchObject({
      role: 'user',
      text: `(The user approved the send_email call s1 with edited arguments: ${JSON.stringify(edited)}. Its result comes from these arguments, not the ones you sent.)`,
    });

    // Only the accepted decision is in history; the refused ones left no trace.
    const history = await handle.fetchHistory();
    expect(acceptedUpdates(history)).toEqual([{ toolCallId: 's1', approve: true, args: edited }]);
    expect(JSON.stringify(history)).not.toContain('workflowExecutionUpdateRejected');
    // The wait's timer is named for its call, and the transcript shows it ended by the approval.
    const timer = (history.events ?? []).find((e) => e.timerStartedEventAttributes);
    const summary = timer?.userMetadata?.summary?.data;
    expect(summary && JSON.parse(Buffer.from(summary).toString('utf8'))).toBe(
      'approval timeout for send_email (s1)',
    );
    // A run on the new path (the note apart, behind its patch marker) replays.
    const patches = (history.events ?? []).flatMap((e) => {
      const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
      return data ? [(JSON.parse(Buffer.from(data).toString('utf8')) as { id: string }).id] : [];
    });
    expect(patches).toContain(PATCHES_AT_START_PATCH); // so approval-edit-note-apart
    expect(await replayHistory(await workflowBundle(), history, handle.workflowId)).toEqual({
      workflowId: handle.workflowId,
      ok: true,
    });
    const transcript = renderTimeline(buildTimeline(history), 'text');
    expect(transcript).toMatch(
      /update approveToolCall .*\n.* approval timeout for send_email \(s1\) cancelled after [\d.]+ s: approved with edited arguments\n/,
    );

    const events = await handle.query(eventsQuery, {});
    const requested = events.find((e) => e.kind === 'approval_requested');
    const decided = events.find((e) => e.kind === 'approval_decided');
    expect(decided).toMatchObject({
      args: edited,
      text: expect.stringMatching(/^approved with edited arguments/),
    });
    expect(Date.parse(decided!.at) - Date.parse(requested!.at)).toBeGreaterThanOrEqual(3 * 3600_000);

    const { notifications } = await handle.query(notificationsQuery);
    expect(notifications).toHaveLength(1);
    expect(notifications[0]).toMatchObject({ title: 'Approved: send_email', type: 'info', priority: 10 });
  });
}, 300_000);

test('a worker restart while an approval waits changes nothing', async () => {
  const taskQueue = uid('tq');
  const calls: Calls = [];
  // No workflow cache, so no sticky queue: the run's next task goes to whichever worker polls.
  const first = await agentWorker(taskQueue, calls, 0);
  const handle = await first.runUntil(async () => {
    const h = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('restart'),
      args: [mailRun(uid('user'), '1 day')],
    });
    await until('the approval', async () => (await h.query(stateQuery)).approvals?.length);
    return h;
  });
  // The first worker is gone; a new one (empty cache) picks the run up by replaying its history.
  const second = await agentWorker(taskQueue, calls, 0);
  await second.runUntil(async () => {
    await temporal.env.sleep('1 minute');
    const before = await handle.query(stateQuery);
    expect(before.approvals?.map((a) => a.toolCallId)).toEqual(['s1']);
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ toolCallId: 's1', approve: true }] });
    const result = (await handle.result()) as AgentResult;
    expect(result.stopReason).toBe('final_answer');
  });
  expect(calls.map((c) => c.toolCallId)).toEqual(['s1']);
  const history = await handle.fetchHistory();
  expect((history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes).length).toBe(0);
}, 300_000);

/** A run of `n` calculator turns, each reporting `usage`, then the summary the budget stop asks for. */
function budgetRun(
  policy: AgentInput['policy'],
  usage: { inputTokens: number; outputTokens: number },
  n = 8,
) {
  const turns: ScriptedTurn[] = [];
  for (let i = 1; i <= n; i++) {
    turns.push({
      ...callTurn(['calculator', { expression: `${i}+${i}` }, `c${i}`]),
      usage,
      content: `summary after ${i} steps`,
    });
  }
  return {
    task: 'compute',
    tools: ['calculator'],
    policy,
    notify: { user: uid('user') },
    model: { provider: 'scripted' as const, turns },
  } satisfies AgentInput;
}

async function runBudget(input: AgentInput): Promise<{
  result: AgentResult;
  state: AgentStateView;
  events: AgentEvent[];
  notes: Notification[];
  calls: Calls;
}> {
  return withWorker(async (taskQueue, calls) => {
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('budget'),
      args: [input],
    });
    const result = (await handle.result()) as AgentResult;
    // One query at a time: concurrent queries of a closed workflow on the time-skipping test server
    // can leave one waiting ~75 s for its query task.
    const state = await handle.query(stateQuery);
    const events = await handle.query(eventsQuery, {});
    const box = await handle.query(notificationsQuery);
    const inbox = await temporal.env.client.workflow
      .getHandle(inboxWorkflowId(input.notify!.user))
      .query(notificationsQuery);
    expect(inbox.notifications.map((n) => n.title)).toEqual(box.notifications.map((n) => n.title));
    const transcript = await handle.query(transcriptQuery);
    // The summary turn was offered no tools and ran none.
    expect(transcript.entries.at(-2)?.text).toMatch(
      /^The run's budget is used up \(.*\)\. Do not call tools\./,
    );
    return { result, state, events, notes: [...box.notifications], calls };
  });
}

test('a token budget warns once at 80 % and stops at 100 % with a summary turn', async () => {
  // 200 tokens a turn against 1,000: 800 after step 4 (warn), 1,000 after step 5 (stop).
  const { result, events, notes, calls } = await runBudget(
    budgetRun({ maxTokens: 1000 }, { inputTokens: 150, outputTokens: 50 }),
  );
  expect(events.filter((e) => e.kind === 'budget_warning').map((e) => [e.step, e.text])).toEqual([
    [4, 'Budget warning: 800 of 1,000 tokens (input + output) (80 %) used; the run stops at 100 %.'],
  ]);
  expect(calls).toHaveLength(5);
  expect(result).toMatchObject({
    stopReason: 'max_tokens',
    steps: 6,
    answer: 'summary after 6 steps',
    budget: '1,000 of 1,000 tokens (input + output) (100 %)',
  });
  expect(notes.map((n) => [n.type, n.title])).toEqual([
    ['warning', 'Budget at 80 %: max_tokens'],
    ['error', 'Run stopped: max_tokens budget reached'],
  ]);
  expect(notes[1]?.message).toContain('Summary: summary after 6 steps');
}, 300_000);

test('a cost budget (run prices) warns once at 80 % and stops at 100 % with a summary turn', async () => {
  // $0.25 a turn against $1.25: $1.00 after step 4 (warn), $1.25 after step 5 (stop).
  const { result, state, events, notes, calls } = await runBudget(
    budgetRun(
      { maxCostUsd: 1.25, prices: { scripted: { inputPerMillion: 1000, outputPerMillion: 2000 } } },
      { inputTokens: 150, outputTokens: 50 },
    ),
  );
  expect(events.filter((e) => e.kind === 'budget_warning').map((e) => e.step)).toEqual([4]);
  expect(calls).toHaveLength(5);
  expect(result).toMatchObject({
    stopReason: 'max_cost',
    steps: 6,
    answer: 'summary after 6 steps',
    budget: '$1.2500 of $1.2500 cost (USD) (100 %)',
    costUsd: 1.5,
  });
  expect(state.budgets?.max_cost).toEqual({ used: 1.5, max: 1.25 });
  expect(notes.map((n) => n.title)).toEqual([
    'Budget at 80 %: max_cost',
    'Run stopped: max_cost budget reached',
  ]);
}, 300_000);

test('a wall-clock budget (durable timers) warns at 80 % and ends a waiting approval at 100 %', async () => {
  // Each call waits 3 h for an approval that never comes; 10 h in all: the warning comes at 8 h
  // (step 3), and at 10 h the fourth wait ends and the run stops.
  const input = budgetRun(
    { maxWallClock: '10 hours', requireApproval: ['calculator'], approvalTimeout: '3 hours' },
    { inputTokens: 1, outputTokens: 1 },
  );
  const { result, events, notes, calls } = await runBudget(input);
  expect(events.filter((e) => e.kind === 'budget_warning').map((e) => [e.step, e.text])).toEqual([
    [3, expect.stringMatching(/^Budget warning: 28,80\d of 36,000 s wall-clock time \(80 %\)/)],
  ]);
  expect(calls).toHaveLength(0);
  const decided = events.filter((e) => e.kind === 'approval_decided').map((e) => e.text);
  expect(decided.slice(0, 3)).toEqual(Array(3).fill(expect.stringMatching(/timed out after 3 hours/)));
  expect(decided[3]).toMatch(
    /^The run stopped \(36,000 of 36,000 s wall-clock time \(100 %\)\) while calculator waited/,
  );
  expect(result).toMatchObject({ stopReason: 'max_wall_clock', steps: 5, answer: 'summary after 5 steps' });
  expect(notes.filter((n) => n.group !== 'approvals').map((n) => n.title)).toEqual([
    'Budget at 80 %: max_wall_clock',
    'Run stopped: max_wall_clock budget reached',
  ]);
}, 300_000);

test('budgets and their warnings are kept across continue-as-new', async () => {
  // The same token budget as above, continuing as new after every second step.
  const { result, state, events, notes } = await runBudget(
    budgetRun({ maxTokens: 1000, continueAsNewAfterSteps: 2 }, { inputTokens: 150, outputTokens: 50 }),
  );
  expect(state.continuations).toBe(2);
  expect(events.filter((e) => e.kind === 'budget_warning').map((e) => e.step)).toEqual([4]);
  expect(result).toMatchObject({ stopReason: 'max_tokens', steps: 6, answer: 'summary after 6 steps' });
  expect(result.usage).toMatchObject({ inputTokens: 900, outputTokens: 300, modelCalls: 6, toolCalls: 5 });
  expect(notes.map((n) => n.title)).toEqual([
    'Budget at 80 %: max_tokens',
    'Run stopped: max_tokens budget reached',
  ]);
}, 300_000);
