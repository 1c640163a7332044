import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { MarkReadInput, NotificationInput } from './schema';
import type { NotificationChanges, NotificationPage, NotificationPageInput } from './reads';

/**
 * The public notification contract. Every agent run and every inbox workflow answers these, so any
 * Temporal client (the CLI, the HTTP API, other workflows, `temporal workflow signal/update/query`)
 * can use them by name.
 *
 * Changes come as **updates** (validated before they enter history, with an answer) or, for
 * compatibility, as **signals** of the same names (no answer; bad payloads are dropped and logged).
 */

/** Signal `notify`: add a notification, or update the one with the same `id` in place. */
export const notifySignal = defineSignal<[NotificationInput]>('notify');
/** Signal `markRead`: `{ ids: [...] }` or `{ all: true }`. */
export const markReadSignal = defineSignal<[MarkReadInput]>('markRead');
/** Signal `clearNotifications`: empty the list; the guid changes. */
export const clearNotificationsSignal = defineSignal<[]>('clearNotifications');

/** Answer of the `notify` update: where the notification was stored. */
export interface NotifyResult {
  /** The notification's id (the given one, or a new uuid). */
  id: string;
  /** Its position (`no`) right after the change; -1 when the change itself was evicted at once. */
  no: number;
  /** False when an existing notification with this id was updated in place. */
  created: boolean;
  /** Update number of this change (pass it to `notificationsSince` to follow from here). */
  update: number;
  guid: string;
  /** Notifications in the list now. */
  count: number;
  /** Notifications evicted since the last clear (this change may have evicted some). */
  evicted: number;
}

/** Answer of the `markRead` update. */
export interface MarkReadResult {
  /** Ids that went from unread to read. */
  marked: string[];
  /** Ids asked for that the list does not hold (never there, evicted or cleared). */
  unknown?: string[];
  unread: number;
  update: number;
  guid: string;
}

/** Answer of the `clearNotifications` update. */
export interface ClearResult {
  /** The new list's guid. */
  guid: string;
  /** Notifications removed. */
  removed: number;
}

/**
 * Update `notify`: validated before it is accepted (a bad or over-budget notification is refused
 * with the contract's message and never enters history); answers with {@link NotifyResult}.
 */
export const notifyUpdate = defineUpdate<NotifyResult, [NotificationInput]>('notify');
/** Update `markRead`: `{ ids: [...] }` or `{ all: true }`; answers with {@link MarkReadResult}. */
export const markReadUpdate = defineUpdate<MarkReadResult, [MarkReadInput]>('markRead');
/** Update `clearNotifications`: empty the list; answers with {@link ClearResult}. */
export const clearNotificationsUpdate = defineUpdate<ClearResult, []>('clearNotifications');

/**
 * Query `notifications`: `{ notifications, guid, count, updates, update, evicted, truncated, … }`.
 * Without arguments, the whole list (the byte capacity keeps it under the query budget); with
 * `{ limit, before }`, a page of the newest `limit` items numbered below `before`.
 */
export const notificationsQuery = defineQuery<NotificationPage, [NotificationPageInput?]>('notifications');
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
