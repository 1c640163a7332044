/**
 * The agent workflow on the time-skipping test server: loop, tools, validation, budgets, approvals,
 * user messages, continue-as-new and cancellation.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type { Worker } from '@temporalio/worker';
import { createAgentWorker } from '../../workers/worker';
import type { AgentInput, AgentResult } from '../../shared/agent';
import {
  approveToolCallUpdate,
  eventsQuery,
  stateQuery,
  transcriptQuery,
  userMessageSignal,
} from '../../shared/agent';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { testConfig, uid, workflowBundle } from '../../testkit/temporal';
import { scheduledActivityTypes } from '../../testkit/history';
import { useTimeSkippingEnv } from '../support/environments';

const temporal = useTimeSkippingEnv();

/** Tool executions seen by the instrumented activities of one test. */
interface Recorder {
  calls: { name: string; toolCallId: string; args: unknown }[];
  maxConcurrent: number;
  cancelled: string[];
}

async function withWorker<T>(
  fn: (taskQueue: string, rec: Recorder) => Promise<T>,
  opts: { slowMs?: number; config?: Parameters<typeof testConfig>[0] } = {},
): Promise<T> {
  const taskQueue = uid('tq');
  const rec: Recorder = { calls: [], maxConcurrent: 0, cancelled: [] };
  let running = 0;
  // An instrumented `calculator`: records each call and holds it for slowMs, to observe concurrency.
  const calculator = async (input: ToolActivityInput<{ expression: string }>): Promise<ToolResult> => {
    rec.calls.push({ name: 'calculator', toolCallId: input.toolCallId, args: input.args });
    running += 1;
    rec.maxConcurrent = Math.max(rec.maxConcurrent, running);
    try {
      if (opts.slowMs) await new Promise((r) => setTimeout(r, opts.slowMs));
      return { content: `value of ${input.args.expression}` };
    } finally {
      running -= 1;
    }
  };
  // An instrumented `wait` that records cancellation.
  const wait = async (input: ToolActivityInput<{ seconds: number }>): Promise<ToolResult> => {
    rec.calls.push({ name: 'wait', toolCallId: input.toolCallId, args: input.args });
    const ctx = Context.current();
    try {
      for (let i = 0; i < input.args.seconds * 10; i++) {
        await ctx.sleep(100);
        ctx.heartbeat();
      }
    } catch (err) {
      rec.cancelled.push(input.toolCallId);
      throw err;
    }
    return { content: 'waited' };
  };
  const worker: Worker = await createAgentWorker({
    connection: temporal.env.nativeConnection,
    namespace: temporal.env.namespace ?? 'default',
    config: testConfig(opts.config),
    taskQueue,
    workflowBundle: await workflowBundle(),
    activityOverrides: { calculator, wait },
  });
  return worker.runUntil(fn(taskQueue, rec));
}

function input(overrides: Partial<AgentInput> & Pick<AgentInput, 'model'>): AgentInput {
  return { task: 'test task', tools: ['calculator', 'get_time', 'wait'], ...overrides };
}

