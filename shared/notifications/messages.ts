import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { MarkReadInput, NotificationInput } from './schema';
import type { NotificationChanges, NotificationHistory } from './state';

/**
 * The public notification contract. Every agent run and every inbox workflow answers these, so any
 * Temporal client (the CLI, the HTTP API, other workflows, `temporal workflow signal/query`) can use
 * them by name.
 */

/** Signal `notify`: add a notification, or update the one with the same `id` in place. */
export const notifySignal = defineSignal<[NotificationInput]>('notify');
/** Signal `markRead`: `{ ids: [...] }` or `{ all: true }`. */
export const markReadSignal = defineSignal<[MarkReadInput]>('markRead');
/** Signal `clearNotifications`: empty the list; the guid changes. */
export const clearNotificationsSignal = defineSignal<[]>('clearNotifications');

/** Query `notifications`: `{ notifications, guid, count, updates, … }`. */
export const notificationsQuery = defineQuery<NotificationHistory>('notifications');
/** Query `unreadCount`: a number. */
export const unreadCountQuery = defineQuery<number>('unreadCount');
/** Query `notificationsSince`: what changed after update number `updateNo` (pass `guid` to detect clears). */
export const notificationsSinceQuery = defineQuery<
  NotificationChanges,
  [{ updateNo: number; guid?: string }]
>('notificationsSince');

/** Workflow type of the per-user inbox. */
export const INBOX_WORKFLOW_TYPE = 'inboxWorkflow';

/** Workflow id of a user's inbox. */
export function inboxWorkflowId(user: string): string {
  return `inbox:${user}`;
}

/** The user of an inbox workflow id, or null when the id is not an inbox. */
export function inboxUser(workflowId: string): string | null {
  return workflowId.startsWith('inbox:') && workflowId.length > 'inbox:'.length
    ? workflowId.slice('inbox:'.length)
    : null;
}
