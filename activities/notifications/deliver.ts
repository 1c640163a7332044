import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import {
  INBOX_WORKFLOW_TYPE,
  inboxUser,
  inboxWorkflowId,
  notifySignal,
} from '../../shared/notifications/messages';
import type { NotificationInput } from '../../shared/notifications/schema';

/** Input of the `deliverNotification` activity. */
export interface DeliverNotificationInput {
  /** Workflow ids: agent runs, or `inbox:<user>` (created on first delivery). */
  targets: string[];
  notification: NotificationInput;
}

/**
 * Sends one notification to each target through the `notify` signal: the same path every producer
 * uses. Inboxes are created on first use by signal-with-start.
 */
export async function deliver(
  client: Client,
  taskQueue: string,
  input: DeliverNotificationInput,
): Promise<void> {
  await Promise.all(
    input.targets.map(async (target) => {
      const user = inboxUser(target);
      if (user !== null) {
        await client.workflow.signalWithStart(INBOX_WORKFLOW_TYPE, {
          workflowId: inboxWorkflowId(user),
          taskQueue,
          args: [{}],
          signal: notifySignal,
          signalArgs: [input.notification],
        });
      } else {
        await client.workflow.getHandle(target).signal(notifySignal, input.notification);
      }
    }),
  );
}

/** The failure when a worker has no Temporal client to deliver with. */
export function notificationsUnavailable(): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'NotificationsUnavailable',
    message: 'This worker was created without a Temporal client, so it cannot deliver notifications',
    nonRetryable: true,
  });
}
