/**
 * The one route a notification takes (see shared/notifications/delivery.ts), over a Temporal
 * client: the `notify` update to a run, update-with-start to an inbox.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { WithStartWorkflowOperation } from '@temporalio/client';
import {
  INBOX_WORKFLOW_TYPE,
  inboxUser,
  inboxWorkflowId,
  notifyUpdate,
} from '../../shared/notifications/messages';
import type { NotifyResult } from '../../shared/notifications/messages';
import type { DeliverNotificationInput, NotificationDelivery } from '../../shared/notifications/delivery';

/**
 * Sends one notification to each target through the `notify` update: the same path every producer
 * uses. The target validates it before it enters history (and refuses it while its history is past
 * the high-water mark); each answer says where it was stored. Inboxes are created on first use by
 * update-with-start on `taskQueue`. Sending again with the same `id` updates in place, so a retry
 * adds nothing.
 */
export async function deliver(
  client: Client,
  taskQueue: string,
  input: DeliverNotificationInput,
): Promise<NotifyResult[]> {
  return Promise.all(
    input.targets.map(async (target) => {
      const user = inboxUser(target);
      if (user === null) {
        return client.workflow.getHandle(target).executeUpdate(notifyUpdate, { args: [input.notification] });
      }
      return client.workflow.executeUpdateWithStart(notifyUpdate, {
        args: [input.notification],
        startWorkflowOperation: new WithStartWorkflowOperation(INBOX_WORKFLOW_TYPE, {
          workflowId: inboxWorkflowId(user),
          taskQueue,
          args: [{}],
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      });
    }),
  );
}

/** The delivery a worker's notification activities use: {@link deliver} over `client`. */
export function notificationDelivery(client: Client, taskQueue: string): NotificationDelivery {
  return (input, opts) =>
    opts?.signal
      ? client.withAbortSignal(opts.signal, () => deliver(client, taskQueue, input))
      : deliver(client, taskQueue, input);
}

/**
 * Delivery over the client of the worker running the activity (Temporal gives every activity its
 * worker's client), creating inboxes on the activity's task queue: what a worker made with the
 * plugin uses unless told otherwise.
 */
export function deliveryOverActivityClient(): NotificationDelivery {
  return (input, opts) => {
    const ctx = Context.current();
    return notificationDelivery(ctx.client, ctx.info.taskQueue)(input, opts);
  };
}
