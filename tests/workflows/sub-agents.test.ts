/**
 * Sub-agents on the time-skipping test server: a run offers other agents as tools, each call a
 * child agent workflow with an id from the parent's and the call's, typed input and output,
 * budgets reserved from what the parent has left, usage rolled up, approvals in the child, limits
 * on depth and children in flight, failures as tool errors and cancellation flowing down.
 */
import { WorkflowFailedError } from '@temporalio/client';
import type { AgentInput, AgentResult, AgentStateView } from '../../shared/agent';
import { childWorkflowId, stateQuery } from '../../shared/agent';
import { approveToolCallUpdate } from '../../shared/agent/messages';
import type { ScriptedTurn } from '../../shared/model';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { agentWorkerOn } from '../../testkit/agent-worker';
import { uid } from '../../testkit/temporal';
import { workflowTaskFailures } from '../../testkit/history';
import { useTimeSkippingEnv } from '../support/environments';
import type { WorkerConfig } from '../../workers/config';

const temporal = useTimeSkippingEnv();

const FINDING = {
  type: 'object',
  properties: { city: { type: 'string' }, people: { type: 'integer' } },
  required: ['city', 'people'],
  additionalProperties: false,
};

function scripted(...turns: ScriptedTurn[]): AgentInput['model'] {
  return { provider: 'scripted', turns };
}

async function withWorker<T>(
  fn: (taskQueue: string) => Promise<T>,
  config: Partial<WorkerConfig> = {},
): Promise<T> {
  const taskQueue = uid('tq');
  const worker = await agentWorkerOn(temporal.env, taskQueue, { config });
  return worker.runUntil(fn(taskQueue));
}

async function start(taskQueue: string, input: AgentInput, id = uid('team')) {
  return temporal.env.client.workflow.start('agentWorkflow', { taskQueue, workflowId: id, args: [input] });
}

async function state(workflowId: string): Promise<AgentStateView> {
  return temporal.env.client.workflow.getHandle(workflowId).query(stateQuery);
}

