/**
 * Client-side notification operations shared by the CLI and the HTTP API: validate before sending,
 * send through the same signal path as every other producer, read through the contract's queries,
 * and follow a list live. Temporal errors are turned into {@link NotificationTargetError}s that say
 * what is wrong with the target, so both doors report them the same way.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { QueryNotRegisteredError } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { deliver } from '../activities/notifications/deliver';
import {
  clearNotificationsSignal,
  inboxUser,
  markReadSignal,
  notificationsQuery,
  notificationsSinceQuery,
} from '../shared/notifications/messages';
import type { MarkReadInput, Notification, ValidNotificationInput } from '../shared/notifications/schema';
import { API_NOTIFICATION_DEFAULTS, validateNotificationInput } from '../shared/notifications/schema';
import type { NotificationHistory } from '../shared/notifications/state';
import { inboxUserProblem, runIdProblem } from '../shared/identifiers';

/** Why a target cannot be used; the HTTP API maps `invalid_target` to 400 and the rest to 404. */
export type NotificationTargetErrorCode = 'invalid_target' | 'not_found' | 'not_a_notification_target';

/** A target that does not exist, cannot take signals, or does not hold notifications. */
export class NotificationTargetError extends Error {
  override readonly name = 'NotificationTargetError';
  constructor(
    readonly code: NotificationTargetErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Longest accepted target; workflow ids are bounded by the server too, this keeps errors readable. */
const MAX_TARGET_LENGTH = 1000;

/**
 * Checks a target (an agent run's workflow id or `inbox:<user>`) and returns it trimmed, or a
 * message saying what to give instead.
 */
export function checkTarget(raw: unknown): { ok: true; target: string } | { ok: false; error: string } {
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) {
    return { ok: false, error: 'target is required: a run id or inbox:<user>' };
  }
  if (typeof raw !== 'string')
    return { ok: false, error: 'target must be a string: a run id or inbox:<user>' };
  const target = raw.trim();
  if (target.length > MAX_TARGET_LENGTH) {
    return { ok: false, error: `target must be at most ${MAX_TARGET_LENGTH} characters` };
  }
  if (target.startsWith('inbox:') && inboxUser(target) === null) {
    return { ok: false, error: 'target inbox: needs a user name, e.g. inbox:alice' };
  }
  const user = inboxUser(target);
  const problem = user === null ? runIdProblem(target) : inboxUserProblem(user);
  if (problem) return { ok: false, error: `target: ${problem}` };
  return { ok: true, target };
}

/** Like {@link checkTarget}, throwing a {@link NotificationTargetError} instead. */
export function requireTarget(raw: unknown): string {
  const checked = checkTarget(raw);
  if (!checked.ok) throw new NotificationTargetError('invalid_target', checked.error);
  return checked.target;
}

/** A validated notification with its id settled, ready to send. */
export type PreparedNotification = ValidNotificationInput & { id: string };

/**
 * Validates producer input with the contract's validator and API defaults (NORMAL priority, 3 s,
 * bad display time → 3 s), and assigns a uuid v4 when no id was given so the caller can report it.
 * On failure, `error` is the contract's exact message.
 */
export function prepareNotification(
  raw: unknown,
): { ok: true; notification: PreparedNotification } | { ok: false; error: string } {
  const valid = validateNotificationInput(raw, API_NOTIFICATION_DEFAULTS);
  if (!valid.ok) return valid;
  return { ok: true, notification: { ...valid.value, id: valid.value.id ?? randomUUID() } };
}

/**
 * Turns a Temporal client error about `target` into a {@link NotificationTargetError}; other errors
 * are returned as they are.
 */
export function explainTargetError(err: unknown, target: string): unknown {
  if (err instanceof WorkflowNotFoundError) {
    const user = inboxUser(target);
    return new NotificationTargetError(
      'not_found',
      user !== null
        ? `No inbox for user "${user}" yet: an inbox is created by its first notification`
        : `Workflow "${target}" not found or no longer running (${err.message}): check the run id with durable-agent status <id>`,
    );
  }
  if (err instanceof QueryNotRegisteredError) {
    return new NotificationTargetError(
      'not_a_notification_target',
      `Workflow "${target}" does not hold notifications (give an agent run id or inbox:<user>)`,
    );
  }
  return err;
}

/** Runs `fn`, translating Temporal errors about `target`. */
async function onTarget<T>(target: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw explainTargetError(err, target);
  }
}

/**
 * Sends a prepared notification by the `notify` signal; an `inbox:` target is created on first use
 * (signal-with-start on `taskQueue`), any other target must be a running workflow.
 */
