import type { Client } from '@temporalio/client';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import {
  INBOX_WORKFLOW_TYPE,
  inboxUser,
  inboxWorkflowId,
  notifyUpdate,
} from '../../shared/notifications/messages';
import type { NotifyResult } from '../../shared/notifications/messages';
import type { NotificationInput } from '../../shared/notifications/schema';

/** Input of the `deliverNotification` activity. */
export interface DeliverNotificationInput {
  /** Workflow ids: agent runs, or `inbox:<user>` (created on first delivery). */
  targets: string[];
  notification: NotificationInput;
}

/**
 * Sends one notification to each target through the `notify` update: the same path every producer
 * uses. The target validates it before it enters history (and refuses it while its history is past
 * the high-water mark); each answer says where it was stored. Inboxes are created on first use by
 * update-with-start. Sending again with the same `id` updates in place, so a retry adds nothing.
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

/** The failure when a worker has no Temporal client to deliver with. */
export function notificationsUnavailable(): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'NotificationsUnavailable',
    message: 'This worker was created without a Temporal client, so it cannot deliver notifications',
    nonRetryable: true,
  });
}
