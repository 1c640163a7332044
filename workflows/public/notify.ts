/**
 * Notifications from your own workflows: to a user's inbox, by the route every notification takes
 * (the `notify` update; the inbox is created on first use), through the delivery activity the
 * plugin registers on your worker.
 */
import { uuid4 } from '@temporalio/workflow';
import { inboxUserProblem } from '../../shared/identifiers';
import { inboxWorkflowId } from '../../shared/notifications/messages';
import type { NotificationInput } from '../../shared/notifications/schema';
import { API_NOTIFICATION_DEFAULTS, validateNotificationInput } from '../../shared/notifications/schema';
import { deliverNotification } from '../agent/activities';
import { ApplicationFailure } from '@temporalio/workflow';

/**
 * Sends a notification to `inbox:<user>` and returns its id. The id is fixed before it is sent
 * (yours, or a new uuid), so a retried delivery updates the same item; give the same `id` again
 * to update it in place (progress). Bad input (no message, an unknown type, over the size budgets)
 * fails with a non-retryable `InvalidNotification` naming the field, before anything is sent.
 */
export async function notifyInbox(user: string, notification: NotificationInput): Promise<string> {
  const problem = inboxUserProblem(user);
  if (problem) {
    throw ApplicationFailure.create({
      type: 'InvalidNotification',
      message: `user: ${problem}`,
      nonRetryable: true,
    });
  }
  const checked = validateNotificationInput(notification, API_NOTIFICATION_DEFAULTS);
  if (!checked.ok) {
    throw ApplicationFailure.create({
      type: 'InvalidNotification',
      message: checked.error,
      nonRetryable: true,
    });
  }
  const id = checked.value.id ?? uuid4();
  await deliverNotification({ targets: [inboxWorkflowId(user)], notification: { ...checked.value, id } });
  return id;
}
