/**
 * An agent run's search attributes on the dev server (which registers them), for runs started as
 * the CLI starts them: a status change shows at once (with the step and tool of that moment), the
 * step and last tool otherwise every STEP_ATTRIBUTE_EVERY_STEPS steps (or STEP_ATTRIBUTE_EVERY_MS
 * of workflow time), and the end of a run exactly. Each upsert is a history event and a visibility
 * write on the server. A run started without them (a plain Temporal client) sets its memo and
 * search attributes itself, once.
 */
import { PATCHES_AT_START_PATCH } from '../../workflows/agent/patches';
import { startAgentRun } from '../../client/start-run';
import type { History } from '../../client/debug/history';
import type { AgentInput, AgentResult } from '../../shared/agent';
import { approveToolCallUpdate, eventsQuery, stateQuery } from '../../shared/agent';
import { AgentLastToolKey, AgentStatusKey, AgentStepKey } from '../../shared/search-attributes';
import type { ScriptedTurn } from '../../shared/model';
import {
  SELF_DESCRIBED_RUN_PATCH,
  STEP_ATTRIBUTE_EVERY_STEPS,
} from '../../workflows/agent/search-attributes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { agentWorkerOn } from '../../testkit/agent-worker';
import { uid } from '../../testkit/temporal';
import { useLocalEnv } from '../support/environments';

const temporal = useLocalEnv();

async function withWorker<T>(fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = uid('sa');
  return (await agentWorkerOn(temporal.env, taskQueue)).runUntil(fn(taskQueue));
}

/** The values of each upsert of the agent's attributes in the history, in order (not the SDK's patch upserts). */
function upserts(history: History): Record<string, unknown>[] {
  return (history.events ?? []).flatMap((e) => {
    const fields = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
    if (!fields || !('AgentStatus' in fields)) return [];
    return [
      Object.fromEntries(
        Object.entries(fields).map(([k, p]) => [k, JSON.parse(Buffer.from(p.data ?? []).toString())]),
      ),
    ];
  });
}

function markers(history: History): string[] {
  return (history.events ?? []).flatMap((e) => {
    const id = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
    return id ? [JSON.parse(Buffer.from(id).toString()).id as string] : [];
  });
}

function input(turns: ScriptedTurn[], tools: string[], policy: AgentInput['policy'] = {}): AgentInput {
  return {
    task: 'search attributes',
    tools,
    model: { provider: 'scripted', turns },
    policy: { maxSteps: turns.length + 1, ...policy },
  };
}

test('a quick run upserts its step every few steps, not at every step; the end shows exactly', async () => {
  const steps = 25;
  const turns = [
    ...Array.from({ length: steps - 1 }, (_, i) =>
      callTurn([i % 2 ? 'calculator' : 'get_time', i % 2 ? { expression: `${i}+1` } : { timezone: 'UTC' }]),
    ),
    answerTurn('done'),
  ];
  const { history, shown } = await withWorker(async (taskQueue) => {
    const handle = await startAgentRun(temporal.env.client, input(turns, ['calculator', 'get_time']), {
      taskQueue,
      workflowId: uid('sa-run'),
    });
    expect(((await handle.result()) as AgentResult).steps).toBe(steps);
    return { history: await handle.fetchHistory(), shown: (await handle.describe()).typedSearchAttributes };
  });
  expect(markers(history)).toContain(PATCHES_AT_START_PATCH); // so upserts on change (search-attributes-on-change)

  const all = upserts(history);
  // Every 5th step and the end (before: one upsert per step, 25).
  expect(STEP_ATTRIBUTE_EVERY_STEPS).toBe(5);
  expect(all.map((u) => u.AgentStep)).toEqual([5, 10, 15, 20, 25]);
  expect(all.slice(0, -1).every((u) => u.AgentStatus === 'running')).toBe(true);
  expect(all.at(-1)).toMatchObject({ AgentStatus: 'completed', AgentStep: steps });
  // Each shows the tool of its moment (odd steps get_time, even ones calculator; the answer none).
  expect(all.map((u) => u.AgentLastTool)).toEqual([
    'get_time',
    'calculator',
    'get_time',
    'calculator',
    'calculator',
  ]);

  expect(shown.get(AgentStatusKey)).toBe('completed');
  expect(shown.get(AgentStepKey)).toBe(steps);
  expect(shown.get(AgentLastToolKey)).toBe('calculator');
}, 120_000);

