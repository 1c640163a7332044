/**
 * Questions (`ask_user`) and client-side tools on the time-skipping test server, answered through
 * the client library (client/questions.ts): a choice answered after refused answers (wrong type,
 * unknown choice, 1 MB, HTML kept as text) that never enter history, two answers at once, the
 * notification updated in place, timeouts with and without a default, a client tool's call and
 * result, the wall clock standing still while a question waits (and ticking when the policy says
 * so), and a sub-agent's question answered once.
 */
import { recordedModelSteps } from '../../client/eval/eval';
import { planFork } from '../../client/debug/fork';
import type { WorkflowHandle } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils';
import type { AgentEvent, AgentInput, AgentResult, AgentStateView } from '../../shared/agent';
import { childWorkflowId, eventsQuery, stateQuery, transcriptQuery } from '../../shared/agent';
import type { ScriptedTurn } from '../../shared/model';
import { inboxWorkflowId, notificationsQuery } from '../../shared/notifications/messages';
import {
  QuestionRequestError,
  answerQuestion,
  listQuestions,
  submitToolResult,
  waitForQuestions,
} from '../../client/questions';
import { replayHistory } from '../../client/debug/replay';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { agentWorkerOn } from '../../testkit/agent-worker';
import { uid, workflowBundle } from '../../testkit/temporal';
import { useTimeSkippingEnv } from '../support/environments';

const temporal = useTimeSkippingEnv();

const CITIES = { enum: ['Lisbon', 'Porto', 'Faro'] };

function scripted(...turns: ScriptedTurn[]): AgentInput['model'] {
  return { provider: 'scripted', turns };
}

async function withWorker<T>(fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = uid('tq');
  const worker = await agentWorkerOn(temporal.env, taskQueue);
  return worker.runUntil(fn(taskQueue));
}

async function start(taskQueue: string, input: AgentInput, id = uid('ask')): Promise<WorkflowHandle> {
  return temporal.env.client.workflow.start('agentWorkflow', { taskQueue, workflowId: id, args: [input] });
}