/** Polls until `check` holds for the run's state (real time: the test server skips only timers). */
async function until(workflowId: string, check: (s: AgentStateView) => boolean): Promise<AgentStateView> {
  for (let i = 0; i < 200; i += 1) {
    try {
      const s = await state(workflowId);
      if (check(s)) return s;
    } catch {
      // not started yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${workflowId}: the state never matched`);
}

describe('sub-agents', () => {
  it('runs two children in parallel with typed outputs; ids come from the call; usage rolls up', async () => {
    await withWorker(async (taskQueue) => {
      const handle = await start(taskQueue, {
        task: 'compare two cities',
        model: scripted(
          callTurn(['researcher', { task: 'Berlin' }, 'r1'], ['researcher', { task: 'Paris' }, 'r2']),
          answerTurn('Berlin: {{result:r1}} / Paris: {{result:r2}}'),
        ),
        tools: ['get_time'],
        agents: {
          researcher: {
            description: 'Finds how many people live in a city',
            model: scripted(
              callTurn(['calculator', { expression: '3*1200000' }, 'c']),
              answerTurn('{"city":"X","people":3600000}'),
            ),
            tools: ['calculator'],
            output: FINDING,
          },
        },
      });
      const result = (await handle.result()) as AgentResult;
      expect(result.stopReason).toBe('final_answer');
      expect(result.answer).toBe(
        'Berlin: {"city":"X","people":3600000} / Paris: {"city":"X","people":3600000}',
      );
      // Parent: 2 model calls, 2 agent calls; each child: 2 model calls, 1 tool call.
      expect(result.usage.modelCalls).toBe(6);
      expect(result.usage.toolCalls).toBe(4);
      const s = await state(handle.workflowId);
      expect(s.agents?.map((c) => [c.agent, c.status, c.steps, c.workflowId]).sort()).toEqual([
        ['researcher', 'completed', 2, childWorkflowId(handle.workflowId, 'r1')],
        ['researcher', 'completed', 2, childWorkflowId(handle.workflowId, 'r2')],
      ]);
      // 25 steps, 1 taken, 1 kept for the parent: the two children share 23.
      expect(s.agents?.map((c) => c.reserved.steps).sort()).toEqual([11, 12]);
      // The parent's step budget counts the children's steps.
      expect(s.budgets?.max_steps).toEqual({ used: 2 + 4, max: 25 });
      const child = await temporal.env.client.workflow
        .getHandle(childWorkflowId(handle.workflowId, 'r1'))
        .result();
      expect((child as AgentResult).output).toEqual({ city: 'X', people: 3600000 });
    });
  });

  it('checks the call against the input schema; a failing child is a tool error, no task failure', async () => {
    await withWorker(async (taskQueue) => {
      const handle = await start(taskQueue, {
        task: 'try',
        model: scripted(
          callTurn(['counter', { city: 7 }, 'bad']),
          callTurn(['counter', { city: 'Oslo' }, 'ok']),
          answerTurn('told: {{result:bad}} | {{result:ok}}'),
        ),
        agents: {
          counter: {
            description: 'Counts people',
            input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            // Never valid: the child fails with OutputValidationError after its repairs.
            model: scripted(answerTurn('not json'), answerTurn('still not'), answerTurn('never')),
            output: FINDING,
          },
        },
      });
      const result = (await handle.result()) as AgentResult;
      expect(result.answer).toContain('Invalid arguments for sub-agent counter: city: ');
      expect(result.answer).toContain('Sub-agent counter failed: OutputValidationError');
      const s = await state(handle.workflowId);
      expect(s.agents).toHaveLength(1);
      expect(s.agents?.[0]).toMatchObject({ toolCallId: 'ok', status: 'failed' });
      const histories = [
        await handle.fetchHistory(),
        await temporal.env.client.workflow.getHandle(childWorkflowId(handle.workflowId, 'ok')).fetchHistory(),
      ];
      expect(workflowTaskFailures(histories)).toEqual({});
    });
  });

  it('reserves what the parent has left: a child of a nearly spent run gets one step', async () => {
    await withWorker(async (taskQueue) => {
      const handle = await start(taskQueue, {
        task: 'small budget',
        model: scripted(callTurn(['helper', { task: 'work' }, 'h']), answerTurn('helper said: {{result:h}}')),
        policy: { maxSteps: 3 },
        agents: {
          helper: {
            description: 'Does work in many steps',
            model: scripted(
              callTurn(['calculator', { expression: '1+1' }, 'c1']),
              callTurn(['calculator', { expression: '2+2' }, 'c2']),
              answerTurn('done'),
            ),
            tools: ['calculator'],
          },
        },
      });
      const result = (await handle.result()) as AgentResult;
      // 3 steps: 1 taken, 1 kept for the parent, 1 for the child, which its budget stop then ends.
      const s = await state(handle.workflowId);
      expect(s.agents?.[0]?.reserved.steps).toBe(1);
      expect(s.agents?.[0]?.status).toBe('stopped');
      expect(result.answer).toContain('The sub-agent stopped before it finished');
    });
  });

  // Every model call of these scripts costs 100 tokens (80 in, 20 out), $0.01 at $100 per million.
  const CALL = { inputTokens: 80, outputTokens: 20 };
  const PRICES = { scripted: { inputPerMillion: 100, outputPerMillion: 100 } };
  it.each([
    { budget: 'tokens', policy: { maxTokens: 950 }, limit: 950, perCall: 100 },
    { budget: 'cost', policy: { maxCostUsd: 0.095, prices: PRICES }, limit: 0.095, perCall: 0.01 },
  ])(
    'a child stops on its reserved share of the parent’s $budget; the tree stops within one model call of the parent’s limit',
    async ({ budget, policy, limit, perCall }) => {
      await withWorker(async (taskQueue) => {
        const handle = await start(taskQueue, {
          task: 'delegate a long job',
          model: scripted(
            { ...callTurn(['helper', { task: 'work' }, 'h']), usage: CALL },
            { ...answerTurn('helper said: {{result:h}}'), usage: CALL },
          ),
          tools: [],
          policy,
          agents: {
            helper: {
              description: 'Works in many steps',
              tools: ['calculator'],
              // More work than the parent can pay for.
              model: scripted(
                ...Array.from({ length: 20 }, (_, i) => ({
                  ...callTurn(['calculator', { expression: `${i}+1` }, `c${i}`]),
                  usage: CALL,
                })),
                { ...answerTurn('done'), usage: CALL },
              ),
            },
          },
        });
        const result = (await handle.result()) as AgentResult;
        const spent = (u: AgentResult['usage'], cost: number | undefined) =>
          budget === 'tokens' ? u.inputTokens + u.outputTokens : (cost ?? 0);
        const s = await state(handle.workflowId);
        const child = s.agents?.[0];
        const reserved = budget === 'tokens' ? child?.reserved.tokens : child?.reserved.costUsd;
        // The parent's first call spent one call's worth; the child may have all the rest.
        expect(reserved).toBeCloseTo(limit - perCall, 6);
        expect(child?.status).toBe('stopped');
        const childResult = (await temporal.env.client.workflow
          .getHandle(childWorkflowId(handle.workflowId, 'h'))
          .result()) as AgentResult;
        expect(childResult.stopReason).toBe(budget === 'tokens' ? 'max_tokens' : 'max_cost');
        // It stopped on its share: past it by less than one model call, not before it.
        const childSpent = spent(childResult.usage, childResult.costUsd);
        expect(childSpent).toBeGreaterThanOrEqual(reserved as number);
        expect(childSpent).toBeLessThan((reserved as number) + perCall);
        // The parent stopped too; when it did (before its own summary turn, which every run a
        // budget stops takes), the whole tree was within one model call of its limit.
        expect(result.stopReason).toBe(budget === 'tokens' ? 'max_tokens' : 'max_cost');
        const atStop = spent(result.usage, result.costUsd) - perCall;
        expect(atStop).toBeGreaterThanOrEqual(limit);
        expect(atStop).toBeLessThanOrEqual(limit + perCall);
        expect(result.answer).toContain('helper said: (The sub-agent stopped before it finished: ');
        expect(result.answer).toContain(', without a summary.)');
      });
    },
  );

  it('enforces the depth limit and the limit on children in flight with clear errors', async () => {
    await withWorker(async (taskQueue) => {
      const handle = await start(taskQueue, {
        task: 'nest',
        model: scripted(
          callTurn(['outer', { task: 'a' }, 'o1'], ['outer', { task: 'b' }, 'o2']),
          answerTurn('{{result:o1}} | {{result:o2}}'),
        ),
        policy: { maxAgentDepth: 1, maxChildAgents: 1 },
        agents: {
          outer: {
            description: 'Calls an inner agent',
            model: scripted(callTurn(['inner', { task: 'x' }, 'i']), answerTurn('inner: {{result:i}}')),
            agents: { inner: { description: 'Too deep', model: scripted(answerTurn('deep')) } },
          },
        },
      });
      const result = (await handle.result()) as AgentResult;
      expect(result.answer).toContain(
        'inner: Sub-agent inner was not started: it would run at depth 2, and policy.maxAgentDepth is 1.',
      );
      expect(result.answer).toContain('policy.maxChildAgents is 1');
    });
  });

  it('routes a child’s approval: the child waits, the parent shows it, approving the child finishes both', async () => {
    await withWorker(async (taskQueue) => {
      const handle = await start(taskQueue, {
        task: 'needs approval',
        model: scripted(callTurn(['helper', { task: 'compute' }, 'h']), answerTurn('got {{result:h}}')),
        agents: {
          helper: {
            description: 'Computes with approval',
            model: scripted(callTurn(['calculator', { expression: '6*7' }, 'c']), answerTurn('{{result:c}}')),
            tools: ['calculator'],
            policy: { requireApproval: ['calculator'] },
          },
        },
      });
      const childId = childWorkflowId(handle.workflowId, 'h');
      const parentView = await until(
        handle.workflowId,
        (s) => s.agents?.[0]?.status === 'waiting_for_approval',
      );
      expect(parentView.agents?.[0]?.workflowId).toBe(childId);
      const childView = await until(childId, (s) => (s.approvals?.length ?? 0) > 0);
      expect(childView.approvals?.[0]?.toolCallId).toBe('c');
      await temporal.env.client.workflow
        .getHandle(childId)
        .executeUpdate(approveToolCallUpdate, { args: [{ toolCallId: 'c', approve: true }] });
      const result = (await handle.result()) as AgentResult;
      expect(result.answer).toBe('got 42');
    });
  });

  it('cancels the children when the parent is cancelled', async () => {
    await withWorker(async (taskQueue) => {
      const handle = await start(taskQueue, {
        task: 'cancel me',
        model: scripted(callTurn(['helper', { task: 'wait' }, 'h']), answerTurn('never')),
        agents: {
          helper: {
            description: 'Waits for approval that never comes',
            model: scripted(callTurn(['calculator', { expression: '1' }, 'c']), answerTurn('x')),
            tools: ['calculator'],
            policy: { requireApproval: ['calculator'], approvalTimeout: '1 day' },
          },
        },
      });
      const childId = childWorkflowId(handle.workflowId, 'h');
      await until(childId, (s) => s.status === 'waiting_for_approval');
      await handle.cancel();
      await expect(handle.result()).rejects.toBeInstanceOf(WorkflowFailedError);
      const child = await temporal.env.client.workflow.getHandle(childId).describe();
      expect(child.status.name).toBe('CANCELLED');
    });
  });

  it('uses a sub-agent of the worker’s config by agent:<name>; an unknown one fails the run naming those it has', async () => {
    const agents = {
      translator: {
        description: 'Translates to German',
        tools: [],
        model: scripted(answerTurn('Guten Morgen')),
      },
    };
    await withWorker(
      async (taskQueue) => {
        const handle = await start(taskQueue, {
          task: 'translate',
          tools: ['agent:translator'],
          model: scripted(
            callTurn(['translator', { task: 'Good morning' }, 't']),
            answerTurn('{{result:t}}'),
          ),
        });
        expect(((await handle.result()) as AgentResult).answer).toBe('Guten Morgen');
        const unknown = await start(taskQueue, {
          task: 'translate',
          tools: ['agent:poet'],
          model: scripted(answerTurn('x')),
        });
        const err = await unknown.result().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(WorkflowFailedError);
        expect((err as WorkflowFailedError).cause?.message).toBe(
          'Invalid run: the worker\'s config has no sub-agent "poet"; it has translator',
        );
      },
      { runDefaults: { agents } },
    );
  });

  it('asks for approval of a sub-agent call the policy names, before the child starts', async () => {
    await withWorker(async (taskQueue) => {
      const handle = await start(taskQueue, {
        task: 'gated',
        model: scripted(callTurn(['helper', { task: 'go' }, 'h']), answerTurn('{{result:h}}')),
        policy: { requireApproval: ['helper'] },
        agents: { helper: { description: 'Helps', tools: [], model: scripted(answerTurn('done')) } },
      });
      const waiting = await until(handle.workflowId, (s) => (s.approvals?.length ?? 0) > 0);
      expect(waiting.approvals?.[0]).toMatchObject({ toolCallId: 'h', tool: 'helper' });
      expect(waiting.agents).toEqual([]);
      await handle.executeUpdate(approveToolCallUpdate, { args: [{ toolCallId: 'h', approve: true }] });
      expect(((await handle.result()) as AgentResult).answer).toBe('done');
    });
  });

  it('counts a grandchild’s steps against the top run’s budget', async () => {
    await withWorker(async (taskQueue) => {
      const handle = await start(taskQueue, {
        task: 'nest',
        model: scripted(callTurn(['outer', { task: 'a' }, 'o']), answerTurn('{{result:o}}')),
        agents: {
          outer: {
            description: 'Calls an inner agent',
            model: scripted(callTurn(['inner', { task: 'x' }, 'i']), answerTurn('inner said {{result:i}}')),
            agents: { inner: { description: 'Answers', model: scripted(answerTurn('deep')) } },
          },
        },
      });
      const result = (await handle.result()) as AgentResult;
      expect(result.answer).toBe('inner said deep');
      // 2 steps of its own, 2 of outer, 1 of inner.
      expect(result.agentSteps).toBe(3);
      const s = await state(handle.workflowId);
      expect(s.budgets?.max_steps?.used).toBe(5);
      expect(s.agents?.[0]?.steps).toBe(3);
    });
  });
  it('a child gets the parent’s tool timeouts, its own policy’s entry for a tool over the parent’s', async () => {
    await withWorker(async (taskQueue) => {
      const handle = await start(taskQueue, {
        task: 'time it',
        model: scripted(callTurn(['timer', { task: 'now' }, 't']), answerTurn('{{result:t}}')),
        policy: {
          toolTimeouts: {
            calculator: { startToCloseTimeout: '7 seconds' },
            get_time: { startToCloseTimeout: '8 seconds' },
          },
        },
        agents: {
          timer: {
            description: 'Tells the time and adds',
            model: scripted(
              callTurn(['get_time', { timezone: 'UTC' }, 'g'], ['calculator', { expression: '1+1' }, 'c']),
              answerTurn('done'),
            ),
            tools: ['get_time', 'calculator'],
            policy: { toolTimeouts: { get_time: { startToCloseTimeout: '9 seconds' } } },
          },
        },
      });
      expect(((await handle.result()) as AgentResult).answer).toBe('done');
      const child = temporal.env.client.workflow.getHandle(childWorkflowId(handle.workflowId, 't'));
      const history = await child.fetchHistory();
      const scheduled = Object.fromEntries(
        (history.events ?? [])
          .map((e) => e.activityTaskScheduledEventAttributes)
          .filter((a) => a?.activityType?.name === 'get_time' || a?.activityType?.name === 'calculator')
          .map((a) => [a?.activityType?.name, Number(a?.startToCloseTimeout?.seconds)]),
      );
      expect(scheduled).toEqual({ calculator: 7, get_time: 9 });
    });
  });
});