test('a status change shows at once, with the step and the tool of that moment', async () => {
  const turns = [
    callTurn(['calculator', { expression: '1+1' }]),
    callTurn(['get_time', { timezone: 'UTC' }, 'g1']),
    answerTurn('done'),
  ];
  await withWorker(async (taskQueue) => {
    const handle = await startAgentRun(
      temporal.env.client,
      input(turns, ['calculator', 'get_time'], { requireApproval: ['get_time'], approvalTimeout: '1 day' }),
      { taskQueue, workflowId: uid('sa-wait') },
    );
    const deadline = Date.now() + 30_000;
    while ((await handle.query(stateQuery)).status !== 'waiting_for_approval') {
      if (Date.now() > deadline) throw new Error('the run did not wait for the approval');
      await new Promise((r) => setTimeout(r, 100));
    }
    const waiting = (await handle.describe()).typedSearchAttributes;
    expect(waiting.get(AgentStatusKey)).toBe('waiting_for_approval');
    expect(waiting.get(AgentStepKey)).toBe(2);
    expect(waiting.get(AgentLastToolKey)).toBe('calculator');

    await handle.executeUpdate(approveToolCallUpdate, { args: [{ toolCallId: 'g1', approve: true }] });
    expect(((await handle.result()) as AgentResult).answer).toBe('done');
    const history = await handle.fetchHistory();
    expect(upserts(history).map((u) => [u.AgentStatus, u.AgentStep])).toEqual([
      ['waiting_for_approval', 2],
      ['running', 2],
      ['completed', 3],
    ]);
    const end = (await handle.describe()).typedSearchAttributes;
    expect(end.get(AgentLastToolKey)).toBe('get_time');
  });
}, 120_000);

test('continuing as new leaves the execution it ends as it was, not failed', async () => {
  const turns = [
    ...Array.from({ length: 4 }, (_, i) => callTurn(['calculator', { expression: `${i}+1` }])),
    answerTurn('done'),
  ];
  await withWorker(async (taskQueue) => {
    const workflowId = uid('sa-can');
    const handle = await startAgentRun(
      temporal.env.client,
      input(turns, ['calculator'], { continueAsNewAfterSteps: 2 }),
      { taskQueue, workflowId },
    );
    expect(((await handle.result()) as AgentResult).answer).toBe('done');
    const first = temporal.env.client.workflow.getHandle(workflowId, handle.firstExecutionRunId);
    const history = await first.fetchHistory();
    const events = history.events ?? [];
    expect(events.some((e) => e.workflowExecutionContinuedAsNewEventAttributes)).toBe(true);
    expect(markers(history)).toContain(PATCHES_AT_START_PATCH); // so continue-as-new-not-failed
    // Before: an upsert of AgentStatus "failed" just before the continue-as-new.
    expect(upserts(history).map((u) => u.AgentStatus)).not.toContain('failed');
    expect((await first.describe()).typedSearchAttributes.get(AgentStatusKey)).not.toBe('failed');
    const log = await first.query(eventsQuery, {});
    expect(log.filter((e) => e.kind === 'error')).toEqual([]);
  });
}, 120_000);

test('only a run whose starter gave it no memo and no attributes sets them itself, each only once', async () => {
  const turns = [
    ...Array.from({ length: 3 }, (_, i) => callTurn(['calculator', { expression: `${i}+1` }])),
    answerTurn('done'),
  ];
  const { client } = temporal.env;
  await withWorker(async (taskQueue) => {
    // Started by the start function: it sets neither its memo nor its first attributes itself.
    const ours = await startAgentRun(client, input(turns, ['calculator']), {
      taskQueue,
      workflowId: uid('sa-ours'),
    });
    await ours.result();
    const oursHistory = await ours.fetchHistory();
    expect(markers(oursHistory)).not.toContain(SELF_DESCRIBED_RUN_PATCH);
    expect((oursHistory.events ?? []).filter((e) => e.workflowPropertiesModifiedEventAttributes)).toEqual([]);

    const workflowId = uid('sa-plain');
    const plain = await client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId,
      args: [input(turns, ['calculator'], { continueAsNewAfterSteps: 2 })],
    });
    expect(((await plain.result()) as AgentResult).answer).toBe('done');
    const first = await client.workflow.getHandle(workflowId, plain.firstExecutionRunId).fetchHistory();
    expect(markers(first)).toContain(PATCHES_AT_START_PATCH); // so it describes itself (run-describes-itself)
    expect(upserts(first)[0]).toEqual({ AgentStatus: 'running', AgentStep: 0, AgentModel: 'scripted' });
    const memoEvents = (h: History) =>
      (h.events ?? []).filter((e) => e.workflowPropertiesModifiedEventAttributes).length;
    expect(memoEvents(first)).toBe(1);
    // The execution it continued as keeps the search attributes (the server carries them on) and sets
    // only its memo again (the server carries on a start's memo, not one set since).
    const last = await plain.fetchHistory();
    expect(last.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId).toBeTruthy();
    expect(markers(last)).toContain(PATCHES_AT_START_PATCH);
    expect(memoEvents(last)).toBe(1);
    expect(upserts(last)).toEqual([
      { AgentStatus: 'completed', AgentStep: 4, AgentLastTool: 'calculator', AgentModel: 'scripted' },
    ]);
    const described = await plain.describe();
    expect(described.memo).toEqual({ task: 'search attributes' });
    expect(described.typedSearchAttributes.get(AgentStatusKey)).toBe('completed');
    expect(described.typedSearchAttributes.get(AgentStepKey)).toBe(4);
  });
}, 120_000);