test('runs model → parallel tools → model until a final answer, one activity per tool call', async () => {
  await withWorker(async (taskQueue, rec) => {
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('loop'),
      args: [
        input({
          model: {
            provider: 'scripted',
            turns: [
              callTurn(['calculator', { expression: '1+1' }, 'a'], ['get_time', { timezone: 'UTC' }, 'b']),
              callTurn(['calculator', { expression: '2*3' }, 'c']),
              answerTurn('a={{result:a}} c={{result:c}}'),
            ],
          },
        }),
      ],
    });
    const result = (await handle.result()) as AgentResult;
    expect(result).toMatchObject({
      answer: 'a=value of 1+1 c=value of 2*3',
      stopReason: 'final_answer',
      steps: 3,
    });
    expect(result.usage.modelCalls).toBe(3);
    expect(result.usage.toolCalls).toBe(3);
    expect(rec.calls.map((c) => c.toolCallId)).toEqual(expect.arrayContaining(['a', 'c']));

    const history = await handle.fetchHistory();
    const scheduled = scheduledActivityTypes(history);
    expect(scheduled).toEqual([
      'callModel',
      'calculator',
      'get_time',
      'callModel',
      'calculator',
      'callModel',
    ]);

    const events = await handle.query(eventsQuery, {});
    const started = events.filter((e) => e.kind === 'tool_started');
    expect(started.map((e) => [e.toolCallId, e.tool])).toEqual([
      ['a', 'calculator'],
      ['b', 'get_time'],
      ['c', 'calculator'],
    ]);
    expect(started[0]?.args).toEqual({ expression: '1+1' });
    const state = await handle.query(stateQuery);
    expect(state).toMatchObject({
      status: 'completed',
      step: 3,
      stopReason: 'final_answer',
      pendingToolCalls: [],
    });
  });
});

test('invalid tool arguments go back to the model as an error and the loop goes on (no activity)', async () => {
  await withWorker(async (taskQueue, rec) => {
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('badargs'),
      args: [
        input({
          model: {
            provider: 'scripted',
            turns: [
              callTurn(
                ['calculator', { expr: 42 }, 'bad'],
                ['nope_tool', {}, 'unknown'],
                ['calculator', 'not json', 'raw'],
              ),
              callTurn(['calculator', { expression: '6*7' }, 'good']),
              answerTurn('done'),
            ],
          },
        }),
      ],
    });
    const result = (await handle.result()) as AgentResult;
    expect(result.answer).toBe('done');
    expect(rec.calls.map((c) => c.toolCallId)).toEqual(['good']);
    const transcript = (await handle.query(transcriptQuery)).entries;
    const toolMsgs = transcript.filter((t) => t.role === 'tool');
    const byId = Object.fromEntries(toolMsgs.map((t) => [t.toolCallId, t]));
    expect(byId.bad).toMatchObject({ isError: true });
    expect(byId.bad?.text).toMatch(/Invalid arguments for calculator: expression: /);
    expect(byId.unknown?.text).toMatch(
      /No such tool "nope_tool". Available tools: calculator, get_time, wait/,
    );
    expect(byId.raw?.text).toMatch(/not valid JSON/);
    expect(byId.good).toMatchObject({ isError: false, text: 'value of 6*7' });
  });
});

test('parallel tool calls run concurrently, bounded by maxParallelTools', async () => {
  const turns = [
    callTurn(...[1, 2, 3, 4, 5, 6].map((i) => ['calculator', { expression: `${i}` }] as [string, unknown])),
    answerTurn('ok'),
  ];
  const bounded = await withWorker(
    async (taskQueue, rec) => {
      await temporal.env.client.workflow.execute('agentWorkflow', {
        taskQueue,
        workflowId: uid('par2'),
        args: [input({ model: { provider: 'scripted', turns }, policy: { maxParallelTools: 2 } })],
      });
      return rec;
    },
    { slowMs: 300 },
  );
  expect(bounded.calls).toHaveLength(6);
  expect(bounded.maxConcurrent).toBe(2);

  const defaults = await withWorker(
    async (taskQueue, rec) => {
      await temporal.env.client.workflow.execute('agentWorkflow', {
        taskQueue,
        workflowId: uid('par4'),
        args: [input({ model: { provider: 'scripted', turns } })],
      });
      return rec;
    },
    { slowMs: 300 },
  );
  expect(defaults.maxConcurrent).toBe(4);
});

