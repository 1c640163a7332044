/**
 * The fast path (`policy.localActivities`) on the time-skipping test server: which steps run as
 * local activities in each mode, that side-effecting tools never do, that results and failures
 * reach the run as with regular activities, and that bad values are refused.
 */
import { WorkflowFailedError } from '@temporalio/client';
import type { ApplicationFailure } from '@temporalio/common';
import type { AgentInput, AgentResult, Policy } from '../../shared/agent';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';
import { LOCAL_ACTIVITIES_PATCH } from '../../workflows/agent';
import type { History } from '../../client/debug/history';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { agentWorkerOn } from '../../testkit/agent-worker';
import { uid } from '../../testkit/temporal';
import { localActivityTypes, scheduledActivityTypes } from '../../testkit/history';
import { useTimeSkippingEnv } from '../support/environments';

const temporal = useTimeSkippingEnv();

/** Calls of the instrumented calculator, with whether each ran as a local activity. */
interface CalculatorCall {
  toolCallId: string;
  local: boolean;
}

async function withWorker<T>(fn: (taskQueue: string, calls: CalculatorCall[]) => Promise<T>): Promise<T> {
  const taskQueue = uid('tq');
  const calls: CalculatorCall[] = [];
  const { Context } = await import('@temporalio/activity');
  const calculator = async (input: ToolActivityInput<{ expression: string }>): Promise<ToolResult> => {
    calls.push({ toolCallId: input.toolCallId, local: Context.current().info.isLocal });
    if (input.args.expression === 'boom') throw new Error('calculator exploded');
    return { content: `value of ${input.args.expression}` };
  };
  const worker = await agentWorkerOn(temporal.env, taskQueue, { activityOverrides: { calculator } });
  return worker.runUntil(fn(taskQueue, calls));
}

const SCRIPT = [
  callTurn(['calculator', { expression: '1+1' }, 'a'], ['get_time', { timezone: 'UTC' }, 'b']),
  callTurn(['wait', { seconds: 1 }, 'w'], ['calculator', { expression: 'boom' }, 'c']),
  answerTurn('a={{result:a}} w={{result:w}}'),
];

function input(mode?: Policy['localActivities']): AgentInput {
  return {
    task: 'fast path',
    model: { provider: 'scripted', turns: SCRIPT },
    tools: ['calculator', 'get_time', 'wait'],
    ...(mode ? { policy: { localActivities: mode } } : {}),
  };
}

function patchMarkers(history: History): string[] {
  return (history.events ?? []).flatMap((e) => {
    const m = e.markerRecordedEventAttributes;
    if (m?.markerName !== 'core_patch') return [];
    const data = m.details?.['patch-data']?.payloads?.[0]?.data;
    return data ? [(JSON.parse(Buffer.from(data).toString('utf8')) as { id: string }).id] : [];
  });
}

async function run(taskQueue: string, mode?: Policy['localActivities']) {
  const handle = await temporal.env.client.workflow.start('agentWorkflow', {
    taskQueue,
    workflowId: uid(`local-${mode ?? 'default'}`),
    args: [input(mode)],
  });
  const result = (await handle.result()) as AgentResult;
  return { result, history: await handle.fetchHistory() };
}

test.each([
  {
    mode: 'auto' as const,
    scheduled: ['wait'],
    local: ['callModel', 'calculator', 'get_time', 'callModel', 'calculator', 'callModel'],
  },
  {
    mode: 'tools' as const,
    scheduled: ['callModel', 'callModel', 'wait', 'callModel'],
    local: ['calculator', 'get_time', 'calculator'],
  },
])(
  "policy.localActivities '$mode': the declared steps run locally, the rest as before",
  async ({ mode, scheduled, local }) => {
    await withWorker(async (taskQueue, calls) => {
      const { result, history } = await run(taskQueue, mode);
      expect(result).toMatchObject({
        answer: 'a=value of 1+1 w=Waited 1 s.',
        stopReason: 'final_answer',
        steps: 3,
      });
      expect(result.usage.toolCalls).toBe(4);
      expect(scheduledActivityTypes(history)).toEqual(scheduled);
      // A local call that failed is retried by the worker (3 attempts, as the tool declares) and then
      // reaches the model as a tool error, as a regular one does.
      expect(localActivityTypes(history).sort()).toEqual([...local].sort());
      expect(calls.filter((c) => c.toolCallId === 'a')).toEqual([{ toolCallId: 'a', local: true }]);
      expect(calls.filter((c) => c.toolCallId === 'c')).toHaveLength(3);
      expect(patchMarkers(history)).toContain(LOCAL_ACTIVITIES_PATCH);
    });
  },
  60_000,
);

test("by default ('never') every step is a regular activity and the run records no fast-path patch", async () => {
  await withWorker(async (taskQueue, calls) => {
    const { result, history } = await run(taskQueue);
    expect(result.answer).toBe('a=value of 1+1 w=Waited 1 s.');
    expect(scheduledActivityTypes(history)).toEqual(
      expect.arrayContaining(['callModel', 'calculator', 'get_time', 'wait']),
    );
    expect(localActivityTypes(history)).toEqual([]);
    expect(patchMarkers(history)).not.toContain(LOCAL_ACTIVITIES_PATCH);
    expect(calls.every((c) => !c.local)).toBe(true);
  });
}, 60_000);

test('a model call that fails for good fails the run the same way on the fast path', async () => {
  await withWorker(async (taskQueue) => {
    const err = await temporal.env.client.workflow
      .execute('agentWorkflow', {
        taskQueue,
        workflowId: uid('local-nokey'),
        args: [
          {
            task: 't',
            model: { provider: 'anthropic', model: 'claude-sonnet-4-5' },
            policy: { localActivities: 'auto' },
          },
        ],
      })
      .catch((e: unknown) => e);
    const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe('ModelNotConfigured');
    expect(cause.message).toMatch(/ANTHROPIC_API_KEY/);
  });
}, 60_000);

test('an unknown policy.localActivities value is refused, naming the field and the choices', async () => {
  await withWorker(async (taskQueue) => {
    const err = await temporal.env.client.workflow
      .execute('agentWorkflow', {
        taskQueue,
        workflowId: uid('local-bad'),
        args: [{ ...input(), policy: { localActivities: 'always' } }],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe('InvalidAgentInput');
    expect(cause.message).toMatch(/policy\.localActivities: .*"never".*"tools".*"auto"/);
  });
}, 60_000);