export async function sendNotification(
  client: Client,
  taskQueue: string,
  target: string,
  notification: PreparedNotification,
): Promise<void> {
  await onTarget(target, () => deliver(client, taskQueue, { targets: [target], notification }));
}

/** The target's full list (the `notifications` query). */
export function readNotifications(client: Client, target: string): Promise<NotificationHistory> {
  return onTarget(target, () => client.workflow.getHandle(target).query(notificationsQuery));
}

/** What changed after update number `updateNo` of list `guid` (the `notificationsSince` query). */
export function readNotificationsSince(client: Client, target: string, updateNo: number, guid?: string) {
  return onTarget(target, () =>
    client.workflow
      .getHandle(target)
      .query(notificationsSinceQuery, { updateNo, ...(guid !== undefined ? { guid } : {}) }),
  );
}

/** Sends `markRead`; the input must already satisfy `MarkReadInputSchema`. Never creates an inbox. */
export function sendMarkRead(client: Client, target: string, input: MarkReadInput): Promise<void> {
  return onTarget(target, () => client.workflow.getHandle(target).signal(markReadSignal, input));
}

/** Sends `clearNotifications`. Never creates an inbox. */
export function sendClearNotifications(client: Client, target: string): Promise<void> {
  return onTarget(target, () => client.workflow.getHandle(target).signal(clearNotificationsSignal));
}

/** One step of a followed list: the first full list, a replaced list, or a diff. */
export type NotificationFeedEvent =
  | { kind: 'snapshot'; history: NotificationHistory }
  | {
      /** The list was cleared (new guid) or the follower fell too far behind: replace everything. */
      kind: 'reset';
      guid: string;
      update: number;
      count: number;
      evicted: number;
      notifications: readonly Notification[];
    }
  | {
      kind: 'changes';
      guid: string;
      update: number;
      count: number;
      evicted: number;
      /** Oldest items evicted since the previous event; drop them from the front of a mirrored list. */
      dropped: number;
      /** New items, oldest first. */
      added: Notification[];
      /** Items updated in place or marked read, with their current `no`. */
      updated: Notification[];
    };

/** Options of {@link followNotifications}. */
export interface FollowOptions {
  /** The list the follower already has (it was shown as the snapshot). */
  from: NotificationHistory;
  /** Pause between `notificationsSince` queries: Temporal queries cannot push, so this polls. */
  intervalMs: number;
  /** Stops following; the function then resolves. */
  signal: AbortSignal;
  /** Receives every reset and non-empty diff, in order; awaited before the next poll. */
  onEvent: (event: NotificationFeedEvent) => void | Promise<void>;
  /**
   * Told about query failures that are retried (no worker polling, a continue-as-new in flight, a
   * server restart). Errors about the target itself ({@link NotificationTargetError}) end following.
   */
  onRetry?: (err: unknown) => void;
}

/**
 * Follows a target's notifications until `signal` aborts, turning `notificationsSince` answers into
 * {@link NotificationFeedEvent}s. Queries address the workflow id without a run id, so they always
 * reach the current run: continue-as-new is followed without the caller noticing.
 */
export async function followNotifications(
  client: Client,
  target: string,
  opts: FollowOptions,
): Promise<void> {
  let { guid, update, evicted, count: length } = opts.from;
  while (!opts.signal.aborted) {
    try {
      await sleep(opts.intervalMs, undefined, { signal: opts.signal });
    } catch {
      return; // aborted while waiting
    }
    let answer;
    try {
      answer = await readNotificationsSince(client, target, update, guid);
    } catch (err) {
      if (err instanceof NotificationTargetError) throw err;
      opts.onRetry?.(err);
      continue;
    }
    if (opts.signal.aborted) return;
    if (answer.reset) {
      await opts.onEvent({
        kind: 'reset',
        guid: answer.guid,
        update: answer.update,
        count: answer.count,
        evicted: answer.evicted,
        notifications: answer.notifications,
      });
    } else if (answer.update !== update) {
      // Survivors of an eviction keep their order, so a mirror's first `dropped` items are the evicted ones
      // and any returned item past the mirror's end is new (see shared/notifications/state.ts).
      const dropped = answer.evicted - evicted;
      length = Math.max(0, length - dropped);
      const added: Notification[] = [];
      const updated: Notification[] = [];
      for (const n of answer.notifications) {
        if (n.no < length) updated.push(n);
        else added.push(n);
      }
      await opts.onEvent({
        kind: 'changes',
        guid: answer.guid,
        update: answer.update,
        count: answer.count,
        evicted: answer.evicted,
        dropped,
        added,
        updated,
      });
    }
    ({ guid, update, evicted, count: length } = answer);
  }
}
