/**
 * Sub-agents on a real dev server with worker processes: a worker SIGKILLed while a child runs
 * loses nothing and starts no second child; a child's approval reaches the parent's user, tagged
 * with both runs, is answered with `durable-agent approve` on the child, and `status` shows the
 * tree with what each child used. On the file's shared worker, at once: two children in parallel,
 * a failing child, a parent cancelled mid-child, a child stopped by its reserved budget, and a
 * child forked from a step running on its own.
 */
import type { temporal } from '@temporalio/proto';
import type { AgentInput, AgentResult, AgentStateView } from '../../shared/agent';
import { childWorkflowId, stateQuery } from '../../shared/agent';
import type { ScriptedTurn } from '../../shared/model';
import { startAgentRun } from '../../client/start-run';
import { workflowTaskFailures } from '../../testkit/history';
import { runCli, startWorkerProcess } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

// The file's worker polls dev.taskQueue; the SIGKILL case runs workers of its own on another queue.
// Every case runs at once: most of each is waiting for the server.
const dev = useDevServer({ queue: 'sub-agents', worker: true });

function scripted(...turns: ScriptedTurn[]): AgentInput['model'] {
  return { provider: 'scripted', turns };
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, tries = 300): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function eventsOf(
  history: temporal.api.history.v1.IHistory,
  key: keyof temporal.api.history.v1.IHistoryEvent,
) {
  return (history.events ?? []).filter((e) => e[key]);
}

