import {
  AGENT_TOOL_NOTIFICATION_DEFAULTS,
  NotificationInputSchema,
  validateNotificationInput,
} from '../notifications/schema';
import { defineTool } from './define';

/** Arguments the model sees for notify_user (the API's `display_time` is `timeout` here). */
export const NotifyUserArgs = NotificationInputSchema.omit({ display_time: true });

/**
 * `notify_user`: tells the user something now, without ending the run. Arguments are checked in the
 * contract's order (type, priority, message) and failures reach the model with the exact contract
 * messages; the model-facing instructions are in prompts/notify-user.md.
 */
export const notifyUserTool = defineTool({
  name: 'notify_user',
  description:
    'Sends the user a notification now (progress, warnings, alerts) while you keep working. Not the final answer. ' +
    'priority values: 20 high urgency, 10 normal urgency; omit for high. Reuse an id to update a notification in place.',
  description_zh:
    '立即向用户发送通知（进度、警告、提醒），任务继续进行。它不是最终答案。优先级：20 高，10 普通；省略则为高。复用 id 可原地更新同一条通知。',
  category: 'notification',
  sign: 'n',
  inputs: NotifyUserArgs,
  output: 'a confirmation that the notification was sent, or the validation error',
  activity: {
    startToCloseTimeout: '30 seconds',
    maximumAttempts: 10,
    nonRetryableErrorTypes: ['NotificationsUnavailable'],
  },
  checkArgs: (args) => validateNotificationInput(args, AGENT_TOOL_NOTIFICATION_DEFAULTS),
});