/** Polls the run's state (real time: the test server skips only timers a result waits on). */
async function until(workflowId: string, check: (s: AgentStateView) => boolean): Promise<AgentStateView> {
  for (let i = 0; i < 300; i += 1) {
    try {
      const s = await temporal.env.client.workflow.getHandle(workflowId).query(stateQuery);
      if (check(s)) return s;
    } catch {
      // not started yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${workflowId}: the state never matched`);
}

/** The `answerQuestion` updates accepted into history, decoded. */
function acceptedAnswers(history: History): unknown[] {
  return (history.events ?? [])
    .filter(
      (e) =>
        e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'answerQuestion',
    )
    .map((e) => {
      const data = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.args
        ?.payloads?.[0]?.data as Uint8Array;
      return JSON.parse(Buffer.from(data).toString('utf8')) as unknown;
    });
}

async function refusedWith(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof QuestionRequestError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('the answer was taken');
}

/**
 * A run that asks; with a user, its notices also go to that inbox. A test that names a user waits
 * for the inbox to take the last notice: an inbox task left behind when the worker stops would
 * keep the test server from skipping time for the next test.
 */
function askRun(user: string | null, extra: Partial<AgentInput> = {}): AgentInput {
  return {
    task: 'book a trip',
    tools: ['ask_user'],
    ...(user ? { notify: { user } } : {}),
    model: scripted(
      callTurn(['ask_user', { question: 'Which city?', schema: CITIES }, 'q1']),
      answerTurn('Booked for {{last_tool_results}}.'),
    ),
    ...extra,
  };
}

test('a choice question: refused answers never enter history, one of two answers wins, the notice is updated in place', async () => {
  await withWorker(async (taskQueue) => {
    const user = uid('ana');
    // A second question keeps the run waiting after the first is answered, so the losing answer of
    // two sent at once always meets a running run.
    const handle = await start(
      taskQueue,
      askRun(user, {
        model: scripted(
          callTurn(['ask_user', { question: 'Which city?', schema: CITIES }, 'q1']),
          callTurn(['ask_user', { question: 'Confirm?', schema: { type: 'boolean' } }, 'q2']),
          answerTurn('Booked for {{result:q1}}.'),
        ),
      }),
    );
    const state = await until(handle.workflowId, (s) => (s.questions?.length ?? 0) > 0);
    expect(state.status).toBe('waiting_for_input');
    expect(state.pendingToolCalls).toEqual([
      expect.objectContaining({ toolCallId: 'q1', state: 'awaiting_input' }),
    ]);
    expect(state.questions).toEqual([
      expect.objectContaining({
        toolCallId: 'q1',
        kind: 'question',
        tool: 'ask_user',
        question: 'Which city?',
        schema: CITIES,
        hasDefault: false,
      }),
    ]);
    const listed = await listQuestions(temporal.env.client, { workflowId: handle.workflowId });
    expect(listed.map((q) => [q.workflowId, q.toolCallId])).toEqual([[handle.workflowId, 'q1']]);

    const inbox = temporal.env.client.workflow.getHandle(inboxWorkflowId(user));
    const asked = await (async () => {
      for (let i = 0; i < 100; i++) {
        const n = (await inbox.query(notificationsQuery).catch(() => null))?.notifications.find(
          (x) => x.group === 'questions',
        );
        if (n) return n;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error('no question in the inbox');
    })();
    expect(asked).toMatchObject({ title: 'Question: Which city?', priority: 20, type: 'info' });
    expect(asked.detail).toContain(`href="/runs/${encodeURIComponent(handle.workflowId)}#question-q1"`);
    expect(asked.detail).toContain(`durable-agent answer ${handle.workflowId} q1`);

    const answer = (value: unknown, by = 'sdk') =>
      answerQuestion(temporal.env.client, handle.workflowId, 'q1', value, { by });
    expect(await refusedWith(answer(3))).toEqual({
      code: 'invalid_answer',
      message:
        'The answer to q1 was refused: the answer: must be one of "Lisbon", "Porto", "Faro"; got 3. It still waits for an answer.',
    });
    expect(await refusedWith(answer('Madrid'))).toMatchObject({
      code: 'invalid_answer',
      message: expect.stringContaining('must be one of "Lisbon", "Porto", "Faro"; got "Madrid"'),
    });
    // 1 MB: refused by the library before sending (the run's own validator refusing it raw is tested
    // on the dev server, tests/e2e/questions.test.ts: the test server stops skipping time after it).
    const huge = 'x'.repeat(1024 * 1024);
    expect(await refusedWith(answer(huge))).toMatchObject({
      code: 'invalid_answer',
      message: expect.stringContaining('at most 32 KiB is accepted'),
    });
    expect(
      await refusedWith(answerQuestion(temporal.env.client, handle.workflowId, 'ghost', 'Porto')),
    ).toEqual({
      code: 'not_waiting',
      message: 'No question or client tool call ghost waits for an answer; waiting: q1',
    });
    expect((await handle.query(stateQuery)).status).toBe('waiting_for_input');

    // Two doors at once: one wins, the other is told it was already answered.
    const both = await Promise.allSettled([answer('Porto', 'web'), answer('Faro', 'cli')]);
    const won = both.filter((r) => r.status === 'fulfilled');
    const lost = both.flatMap((r) => (r.status === 'rejected' ? [r.reason as QuestionRequestError] : []));
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(QuestionRequestError);
    const winner = both[0]?.status === 'fulfilled' ? 'Porto' : 'Faro';
    expect(lost[0]?.code).toBe('already_answered');
    expect(lost[0]?.message).toBe(
      `q1 was already answered (from ${winner === 'Porto' ? 'web' : 'cli'}); this answer was not taken`,
    );
    await until(handle.workflowId, (s) => s.questions?.[0]?.toolCallId === 'q2');
    await answerQuestion(temporal.env.client, handle.workflowId, 'q2', true);

    const result = (await handle.result()) as AgentResult;
    expect(result.answer).toBe(`Booked for ${winner}.`);
    const late = await refusedWith(answer('Lisbon'));
    expect(late.code).toBe('finished');

    const history = await handle.fetchHistory();
    expect(acceptedAnswers(history)).toEqual([
      { toolCallId: 'q1', answer: winner, by: winner === 'Porto' ? 'web' : 'cli' },
      { toolCallId: 'q2', answer: true, by: 'sdk' },
    ]);
    expect(JSON.stringify(history)).not.toContain('xxxxxxxxxx');
    expect(await replayHistory(await workflowBundle(), history, handle.workflowId)).toEqual({
      workflowId: handle.workflowId,
      ok: true,
    });
    const events = await handle.query(eventsQuery, {});
    expect(events.map((e: AgentEvent) => e.kind)).toEqual(
      expect.arrayContaining(['tool_started', 'question_asked', 'question_answered', 'tool_finished']),
    );
    const { entries } = await handle.query(transcriptQuery);
    expect(entries.find((e) => e.role === 'tool' && e.toolCallId === 'q1')).toMatchObject({
      name: 'ask_user',
      text: winner,
      isError: false,
    });

    // One item per question, in the run and in the inbox, updated in place.
    for (const box of [handle, inbox]) {
      let mine = (await box.query(notificationsQuery)).notifications.filter((n) => n.id === asked.id);
      for (let i = 0; i < 100 && !mine[0]?.title.startsWith('Answered'); i++) {
        await new Promise((r) => setTimeout(r, 100));
        mine = (await box.query(notificationsQuery)).notifications.filter((n) => n.id === asked.id);
      }
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({
        title: 'Answered: Which city?',
        type: 'success',
        priority: 10,
        read: false,
      });
      expect(mine[0]?.message).toContain(`answered from ${winner === 'Porto' ? 'web' : 'cli'}: ${winner}`);
      expect(mine[0]?.detail).toContain('data-state="ended"');
    }
  });
}, 180_000);

test('free text with HTML is taken as text; malformed answers are refused, the run keeps waiting', async () => {
  await withWorker(async (taskQueue) => {
    const handle = await start(
      taskQueue,
      askRun(null, {
        model: scripted(
          callTurn(['ask_user', { question: 'Invoice number?' }, 'q']),
          answerTurn('Invoice: {{last_tool_results}}'),
        ),
      }),
    );
    await until(handle.workflowId, (s) => (s.questions?.length ?? 0) > 0);
    const deep: unknown[] = [];
    let at = deep;
    for (let i = 0; i < 40; i++) at = at[0] = [];
    expect(
      await refusedWith(answerQuestion(temporal.env.client, handle.workflowId, 'q', deep)),
    ).toMatchObject({
      code: 'invalid_answer',
      message: expect.stringContaining('nests deeper than 32 levels'),
    });
    const html = '<img src=x onerror="alert(1)"><b>INV-7</b>';
    await answerQuestion(temporal.env.client, handle.workflowId, 'q', html, { by: 'web' });
    const result = (await handle.result()) as AgentResult;
    expect(result.answer).toBe(`Invoice: ${html}`);
    const notice = (await handle.query(notificationsQuery)).notifications.find(
      (n) => n.group === 'questions',
    );
    // Shown back escaped: the detail holds no live tag from the answer.
    expect(notice?.detail).not.toContain('<img');
    expect(notice?.detail).toContain('&#60;img src=x onerror=');
  });
}, 120_000);

test('timeouts: with a default the model gets it, without one it is told no answer came', async () => {
  await withWorker(async (taskQueue) => {
    const user = null;
    const withDefault = await start(
      taskQueue,
      askRun(user, {
        model: scripted(
          callTurn([
            'ask_user',
            {
              question: 'Seats?',
              schema: { type: 'integer', minimum: 1 },
              timeout_seconds: 7200,
              default: 2,
            },
            'd',
          ]),
          answerTurn('{{last_tool_results}}'),
        ),
      }),
    );
    const without = await start(
      taskQueue,
      askRun(user, {
        policy: { questionTimeout: '3 hours' },
        model: scripted(
          callTurn(['ask_user', { question: 'Budget?' }, 'n']),
          answerTurn('{{last_tool_results}}'),
        ),
      }),
    );
    // One result at a time: the test server's time skipping is unlocked per awaited result, and two
    // awaited at once left it locked (the runs' timers never fired).
    const a = (await withDefault.result()) as AgentResult;
    const b = (await without.result()) as AgentResult;
    expect(a.answer).toBe('No answer came within 2 h; the default answer is taken: 2');
    expect(b.answer).toBe(
      'No answer came within 3 h. Go on without it, or say in your final answer what you still need from the user.',
    );
    const { entries } = await without.query(transcriptQuery);
    expect(entries.find((e) => e.toolCallId === 'n')?.isError).toBe(true);
    const notice = (await without.query(notificationsQuery)).notifications.find(
      (n) => n.group === 'questions',
    );
    expect(notice).toMatchObject({ title: 'Not answered: Budget?', type: 'warning' });
    const asked = (await withDefault.query(eventsQuery, {})).filter((e) => e.kind.startsWith('question_'));
    expect(Date.parse(asked[1]!.at) - Date.parse(asked[0]!.at)).toBeGreaterThanOrEqual(7200_000);
    expect(
      await replayHistory(await workflowBundle(), await without.fetchHistory(), without.workflowId),
    ).toMatchObject({
      ok: true,
    });
  });
}, 120_000);

test('a client-side tool: validated call, pending for the client, result checked and given to the model', async () => {
  await withWorker(async (taskQueue) => {
    const handle = await start(taskQueue, {
      task: 'open the user’s document',
      tools: [],
      clientTools: {
        read_document: {
          description: 'Reads the document open in the user’s editor',
          input: { type: 'object', properties: { section: { type: 'string' } }, required: ['section'] },
          output: {
            type: 'object',
            properties: { title: { type: 'string' }, words: { type: 'integer' } },
            required: ['title', 'words'],
          },
        },
      },
      model: scripted(
        callTurn(['read_document', { section: 7 }, 'bad']),
        callTurn(['read_document', { section: 'intro' }, 'c1']),
        answerTurn('Read: {{result:c1}}'),
      ),
    });
    const [call] = await waitForQuestions(temporal.env.client, handle.workflowId, {
      kind: 'client_tool',
      pollMs: 50,
      timeoutMs: 30_000,
    });
    expect(call).toMatchObject({
      toolCallId: 'c1',
      kind: 'client_tool',
      tool: 'read_document',
      args: { section: 'intro' },
    });
    expect(
      await refusedWith(submitToolResult(temporal.env.client, handle.workflowId, 'c1', { title: 'Plan' })),
    ).toMatchObject({
      code: 'invalid_answer',
      message: expect.stringContaining('words: is required'),
    });
    expect(
      await submitToolResult(temporal.env.client, handle.workflowId, 'c1', { title: 'Plan', words: 120 }),
    ).toEqual({
      toolCallId: 'c1',
      answered: true,
    });
    const result = (await handle.result()) as AgentResult;
    expect(result.answer).toBe('Read: {"title":"Plan","words":120}');
    expect(result.usage.toolCalls).toBe(1);
    const { entries } = await handle.query(transcriptQuery);
    expect(entries.find((e) => e.toolCallId === 'bad')).toMatchObject({
      isError: true,
      text: expect.stringContaining(
        'Invalid arguments for read_document: section: expected string, got number',
      ),
    });
    expect(entries.find((e) => e.toolCallId === 'c1')).toMatchObject({
      name: 'read_document',
      isError: false,
    });

    // Replay, eval and fork read it as any tool: the run replays; eval's recorded steps hold the call;
    // a fork after that step starts with the submitted result and asks the client nothing again.
    const history = await handle.fetchHistory();
    expect(await replayHistory(await workflowBundle(), history, handle.workflowId)).toEqual({
      workflowId: handle.workflowId,
      ok: true,
    });
    expect(
      recordedModelSteps(history).map((s) => s.output.toolCalls.map((c) => `${c.name}/${c.id}`)),
    ).toEqual([['read_document/bad'], ['read_document/c1'], []]);
    const plan = planFork(history, 2);
    const fork = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('ask-fork'),
      args: [plan.input, plan.carried],
    });
    const forked = (await fork.result()) as AgentResult;
    expect(forked.stopReason).toBe('final_answer');
    expect(forked.usage.toolCalls).toBe(0);
    expect((await fork.query(stateQuery)).questions ?? []).toEqual([]);
  });
}, 120_000);

test('the wall clock stands still while a question waits, unless the policy counts the wait', async () => {
  await withWorker(async (taskQueue) => {
    const turns = scripted(
      callTurn([
        'ask_user',
        { question: 'Go on?', schema: { type: 'boolean' }, timeout_seconds: 7200, default: true },
        'w',
      ]),
      answerTurn('went on: {{last_tool_results}}'),
    );
    const paused = await start(
      taskQueue,
      askRun(null, { policy: { maxWallClock: '10 minutes' }, model: turns }),
    );
    const counted = await start(
      taskQueue,
      askRun(null, {
        policy: { maxWallClock: '10 minutes', wallClockCountsQuestions: true },
        model: turns,
      }),
    );
    // One result at a time: the test server's time skipping is unlocked per awaited result, and two
    // awaited at once left it locked (the runs' timers never fired).
    const a = (await paused.result()) as AgentResult;
    const b = (await counted.result()) as AgentResult;
    expect(a).toMatchObject({ stopReason: 'final_answer' });
    expect(a.answer).toContain('the default answer is taken: true');
    const s = await paused.query(stateQuery);
    expect(s.budgets?.max_wall_clock?.used).toBeLessThan(60_000);
    expect(b.stopReason).toBe('max_wall_clock');
    const { entries } = await counted.query(transcriptQuery);
    expect(entries.find((e) => e.toolCallId === 'w')?.text).toMatch(
      // The test server may hand the timer to the workflow a moment late: 600 or 601 s.
      /^The run stopped \(60[01] of 600 s wall-clock time/,
    );
  });
}, 120_000);

test('a sub-agent’s question goes to the same user, is listed from the parent and answered once', async () => {
  await withWorker(async (taskQueue) => {
    const user = uid('eve');
    const handle = await start(taskQueue, {
      task: 'plan',
      tools: [],
      notify: { user },
      agents: {
        planner: {
          description: 'Plans with the user',
          tools: ['ask_user'],
          model: scripted(
            callTurn(['ask_user', { question: 'How many days?', schema: { type: 'integer' } }, 'k']),
            answerTurn('{{last_tool_results}} days'),
          ),
        },
      },
      model: scripted(callTurn(['planner', { task: 'plan' }, 'p']), answerTurn('plan: {{result:p}}')),
    });
    const child = childWorkflowId(handle.workflowId, 'p');
    await until(handle.workflowId, (s) => s.agents?.[0]?.status === 'waiting_for_input');
    const fromParent = await listQuestions(temporal.env.client, { workflowId: handle.workflowId });
    expect(fromParent).toEqual([
      expect.objectContaining({
        workflowId: child,
        toolCallId: 'k',
        question: 'How many days?',
        parent: { workflowId: handle.workflowId, agent: 'planner' },
      }),
    ]);
    const inbox = temporal.env.client.workflow.getHandle(inboxWorkflowId(user));
    for (let i = 0; ; i++) {
      const n = (await inbox.query(notificationsQuery).catch(() => null))?.notifications.find(
        (x) => x.group === 'questions',
      );
      if (n) {
        expect(n.message).toContain(`(sub-agent planner of run ${handle.workflowId})`);
        break;
      }
      if (i > 100) throw new Error('no question in the inbox');
      await new Promise((r) => setTimeout(r, 100));
    }
    await answerQuestion(temporal.env.client, child, 'k', 3, { by: 'cli' });
    expect((await refusedWith(answerQuestion(temporal.env.client, child, 'k', 4))).code).toMatch(
      /^(already_answered|not_waiting|finished)$/,
    );
    const result = (await handle.result()) as AgentResult;
    expect(result.answer).toBe('plan: 3 days');
    for (let i = 0; ; i++) {
      const n = (await inbox.query(notificationsQuery)).notifications.find((x) => x.group === 'questions');
      if (n?.title === 'Answered: How many days?') break;
      if (i > 100) throw new Error('the answer never reached the inbox');
      await new Promise((r) => setTimeout(r, 100));
    }
  });
}, 120_000);
