/**
 * An inbox flooded with maximum-size notifications through the update path, with the worker process
 * SIGKILLed twice during the flood, on the real dev server. The inbox is never terminated, answers
 * queries throughout (whenever a worker runs), holds exactly the newest notifications its byte
 * budget allows, and every accepted notification is either kept or counted as evicted.
 *
 * The flood size is a parameter: `NOTIFICATION_FLOOD=1000 npx jest tests/notifications/inbox-flood`
 * runs the full 1,000-notification flood; the default is small enough for a shared machine.
 */
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import {
  NotificationTargetError,
  explainTargetError,
  sendNotification,
} from '../../client/notification-client';
import type { PreparedNotification } from '../../client/notification-client';
import { SIZE_BUDGETS } from '../../shared/temporal-limits';
import { inboxWorkflowId, notificationsQuery } from '../../shared/notifications/messages';
import type { NotifyResult } from '../../shared/notifications/messages';
import { API_NOTIFICATION_DEFAULTS, validateNotificationInput } from '../../shared/notifications/schema';
import { add, createNotificationState } from '../../shared/notifications/state';
import { notificationsBytes } from '../../shared/notifications/sizes';
import type { WorkerProcess } from '../../testkit/processes';
import { startWorkerProcess } from '../../testkit/processes';
import { uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const FLOOD = Number(process.env.NOTIFICATION_FLOOD ?? 60);
const SENDERS = 4;

const dev = useDevServer();

/** A notification at the byte budgets: a 16 KiB message and a 64 KiB detail of multi-byte characters. */
function largest(i: number): PreparedNotification {
  const tag = `flood ${i} `;
  const v = validateNotificationInput(
    {
      id: `flood-${i}`,
      title: `notification ${i}`,
      // 2-byte characters: the byte budget binds before the 10,000-character limit.
      message: tag + 'é'.repeat((SIZE_BUDGETS.notificationMessageBytes - tag.length) >> 1),
      detail: '界'.repeat(Math.floor(SIZE_BUDGETS.notificationDetailBytes / 3)),
    },
    API_NOTIFICATION_DEFAULTS,
  );
  if (!v.ok) throw new Error(v.error);
  return { ...v.value, id: `flood-${i}` };
}

/** Sends one notification, retrying what a client should retry (busy, no worker, unreachable). */
async function sendUntilStored(
  client: Client,
  taskQueue: string,
  target: string,
  n: PreparedNotification,
  outcomes: Record<string, number>,
): Promise<NotifyResult> {
  for (;;) {
    try {
      return await sendNotification(client, taskQueue, target, n);
    } catch (err) {
      if (
        !(err instanceof NotificationTargetError) ||
        !['busy', 'no_worker', 'unreachable'].includes(err.code)
      ) {
        throw err;
      }
      outcomes[err.code] = (outcomes[err.code] ?? 0) + 1;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The `notify` updates every run of the inbox accepted, in the order it applied them. */
async function acceptedNotifications(
  workflowId: string,
): Promise<{ inputs: unknown[]; events: HistoryEvent[] }> {
  const runs: { runId: string; startTime: Date }[] = [];
  for await (const w of dev.fx.client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
    runs.push({ runId: w.runId, startTime: w.startTime });
  }
  runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
  const inputs: unknown[] = [];
  const events: HistoryEvent[] = [];
  for (const run of runs) {
    const history = await dev.fx.client.workflow.getHandle(workflowId, run.runId).fetchHistory();
    for (const e of history.events ?? []) {
      events.push(e);
      const request = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
      if (request?.input?.name !== 'notify') continue;
      const [arg] = (request.input.args?.payloads ?? []).map((p) => defaultPayloadConverter.fromPayload(p));
      inputs.push(arg);
    }
  }
  return { inputs, events };
}

test(`${FLOOD} maximum-size notifications with the worker SIGKILLed twice: nothing terminated, nothing silently dropped`, async () => {
  const taskQueue = uid('flood-tq');
  const target = inboxWorkflowId(uid('flood'));
  // After a kill, the inbox's next task waits 2 s (not the SDK's 10 s) for the killed worker that
  // kept it in memory before the next worker may take it.
  const env = {
    TEMPORAL_ADDRESS: dev.fx.address,
    DURABLE_AGENT_TASK_QUEUE: taskQueue,
    DURABLE_AGENT_STICKY_QUEUE_TIMEOUT: '2s',
  };
  let worker: WorkerProcess = await startWorkerProcess(env);
  const outcomes: Record<string, number> = {};
  const stored = new Map<string, NotifyResult>();
  const queried: number[] = [];
  const queryErrors: string[] = [];
  let next = 0;
  let kills = 0;
  let restarting = false;
  try {
    const senders = Array.from({ length: SENDERS }, async () => {
      while (next < FLOOD) {
        const i = next++;
        const n = largest(i);
        stored.set(n.id, await sendUntilStored(dev.fx.client, taskQueue, target, n, outcomes));
        // Kill the worker at a third and at two thirds of the flood; the next one starts a moment later.
        if (!restarting && kills < 2 && next >= ((kills + 1) * FLOOD) / 3) {
          restarting = true;
          kills += 1;
          const dying = worker;
          dying.child.kill('SIGKILL');
          await dying.exited;
          await new Promise((r) => setTimeout(r, 500));
          worker = await startWorkerProcess(env);
          restarting = false;
        }
      }
    });
    // Queries throughout the flood: each answer is within the query budget and holds the budget.
    const watcher = (async () => {
      while (next < FLOOD) {
        try {
          const page = await dev.fx.client.workflow.getHandle(target).query(notificationsQuery);
          expect(notificationsBytes(page.notifications)).toBeLessThanOrEqual(
            SIZE_BUDGETS.notificationStateBytes,
          );
          queried.push(page.count);
        } catch (err) {
          // Before the inbox exists, or while no worker runs, a query cannot be answered; any
          // other failure (too large, not found once it exists) breaks the promise.
          const e = explainTargetError(err, target);
          const code = e instanceof NotificationTargetError ? e.code : String(err);
          if (code !== 'no_worker' && !(code === 'not_found' && stored.size === 0)) queryErrors.push(code);
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    await Promise.all([...senders, watcher]);

    expect(kills).toBe(2);
    expect(stored.size).toBe(FLOOD);
    expect(queried.length).toBeGreaterThan(0);
    expect(queryErrors).toEqual([]);

    const end = await dev.fx.client.workflow.getHandle(target).query(notificationsQuery);
    expect((await dev.fx.client.workflow.getHandle(target).describe()).status.name).toBe('RUNNING');

    // The ground truth is the history: every update the inbox accepted, in order. Replaying them
    // through the state machine gives exactly the list the inbox holds.
    const { inputs, events } = await acceptedNotifications(target);
    expect(events.filter((e) => e.workflowExecutionTerminatedEventAttributes)).toEqual([]);
    expect(events.filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
    let expected = createNotificationState({ guid: end.guid });
    let created = 0;
    for (const input of inputs) {
      const v = validateNotificationInput(input, API_NOTIFICATION_DEFAULTS);
      if (!v.ok) throw new Error(v.error);
      const r = add(expected, v.value, { now: '2026-01-01T00:00:00.000Z', newId: () => 'unused' });
      if (r.created) created += 1;
      expected = r.state;
    }
    expect(end.notifications.map((n) => n.id)).toEqual(expected.notifications.map((n) => n.id));
    expect(end.evicted).toBe(expected.evicted);
    // Every created notification is kept or counted as evicted; every one the senders were told
    // was stored is among those the inbox accepted.
    expect(end.evicted + end.count).toBe(created);
    const acceptedIds = new Set(inputs.map((i) => (i as { id: string }).id));
    for (const id of stored.keys()) expect(acceptedIds.has(id)).toBe(true);
    // The newest notifications the budget allows: the kept ones are the last ones sent, and one
    // more would not fit.
    expect(end.count).toBeLessThan(FLOOD);
    expect(notificationsBytes(end.notifications)).toBeLessThanOrEqual(SIZE_BUDGETS.notificationStateBytes);
    const oneMore = notificationsBytes([end.notifications[0]!]) - 2 + 1;
    expect(notificationsBytes(end.notifications) + oneMore).toBeGreaterThan(
      SIZE_BUDGETS.notificationStateBytes,
    );

    const runs = await dev.fx.client.workflow.count(`WorkflowId = "${target}"`);
    console.log(
      `flood: ${FLOOD} notifications, ${inputs.length} accepted updates, ${runs.count} runs, ` +
        `${end.count} kept, ${end.evicted} evicted, retried: ${JSON.stringify(outcomes)}`,
    );
  } finally {
    worker.child.kill('SIGKILL');
    await worker.exited;
  }
}, 600_000);
