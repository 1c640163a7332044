import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { NOTIFY_USER_SUCCESS } from '../../prompts/notify-user';
import { inboxWorkflowId } from '../../shared/notifications/messages';
import {
  AGENT_TOOL_NOTIFICATION_DEFAULTS,
  validateNotificationInput,
} from '../../shared/notifications/schema';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';
import type { DeliverNotificationInput, NotificationDelivery } from '../../shared/notifications/delivery';

/**
 * A uuid v4-shaped id derived from the run and the tool call, so a retried activity updates the
 * notification it may already have delivered instead of adding a second one.
 */
export function notificationIdFor(workflowId: string, toolCallId: string): string {
  const h = createHash('sha256').update(`${workflowId}\u0000${toolCallId}`).digest('hex');
  const variant = ((parseInt(h[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The failure when a worker was given no delivery (no Temporal client) for notifications. */
function notificationsUnavailable(): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'NotificationsUnavailable',
    message: 'This worker was created without a Temporal client, so it cannot deliver notifications',
    nonRetryable: true,
  });
}

/**
 * Creates the notification activities: the `notify_user` tool and `deliverNotification`. Both hand
 * the notification to `deps.deliver`, the route every producer's notifications take.
 */
export function createNotificationActivities(deps: { deliver?: NotificationDelivery }) {
  return {
    /**
     * The notify_user tool: validates (type → priority → message, exact messages back to the model),
     * then signals the run itself and, when configured, the user's inbox.
     */
    async notify_user(input: ToolActivityInput<unknown>): Promise<ToolResult> {
      const valid = validateNotificationInput(input.args, AGENT_TOOL_NOTIFICATION_DEFAULTS);
      if (!valid.ok) return { content: valid.error, isError: true };
      if (!deps.deliver) throw notificationsUnavailable();
      const workflowId = Context.current().info.workflowExecution?.workflowId;
      if (!workflowId) throw notificationsUnavailable();
      const v = valid.value;
      const notification = {
        id: v.id ?? notificationIdFor(workflowId, input.toolCallId),
        type: v.type,
        priority: v.priority,
        message: v.message,
        title: v.title,
        detail: v.detail,
        display_time: v.display_time,
        group: v.group,
      };
      const targets = [
        workflowId,
        ...(input.context?.notifyUser ? [inboxWorkflowId(input.context.notifyUser)] : []),
      ];
      await deps.deliver({ targets, notification }, { signal: Context.current().cancellationSignal });
      return { content: NOTIFY_USER_SUCCESS, data: { id: notification.id, targets } };
    },

    /** Delivers a notification the workflow raised itself (e.g. an approval timeout): to the run and its inbox. */
    async deliverNotification(input: DeliverNotificationInput): Promise<void> {
      if (!deps.deliver) throw notificationsUnavailable();
      await deps.deliver(input, { signal: Context.current().cancellationSignal });
    },
  };
}
