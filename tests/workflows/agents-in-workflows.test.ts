/**
 * Agents inside someone else's workflows, on the time-skipping server: a worker made with the
 * plugin and a workflows file of the app's own (the plugin adds the agent's workflows to it), a
 * workflow that runs an agent as a child and gets its typed answer, notifies an inbox and asks for
 * an approval; cancelling the workflow cancels the agent.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { DefaultLogger, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { z } from 'zod';
import { defineTool } from '../../activities/own-tools/define';
import { decideApproval } from '../../client/approval-client';
import { inboxWorkflowId, notificationsQuery } from '../../shared/notifications/messages';
import { DurableAgentPlugin } from '../../workers/plugin';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { testConfig, uid } from '../../testkit/temporal';
import type { SupportDeskInput } from '../fixtures/workflows/support-desk';
import { useTimeSkippingEnv } from '../support/environments';

const temporal = useTimeSkippingEnv({ bundle: false });
const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Looks up an order.',
  input: z.object({ orderId: z.string() }),
  run: ({ orderId }) => ({ orderId, status: 'damaged in transit' }),
});

const plugin = new DurableAgentPlugin({ config: testConfig(), tools: [lookupOrder] });
let bundle: WorkflowBundleWithSourceMap;
beforeAll(async () => {
  // The app's own workflows; the plugin bundles the agent's beside them (its configureBundler).
  bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../fixtures/workflows/support-desk'),
    plugins: [plugin],
    logger: new DefaultLogger('WARN'),
  });
}, 180_000);

/** Runs `fn` while a worker of the app (its bundle, the plugin) polls a task queue of its own. */
async function withAppWorker<T>(fn: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = uid('tq');
  const worker = await Worker.create({
    connection: temporal.env.nativeConnection,
    taskQueue,
    workflowBundle: bundle,
    plugins: [plugin],
  });
  return worker.runUntil(fn(taskQueue));
}

const decidingTurns = [
  callTurn(['lookup_order', { orderId: 'A-17' }]),
  answerTurn('{"orderId": "A-17", "refund": true}'),
];

async function inboxItems(user: string) {
  const page = await temporal.env.client.workflow.getHandle(inboxWorkflowId(user)).query(notificationsQuery);
  return page.notifications;
}

test('a workflow runs an agent as a child, gets its typed answer, notifies an inbox and waits for an approval', async () =>
  withAppWorker(async (taskQueue) => {
    const user = uid('user').replace(/[^a-z0-9]/gi, '');
    const input: SupportDeskInput = {
      orderId: uid('A'),
      user,
      model: { provider: 'scripted', turns: decidingTurns },
      tools: ['lookup_order'],
    };
    const handle = await temporal.env.client.workflow.start('supportDesk', {
      taskQueue,
      workflowId: uid('desk'),
      args: [input],
    });
    // The approval's notification reaches the user's inbox, naming how to answer.
    let items = await inboxItems(user).catch(() => []);
    for (let i = 0; i < 200 && !items.some((n) => n.title.startsWith('Refund')); i++) {
      await new Promise((r) => setTimeout(r, 100));
      items = await inboxItems(user).catch(() => []);
    }
    expect(items.map((n) => n.title)).toEqual(['Order checked', 'Refund A-17?']);
    expect(items[0]?.message).toBe('A-17: refund true');
    expect(items[1]?.message).toContain(`durable-agent approve ${handle.workflowId} refund`);
    // A wrong key is refused with the keys that wait; the right one decides.
    await expect(
      decideApproval(temporal.env.client, handle.workflowId, { toolCallId: 'nope', approve: true }),
    ).rejects.toThrow(/No approval request "nope" waits in this workflow; waiting: refund/);
    await decideApproval(temporal.env.client, handle.workflowId, { toolCallId: 'refund', approve: true });
    expect(await handle.result()).toEqual({
      verdict: { orderId: 'A-17', refund: true },
      approved: true,
      timedOut: false,
    });
    // The agent ran as a child of the app's workflow, under the id the app gave it.
    const child = await temporal.env.client.workflow.getHandle(`${input.orderId}-agent`).describe();
    expect(child.type).toBe('agentWorkflow');
    expect(child.parentExecution?.workflowId).toBe(handle.workflowId);
    // Answered: the same notification, updated in place.
    const after = await inboxItems(user);
    expect(after).toHaveLength(2);
    expect(after[1]?.message).toBe('Approved.');
  }));

test('an approval nobody answers counts as no once its timeout passes', async () =>
  withAppWorker(async (taskQueue) => {
    const user = uid('user').replace(/[^a-z0-9]/gi, '');
    const result = await temporal.env.client.workflow.execute('supportDesk', {
      taskQueue,
      workflowId: uid('desk'),
      args: [
        {
          orderId: uid('A'),
          user,
          model: { provider: 'scripted', turns: decidingTurns },
          tools: ['lookup_order'],
        },
      ],
    });
    expect(result).toMatchObject({ approved: false, timedOut: true });
    expect((await inboxItems(user))[1]?.message).toBe('Nobody answered in time: counted as no.');
  }));

test('cancelling the workflow cancels the agent it runs, and the agent cancels its tool', async () =>
  withAppWorker(async (taskQueue) => {
    const childId = uid('child');
    const handle = await temporal.env.client.workflow.start('longAgentStep', {
      taskQueue,
      workflowId: uid('long'),
      args: [{ childId }],
    });
    const child = temporal.env.client.workflow.getHandle(childId);
    for (let i = 0; i < 200; i++) {
      const events = await child.query('events', { since: 0 }).catch(() => []);
      if ((events as { kind: string }[]).some((e) => e.kind === 'tool_started')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await handle.cancel();
    const err = await handle.result().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect((err as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    expect((await child.describe()).status.name).toBe('CANCELLED');
  }));

test('an agent whose typed output does not match fails the step with the reason', async () =>
  withAppWorker(async (taskQueue) => {
    const err = await temporal.env.client.workflow
      .execute('supportDesk', {
        taskQueue,
        workflowId: uid('desk'),
        args: [
          {
            orderId: uid('A'),
            user: 'nobody',
            model: {
              provider: 'scripted',
              turns: [
                answerTurn('{"orderId": 17}'),
                answerTurn('{"orderId": 17}'),
                answerTurn('{"orderId": 17}'),
              ],
            },
            tools: [],
          },
        ],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const messages: string[] = [];
    for (let e: Error | undefined = err as Error; e; e = (e as { cause?: Error }).cause)
      messages.push(e.message);
    expect(messages.join(' | ')).toMatch(/output/i);
  }));
