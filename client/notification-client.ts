/**
 * Client-side notification operations shared by the CLI and the HTTP API: validate before sending,
 * send through the same update path as every other producer, read through the contract's queries,
 * and follow a list live. Temporal errors are turned into {@link NotificationTargetError}s that say
 * what is wrong (no such target, too large, busy, no worker, server unreachable), so both doors
 * report them the same way.
 */
import { TEMPORAL_LIMITS } from '../shared/temporal-limits';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { QueryNotRegisteredError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { deliver } from './deliver';
import type { TemporalFailure } from './temporal-errors';
import { RunNotFoundError, classifyTemporalError, isRunNotFound } from './temporal-errors';
import {
  clearNotificationsUpdate,
  inboxUser,
  markReadUpdate,
  notificationsQuery,
  notificationsSinceQuery,
} from '../shared/notifications/messages';
import type { ClearResult, MarkReadResult, NotifyResult } from '../shared/notifications/messages';
import type { MarkReadInput, Notification, ValidNotificationInput } from '../shared/notifications/schema';
import { API_NOTIFICATION_DEFAULTS, validateNotificationInput } from '../shared/notifications/schema';
import type {
  NotificationHistory,
  NotificationPage,
  NotificationPageInput,
} from '../shared/notifications/reads';
import { inboxUserProblem, runIdProblem } from '../shared/identifiers';

/**
 * What went wrong with a target, a closed list the doors map to exit messages and HTTP statuses:
 * - `invalid_target` (400): not a run id or `inbox:<user>`;
 * - `not_found` (404): no such run or inbox; `not_a_notification_target` (404): a workflow without
 *   notifications;
 * - `invalid_input` (400): the workflow refused the input (its validator's message);
 * - `busy` (429): the workflow refuses new work until it has continued as new; retry shortly;
 * - `too_large` (502): an answer over Temporal's message size; ask for a page;
 * - `no_worker` (503): no worker answered in time (none polls the target's task queue, or all are down);
 * - `unreachable` (503): the Temporal server cannot be reached.
 */
export type NotificationTargetErrorCode =
  | 'invalid_target'
  | 'not_found'
  | 'not_a_notification_target'
  | 'invalid_input'
  | 'busy'
  | 'too_large'
  | 'no_worker'
  | 'unreachable';

/** A target that cannot be used now, with what to do about it. */
export class NotificationTargetError extends Error {
  override readonly name = 'NotificationTargetError';
  constructor(
    readonly code: NotificationTargetErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * How long a door waits for a workflow to answer an update or a query before it says no worker is
 * answering (the server's own query timeout is 30 s, and an update waits for a worker forever).
 */
export const ANSWER_TIMEOUT_MS = 10_000;

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
  // Before any pattern runs over it: the server's own bound on ids.
  if (target.length > TEMPORAL_LIMITS.idBytes) {
    return { ok: false, error: `target must be at most ${TEMPORAL_LIMITS.idBytes} characters` };
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

/** What a classified Temporal failure means for `target`, as a door says it. */
function failureAbout(failure: TemporalFailure, target: string): NotificationTargetError {
  switch (failure.kind) {
    case 'timed_out':
      return new NotificationTargetError(
        'no_worker',
        `No worker answered for "${target}" in time: start one (durable-agent worker) on its task queue, then retry`,
      );
    case 'no_poller':
      return new NotificationTargetError(
        'no_worker',
        `No worker answered for "${target}": none has polled its task queue recently (${failure.details}); start one (durable-agent worker) on it, then retry`,
      );
    case 'task_failing':
      // The server takes no query or update while the workflow's current task is being retried (its
      // worker died holding it, or failed it); it passes once a worker completes the task.
      return new NotificationTargetError(
        'no_worker',
        `"${target}" takes no updates or queries until a worker completes its current workflow task (the last attempt was lost or failed): retry shortly, and if this lasts, check its workers`,
      );
    case 'busy':
      // The server's own per-workflow limits (updates in flight, buffered queries, rate limits): a
      // reason to send again shortly.
      return new NotificationTargetError(
        'busy',
        `${target}: Temporal takes no more of this at once (${failure.details}); retry shortly`,
      );
    case 'too_large':
      return new NotificationTargetError(
        'too_large',
        `The answer for "${target}" is too large for Temporal to carry (${failure.details}): ask for a page (limit/before)`,
      );
    case 'unreachable':
      return new NotificationTargetError(
        'unreachable',
        `Temporal is unreachable (${failure.details}); try again shortly`,
      );
  }
}

/**
 * Turns a Temporal client error about `target` into a {@link NotificationTargetError}; other errors
 * are returned as they are. Transport and server failures are read by {@link classifyTemporalError},
 * as every door reads them.
 */
export function explainTargetError(err: unknown, target: string): unknown {
  if (err instanceof NotificationTargetError) return err;
  if (err instanceof WorkflowUpdateFailedError) {
    const cause = err.cause;
    if (cause instanceof ApplicationFailure && cause.type === 'Busy') {
      return new NotificationTargetError('busy', `${target}: ${cause.message}`);
    }
    if (cause instanceof ApplicationFailure && /^Invalid/.test(cause.type ?? '')) {
      return new NotificationTargetError('invalid_input', cause.message);
    }
    // Only the SDK's own words for a workflow without the handler: other update failures (a server
    // restarting, a registry closing) say "not" too and are worth a retry, not a verdict.
    if (/no registered handler for update|unknown update/i.test(cause?.message ?? '')) {
      return new NotificationTargetError(
        'not_a_notification_target',
        `Workflow "${target}" does not take notifications (give an agent run id or inbox:<user>)`,
      );
    }
  }
  const failure = classifyTemporalError(err);
  if (failure) return failureAbout(failure, target);
  if (err instanceof WorkflowNotFoundError) {
    const user = inboxUser(target);
    return new NotificationTargetError(
      'not_found',
      user !== null
        ? `No inbox for user "${user}" yet: an inbox is created by its first notification`
        : `${new RunNotFoundError(target).message}: check the run id`,
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

/** True when the server answers a cheap call within two seconds. */
async function serverAnswers(client: Client): Promise<boolean> {
  try {
    await client.withDeadline(Date.now() + 2000, () => client.workflowService.getSystemInfo({}));
    return true;
  } catch {
    return false;
  }
}

/** Runs `fn` with a deadline, translating Temporal errors about `target`. */
async function onTarget<T>(client: Client, target: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await client.withDeadline(Date.now() + ANSWER_TIMEOUT_MS, fn);
  } catch (err) {
    // A deadline passing (ours or the server's) says only that no answer came: from no worker, or
    // from no server.
    if (classifyTemporalError(err)?.kind === 'timed_out' && !(await serverAnswers(client))) {
      throw new NotificationTargetError('unreachable', 'Temporal is unreachable; try again shortly');
    }
    if (err instanceof WorkflowNotFoundError && inboxUser(target) === null) {
      // An update to a closed run fails as "not found": say which of the two it is.
      const status = await client.workflow
        .getHandle(target)
        .describe()
        .then((d): string | null => d.status.name)
        .catch((e: unknown) => (isRunNotFound(e) ? null : undefined));
      if (status && status !== 'RUNNING') {
        throw new NotificationTargetError(
          'not_found',
          `Run "${target}" has already ended (${status}); it takes no notifications any more (send to inbox:<user>, or to a running run)`,
        );
      }
      if (status === undefined)
        throw new NotificationTargetError('not_found', new RunNotFoundError(target).message);
    }
    throw explainTargetError(err, target);
  }
}

/**
 * Sends a prepared notification by the `notify` update and returns where it was stored; an
 * `inbox:` target is created on first use (update-with-start on `taskQueue`), any other target
 * must be a running workflow. The id is settled before sending, so resending after a timeout
 * updates the same notification instead of adding a second.
 */
export async function sendNotification(
  client: Client,
  taskQueue: string,
  target: string,
  notification: PreparedNotification,
): Promise<NotifyResult> {
  const [result] = await onTarget(client, target, () =>
    deliver(client, taskQueue, { targets: [target], notification }),
  );
  return result as NotifyResult;
}

/**
 * The target's list (the `notifications` query): the whole list, or a page with `limit`/`before`;
 * `truncated` says when items were left out.
 */
export function readNotifications(
  client: Client,
  target: string,
  pageInput?: NotificationPageInput,
): Promise<NotificationPage> {
  return onTarget(client, target, () =>
    client.workflow.getHandle(target).query(notificationsQuery, ...(pageInput ? [pageInput] : [])),
  );
}

/** What changed after update number `updateNo` of list `guid` (the `notificationsSince` query). */
export function readNotificationsSince(client: Client, target: string, updateNo: number, guid?: string) {
  return onTarget(client, target, () =>
    client.workflow
      .getHandle(target)
      .query(notificationsSinceQuery, { updateNo, ...(guid !== undefined ? { guid } : {}) }),
  );
}

/** Sends the `markRead` update; the input must already satisfy `MarkReadInputSchema`. Never creates an inbox. */
export function sendMarkRead(client: Client, target: string, input: MarkReadInput): Promise<MarkReadResult> {
  return onTarget(client, target, () =>
    client.workflow.getHandle(target).executeUpdate(markReadUpdate, { args: [input] }),
  );
}

/** Sends the `clearNotifications` update. Never creates an inbox. */
export function sendClearNotifications(client: Client, target: string): Promise<ClearResult> {
  return onTarget(client, target, () =>
    client.workflow.getHandle(target).executeUpdate(clearNotificationsUpdate),
  );
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
  /** Where the follower's list is (the snapshot it showed, or the answer it resumed from). */
  from: Pick<NotificationHistory, 'guid' | 'update' | 'evicted' | 'count'>;
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
      const retryable = ['busy', 'no_worker', 'unreachable'];
      if (err instanceof NotificationTargetError && !retryable.includes(err.code)) throw err;
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