test('a max-steps budget stops the run with stopReason max_steps after a tool-less summary turn', async () => {
  await withWorker(async (taskQueue) => {
    const loop = callTurn(['calculator', { expression: '1' }]);
    const result = (await temporal.env.client.workflow.execute('agentWorkflow', {
      taskQueue,
      workflowId: uid('budget'),
      args: [
        input({
          // The summary turn's tool calls are ignored: it has no tools.
          model: { provider: 'scripted', turns: [loop, loop, { ...loop, content: 'two done' }, loop] },
          policy: { maxSteps: 2 },
        }),
      ],
    })) as AgentResult;
    expect(result).toMatchObject({ answer: 'two done', stopReason: 'max_steps', steps: 3 });
    expect(result.budget).toBe('2 of 2 steps (100 %)');
    expect(result.usage.toolCalls).toBe(2);
  });
});

test('invalid input fails the run at once with a non-retryable error naming the field', async () => {
  await withWorker(async (taskQueue) => {
    const err = await temporal.env.client.workflow
      .execute('agentWorkflow', {
        taskQueue,
        workflowId: uid('invalid'),
        args: [
          {
            task: '',
            model: { provider: 'scripted', turns: [answerTurn('x')] },
            tools: ['calculator', 'Rm-Rf'],
            policy: { maxSteps: 0 },
          },
        ],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause.type).toBe('InvalidAgentInput');
    expect(cause.nonRetryable).toBe(true);
    expect(cause.message).toMatch(/task: the task must not be empty/);
    expect(cause.message).toMatch(/tools: unknown tool "Rm-Rf"/);
    expect(cause.message).toMatch(/policy\.maxSteps/);
  });
});

test('a run choosing a provider without a configured key fails naming the variable', async () => {
  await withWorker(async (taskQueue) => {
    const err = await temporal.env.client.workflow
      .execute('agentWorkflow', {
        taskQueue,
        workflowId: uid('nokey'),
        args: [input({ model: { provider: 'anthropic', model: 'claude-sonnet-4-5' } })],
      })
      .catch((e: unknown) => e);
    const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe('ModelNotConfigured');
    expect(cause.message).toMatch(/ANTHROPIC_API_KEY/);
  });
});

test('an approval that never comes times out durably (2 hours, skipped) and the model is told', async () => {
  await withWorker(async (taskQueue, rec) => {
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('approval-timeout'),
      args: [
        input({
          model: {
            provider: 'scripted',
            turns: [
              callTurn(['calculator', { expression: '1+1' }, 'x']),
              answerTurn('{{last_tool_results}}'),
            ],
          },
          policy: { requireApproval: ['calculator'], approvalTimeout: '2 hours' },
        }),
      ],
    });
    const result = (await handle.result()) as AgentResult;
    expect(result.answer).toMatch(/Approval for calculator timed out after 2 hours; the call was not made/);
    expect(rec.calls).toHaveLength(0);
    const history = await handle.fetchHistory();
    const timers = (history.events ?? []).filter((e) => e.timerStartedEventAttributes);
    expect(timers).toHaveLength(1);
  });
});