test.concurrent(
  'a worker SIGKILLed while a child runs: the run finishes, one child, its call run again elsewhere',
  async () => {
    const taskQueue = uid('sub-agents-kill');
    // Once the retried wait finished, each run's next task waits 2 s (not the SDK's 10 s) for the
    // killed worker that kept it in memory.
    const env = { ...dev.env, DURABLE_AGENT_TASK_QUEUE: taskQueue, DURABLE_AGENT_STICKY_QUEUE_TIMEOUT: '2s' };
    const first = await startWorkerProcess(env);
    const id = uid('team');
    const input: AgentInput = {
      task: 'delegate a slow job',
      model: {
        provider: 'scripted',
        turns: [callTurn(['slow', { task: 'wait a bit' }, 's']), answerTurn('slow said: {{result:s}}')],
      },
      agents: {
        slow: {
          description: 'Waits, then answers',
          tools: ['wait'],
          model: {
            provider: 'scripted',
            turns: [callTurn(['wait', { seconds: 2 }, 'w']), answerTurn('waited ({{result:w}})')],
          },
        },
      },
    };
    const handle = await startAgentRun(dev.fx.client, input, { workflowId: id, taskQueue });
    const childId = childWorkflowId(id, 's');
    // The child's wait is running on the first worker: it dies under it.
    await until('the child’s wait to run', async () => {
      const s = await dev.fx.client.workflow.getHandle(childId).query(stateQuery);
      return s.pendingToolCalls.some((p) => p.state === 'running');
    });
    first.child.kill('SIGKILL');
    await first.exited;
    const second = await startWorkerProcess(env);
    try {
      const result = (await handle.result()) as AgentResult;
      expect(result.stopReason).toBe('final_answer');
      expect(result.answer).toMatch(/^slow said: waited \(/);
      const parent = await handle.fetchHistory();
      expect(eventsOf(parent, 'startChildWorkflowExecutionInitiatedEventAttributes')).toHaveLength(1);
      expect(eventsOf(parent, 'childWorkflowExecutionCompletedEventAttributes')).toHaveLength(1);
      // One child execution: the one the parent started, run to its end across the two workers.
      const started = eventsOf(parent, 'childWorkflowExecutionStartedEventAttributes')[0]
        ?.childWorkflowExecutionStartedEventAttributes?.workflowExecution;
      expect(started?.workflowId).toBe(childId);
      const child = await dev.fx.client.workflow.getHandle(childId).describe();
      expect(child.runId).toBe(started?.runId);
      expect(child.status.name).toBe('COMPLETED');
      const childHistory = await dev.fx.client.workflow.getHandle(childId).fetchHistory();
      // The wait activity was scheduled once; the kill lost its first attempt, the second finished it.
      const waits = eventsOf(childHistory, 'activityTaskScheduledEventAttributes').filter(
        (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'wait',
      );
      expect(waits).toHaveLength(1);
      const waitStarted = eventsOf(childHistory, 'activityTaskStartedEventAttributes').find(
        (e) =>
          e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() ===
          waits[0]?.eventId?.toString(),
      );
      expect(waitStarted?.activityTaskStartedEventAttributes?.attempt).toBe(2);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  },
  120_000,
);

test.concurrent(
  'a child’s approval reaches the parent’s user tagged with both runs, is approved from the CLI, and status shows the tree',
  async () => {
    const user = uid('lea');
    const id = uid('team');
    const input: AgentInput = {
      task: 'delegate a calculation that needs approval',
      notify: { user },
      model: {
        provider: 'scripted',
        turns: [callTurn(['helper', { task: 'compute' }, 'h']), answerTurn('helper: {{result:h}}')],
      },
      agents: {
        helper: {
          description: 'Computes with approval',
          tools: ['calculator'],
          policy: { requireApproval: ['calculator'] },
          model: {
            provider: 'scripted',
            turns: [callTurn(['calculator', { expression: '6*7' }, 'c']), answerTurn('{{result:c}}')],
          },
        },
      },
    };
    const handle = await startAgentRun(dev.fx.client, input, { workflowId: id, taskQueue: dev.taskQueue });
    const childId = childWorkflowId(id, 'h');
    let seen: AgentStateView | undefined;
    await until('the parent to see its child wait', async () => {
      seen = await handle.query(stateQuery);
      return seen.agents?.[0]?.status === 'waiting_for_approval';
    }).catch((err: Error) => {
      throw new Error(`${err.message}; the parent's state: ${JSON.stringify(seen)}`);
    });
    const listed = await until(
      'the approval in the user’s list',
      async () => {
        const r = await runCli(['approvals', '--user', user], dev.env);
        return r.stdout.includes(childId) ? r : undefined;
      },
      100,
    );
    expect(listed.stdout).toContain(`${childId} c: calculator until `);
    const inbox = await until(
      'the approval notice in the inbox',
      async () => {
        const r = await runCli(['notifications', `inbox:${user}`, '--json'], dev.env);
        return r.code === 0 && r.stdout.includes('Approval needed') ? r : undefined;
      },
      100,
    );
    expect(inbox.stdout).toContain(`(sub-agent helper of run ${id})`);
    const status = await runCli(['status', id], dev.env);
    expect(status.stdout).toContain(`sub-agent helper h: waiting_for_approval, `);
    expect(status.stdout).toContain(`(run ${childId})`);

    const approved = await runCli(['approve', childId, 'c'], dev.env);
    expect(approved).toMatchObject({ code: 0, stdout: 'c: approved\n' });
    expect(((await handle.result()) as AgentResult).answer).toBe('helper: 42');
    const after = await runCli(['status', id], dev.env);
    expect(after.stdout).toContain(`sub-agent helper h: completed, 2 steps, `);
    const childStatus = await runCli(['status', childId], dev.env);
    expect(childStatus.stdout).toContain(`sub-agent helper of run ${id} (call h)`);
  },
  120_000,
);

/** Starts a run on the file's worker. */
function start(input: AgentInput, id = uid('team')) {
  return startAgentRun(dev.fx.client, input, { workflowId: id, taskQueue: dev.taskQueue });
}

function history(workflowId: string) {
  return dev.fx.client.workflow.getHandle(workflowId).fetchHistory();
}

test.concurrent(
  'two children run in parallel, each with its typed output; the parent reads both',
  async () => {
    const FINDING = {
      type: 'object',
      properties: { city: { type: 'string' }, people: { type: 'integer' } },
      required: ['city', 'people'],
      additionalProperties: false,
    };
    const handle = await start({
      task: 'compare two cities',
      model: scripted(
        callTurn(['researcher', { task: 'Berlin' }, 'r1'], ['researcher', { task: 'Paris' }, 'r2']),
        answerTurn('Berlin: {{result:r1}} / Paris: {{result:r2}}'),
      ),
      tools: [],
      agents: {
        researcher: {
          description: 'Finds how many people live in a city',
          tools: ['wait'],
          // Each child waits a second: both are running at the same time or the parent is serial.
          model: scripted(
            callTurn(['wait', { seconds: 1 }, 'w']),
            answerTurn('{"city":"X","people":3600000}'),
          ),
          output: FINDING,
        },
      },
    });
    const result = (await handle.result()) as AgentResult;
    expect(result.answer).toBe(
      'Berlin: {"city":"X","people":3600000} / Paris: {"city":"X","people":3600000}',
    );
    const parent = await handle.fetchHistory();
    const events = parent.events ?? [];
    const initiated = events.flatMap((e, i) =>
      e.startChildWorkflowExecutionInitiatedEventAttributes ? [i] : [],
    );
    const completed = events.flatMap((e, i) => (e.childWorkflowExecutionCompletedEventAttributes ? [i] : []));
    expect(initiated).toHaveLength(2);
    expect(completed).toHaveLength(2);
    // Both children were started before either ended.
    expect(Math.max(...initiated)).toBeLessThan(Math.min(...completed));
    const s = await handle.query(stateQuery);
    expect(s.agents?.map((c) => [c.workflowId, c.status, c.steps]).sort()).toEqual([
      [childWorkflowId(handle.workflowId, 'r1'), 'completed', 2],
      [childWorkflowId(handle.workflowId, 'r2'), 'completed', 2],
    ]);
    for (const call of ['r1', 'r2']) {
      const child = dev.fx.client.workflow.getHandle(childWorkflowId(handle.workflowId, call));
      expect(((await child.result()) as AgentResult).output).toEqual({ city: 'X', people: 3600000 });
    }
  },
  120_000,
);

test.concurrent(
  'a failing child reaches the parent’s model as a tool error; the parent finishes; no workflow task failure',
  async () => {
    const handle = await start({
      task: 'count people',
      model: scripted(callTurn(['counter', { task: 'Oslo' }, 'c']), answerTurn('told: {{result:c}}')),
      tools: [],
      agents: {
        counter: {
          description: 'Counts people',
          tools: [],
          // Never valid JSON: the child fails with OutputValidationError after its two repairs.
          model: scripted(
            answerTurn('about 700k'),
            answerTurn('seven hundred thousand'),
            answerTurn('700000?'),
          ),
          output: { type: 'object', properties: { people: { type: 'integer' } }, required: ['people'] },
        },
      },
    });
    const result = (await handle.result()) as AgentResult;
    expect(result.stopReason).toBe('final_answer');
    expect(result.answer).toMatch(/^told: Sub-agent counter failed: OutputValidationError: /);
    const childId = childWorkflowId(handle.workflowId, 'c');
    expect((await dev.fx.client.workflow.getHandle(childId).describe()).status.name).toBe('FAILED');
    const s = await handle.query(stateQuery);
    expect(s.agents?.[0]).toMatchObject({ toolCallId: 'c', status: 'failed' });
    expect(workflowTaskFailures([await handle.fetchHistory(), await history(childId)])).toEqual({});
  },
  120_000,
);

test.concurrent(
  'the parent cancelled while its child waits: the child is cancelled too',
  async () => {
    const handle = await start({
      task: 'cancel me',
      model: scripted(callTurn(['helper', { task: 'wait' }, 'h']), answerTurn('never')),
      tools: [],
      agents: {
        helper: {
          description: 'Waits for an approval that never comes',
          tools: ['calculator'],
          policy: { requireApproval: ['calculator'], approvalTimeout: '1 day' },
          model: scripted(callTurn(['calculator', { expression: '1' }, 'c']), answerTurn('x')),
        },
      },
    });
    const childId = childWorkflowId(handle.workflowId, 'h');
    await until('the child to wait for approval', async () => {
      const s = await dev.fx.client.workflow.getHandle(childId).query(stateQuery);
      return s.status === 'waiting_for_approval';
    });
    const cancelled = await runCli(['cancel', handle.workflowId], dev.env);
    expect(cancelled.code).toBe(0);
    await expect(handle.result()).rejects.toThrow();
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    // The parent waits for its child's cancellation before it closes.
    expect((await dev.fx.client.workflow.getHandle(childId).describe()).status.name).toBe('CANCELLED');
    const parentEvents = (await handle.fetchHistory()).events ?? [];
    expect(parentEvents.some((e) => e.childWorkflowExecutionCanceledEventAttributes)).toBe(true);
  },
  120_000,
);

test.concurrent(
  'a child that hits its reserved step budget stops there; the parent reads its summary and stops at its own limit',
  async () => {
    const handle = await start({
      task: 'small budget',
      model: scripted(callTurn(['helper', { task: 'work' }, 'h']), answerTurn('helper said: {{result:h}}')),
      tools: [],
      // 3 steps: 1 the parent takes, 1 it keeps for its answer, 1 for the child.
      policy: { maxSteps: 3 },
      agents: {
        helper: {
          description: 'Works in many steps',
          tools: ['calculator'],
          model: scripted(
            callTurn(['calculator', { expression: '1+1' }, 'c1']),
            callTurn(['calculator', { expression: '2+2' }, 'c2']),
            answerTurn('done'),
          ),
        },
      },
    });
    const result = (await handle.result()) as AgentResult;
    // Its last step is its answer (the budget's last step: stopped by max_steps, having answered).
    expect(result.answer).toContain('helper said: (The sub-agent stopped before it finished');
    const child = (await dev.fx.client.workflow
      .getHandle(childWorkflowId(handle.workflowId, 'h'))
      .result()) as AgentResult;
    expect(child.stopReason).toBe('max_steps');
    // The child took its one step and its summary turn; the parent stopped at its limit (then
    // summarised, as every run a budget stops does).
    const s = await handle.query(stateQuery);
    expect(s.agents?.[0]).toMatchObject({ status: 'stopped', steps: 2, reserved: { steps: 1 } });
    expect(result.budget).toBe('3 of 3 steps (100 %)');
  },
  120_000,
);

test.concurrent(
  'fork of a child from a step: the fork runs on its own, and the parent is untouched',
  async () => {
    const handle = await start({
      task: 'delegate, then a gated calculation',
      model: scripted(
        callTurn(['helper', { task: 'add up' }, 'h']),
        // The parent then waits for an approval: it is running while the child is forked.
        callTurn(['calculator', { expression: '40+2' }, 'gate']),
        answerTurn('helper: {{result:h}}; gate: {{result:gate}}'),
      ),
      tools: ['calculator'],
      policy: { requireApproval: ['calculator'] },
      agents: {
        helper: {
          description: 'Adds up in two steps',
          tools: ['calculator'],
          model: scripted(
            callTurn(['calculator', { expression: '1+1' }, 'a']),
            callTurn(['calculator', { expression: '2+2' }, 'b']),
            answerTurn('{{result:a}} and {{result:b}}'),
          ),
        },
      },
    });
    const childId = childWorkflowId(handle.workflowId, 'h');
    await until('the parent to wait for its approval', async () => {
      const s = await handle.query(stateQuery);
      return s.status === 'waiting_for_approval' && s.agents?.[0]?.status === 'completed';
    });
    const forkId = uid('fork-child');
    const fork = await runCli(['fork', childId, '--from-step', '1', '--id', forkId], dev.env);
    expect(fork.stderr).toBe('');
    expect(fork.code).toBe(0);
    expect(fork.stdout).toContain(`forked from ${childId} after step 1`);
    expect(fork.stdout).toContain('2 and 4');
    // On its own: no parent link in its state, and `status` names no parent.
    const forked = dev.fx.client.workflow.getHandle(forkId);
    expect((await forked.describe()).status.name).toBe('COMPLETED');
    expect((await forked.query(stateQuery)).parent).toBeUndefined();
    const status = await runCli(['status', forkId], dev.env);
    expect(status.stdout).not.toContain('sub-agent helper of run');
    // The parent got nothing from the fork: no progress signal after its child ended.
    const after = (await handle.fetchHistory()).events ?? [];
    const childEnded = after.findIndex((e) => e.childWorkflowExecutionCompletedEventAttributes);
    expect(childEnded).toBeGreaterThan(0);
    const progress = after.flatMap((e, i) =>
      e.workflowExecutionSignaledEventAttributes?.signalName === 'subAgentProgress' ? [i] : [],
    );
    expect(progress.filter((i) => i > childEnded)).toEqual([]);
    const child = dev.fx.client.workflow.getHandle(childId);
    expect(((await child.result()) as AgentResult).answer).toBe('2 and 4');
    const approved = await runCli(['approve', handle.workflowId, 'gate'], dev.env);
    expect(approved.code).toBe(0);
    expect(((await handle.result()) as AgentResult).answer).toBe('helper: 2 and 4; gate: 42');
    // The child still has its one run, which the parent started.
    const started = after.find((e) => e.childWorkflowExecutionStartedEventAttributes)
      ?.childWorkflowExecutionStartedEventAttributes?.workflowExecution;
    expect((await child.describe()).runId).toBe(started?.runId);
  },
  120_000,
);