test('approve/reject updates decide waiting calls; user messages reach the next model turn', async () => {
  await withWorker(async (taskQueue, rec) => {
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('approval'),
      args: [
        input({
          model: {
            provider: 'scripted',
            turns: [
              callTurn(
                ['calculator', { expression: '1+1' }, 'yes'],
                ['calculator', { expression: '9/0' }, 'no'],
              ),
              answerTurn('{{last_tool_results}}'),
            ],
          },
          policy: { requireApproval: ['calculator'] },
        }),
      ],
    });
    // Wait until both calls wait for approval.
    for (let i = 0; i < 100; i++) {
      const s = await handle.query(stateQuery);
      if (s.pendingToolCalls.filter((p) => p.state === 'awaiting_approval').length === 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const state = await handle.query(stateQuery);
    expect(state.status).toBe('waiting_for_approval');
    expect(state.pendingToolCalls.map((p) => p.toolCallId).sort()).toEqual(['no', 'yes']);

    const refused = await handle
      .executeUpdate(approveToolCallUpdate, { args: [{ toolCallId: 'ghost', approve: true }] })
      .then(
        () => undefined,
        (e: unknown) => e as Error & { cause?: Error },
      );
    expect(refused?.cause?.message).toMatch(/No tool call ghost is waiting for approval; waiting: yes, no/);
    await handle.signal(userMessageSignal, { text: 'please hurry' });
    await handle.executeUpdate(approveToolCallUpdate, {
      args: [{ toolCallId: 'no', approve: false, reason: 'division by zero' }],
    });
    expect(
      await handle.executeUpdate(approveToolCallUpdate, { args: [{ toolCallId: 'yes', approve: true }] }),
    ).toEqual({
      toolCallId: 'yes',
      approved: true,
    });
    const result = (await handle.result()) as AgentResult;
    expect(rec.calls.map((c) => c.toolCallId)).toEqual(['yes']);
    expect(result.answer).toContain('value of 1+1');
    expect(result.answer).toContain('The user rejected this call: division by zero');
    const transcript = (await handle.query(transcriptQuery)).entries;
    const userIdx = transcript.findIndex((t) => t.role === 'user' && t.text === 'please hurry');
    const lastAssistant = transcript.map((t) => t.role).lastIndexOf('assistant');
    expect(userIdx).toBeGreaterThan(0);
    expect(userIdx).toBeLessThan(lastAssistant);
  });
});

test('continue-as-new (forced every step) keeps conversation, usage, events and step numbering', async () => {
  await withWorker(async (taskQueue) => {
    const workflowId = uid('can');
    const turns = [
      callTurn(['calculator', { expression: '1' }, 'c1']),
      callTurn(['calculator', { expression: '2' }, 'c2']),
      callTurn(['calculator', { expression: '3' }, 'c3']),
      answerTurn('{{result:c1}} | {{result:c2}} | {{result:c3}}'),
    ];
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId,
      args: [input({ model: { provider: 'scripted', turns }, policy: { continueAsNewAfterSteps: 1 } })],
    });
    const result = (await handle.result()) as AgentResult;
    // The final answer quotes tool results from every earlier run of the chain.
    expect(result).toMatchObject({ answer: 'value of 1 | value of 2 | value of 3', steps: 4 });
    expect(result.usage).toMatchObject({ modelCalls: 4, toolCalls: 3 });

    const latest = temporal.env.client.workflow.getHandle(workflowId);
    const state = await latest.query(stateQuery);
    expect(state.continuations).toBe(3);
    const events = await latest.query(eventsQuery, {});
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(events.filter((e) => e.kind === 'continued_as_new')).toHaveLength(3);
    expect(events.filter((e) => e.kind === 'tool_finished').map((e) => e.toolCallId)).toEqual([
      'c1',
      'c2',
      'c3',
    ]);
    const transcript = (await latest.query(transcriptQuery)).entries;
    expect(transcript.filter((t) => t.role === 'assistant')).toHaveLength(4);

    const first = await temporal.env.client.workflow
      .getHandle(workflowId, handle.firstExecutionRunId)
      .describe();
    expect(first.status.name).toBe('CONTINUED_AS_NEW');
  });
});

test('cancellation cancels the running tool, and state and usage stay queryable', async () => {
  await withWorker(async (taskQueue, rec) => {
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('cancel'),
      args: [
        input({
          model: {
            provider: 'scripted',
            turns: [
              callTurn(['calculator', { expression: '1' }, 'first']),
              callTurn(['wait', { seconds: 60 }, 'long']),
              answerTurn('never'),
            ],
          },
        }),
      ],
    });
    for (let i = 0; i < 100 && !rec.calls.some((c) => c.toolCallId === 'long'); i++)
      await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 300));
    await handle.cancel();
    const err = await handle.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    expect(rec.cancelled).toEqual(['long']);
    const state = await handle.query(stateQuery);
    expect(state).toMatchObject({ status: 'cancelled', stopReason: 'cancelled', step: 2 });
    expect(state.usage.modelCalls).toBe(2);
    expect(state.usage.toolCalls).toBe(1);
  });
});
