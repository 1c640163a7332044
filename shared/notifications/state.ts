/**
 * The notification state machine that workflows (an agent run, a user's inbox) hold and change
 * from their signal/update handlers, and read from their query handlers.
 *
 * Pure and deterministic, so it is safe inside Temporal's workflow sandbox: no clock, no randomness,
 * no Node built-ins. Callers pass the time (`now`, an ISO string; in a workflow, `new Date()` is
 * replay-safe) and an id factory (`newId`; in a workflow, `uuid4` from `@temporalio/workflow`).
 *
 * Immutable: no operation changes its arguments. Each returns a new state (or the same state object
 * when nothing changed), so a handler writes `state = add(state, input, ctx).state`. States are
 * plain JSON and survive serialisation unchanged (continue-as-new input, query results).
 *
 * ## Numbering
 * - `no` is an item's position in the list: `0` is the oldest, `count - 1` the newest (as in the
 *   source design, where a new item gets `no = len(list)`). Updating an item in place keeps its
 *   `no`. When the list grows past `max`, the oldest are evicted and every remaining item is
 *   renumbered so numbers stay `0..count-1`.
 * - An item's *ordinal* is `no + evicted`: its creation number since the last clear. It never
 *   changes and is never reused, so the change log can name items across evictions.
 *
 * ## Updates (incremental sync)
 * - Every change appends the ordinal of the changed item to `updates`: a new item, an in-place
 *   update, an item becoming read. Eviction appends nothing; it is implied by `evicted`.
 * - The *update number* counts changes since the last clear: `currentUpdate(state)`, starting at 0.
 *   A client that has seen everything up to update number K calls `since(state, K, guid)` and gets
 *   exactly the current items changed after K (each once, with its current `no`, oldest first),
 *   however many evictions and renumberings happened in between. Items created and evicted after
 *   K are not returned. Answers carry `evicted`, so a client can apply a diff by position:
 *   1. drop the first `evicted - previousEvicted` items of its list (eviction removes the oldest,
 *      so the survivors' indexes are their new `no`s);
 *   2. for each returned item, replace the item at index `no`, or append it when `no` is past the
 *      end (new items come oldest first, so appends land in order).
 *   Matching by `id` instead is wrong: an evicted id that is sent again with other content is a
 *   new item at the end (sent again unchanged, it meets its tombstone and changes nothing).
 *   The list then has `count` items.
 * - Only the newest `maxUpdates` log entries are kept (`updatesBase` counts the dropped ones).
 *   A client older than that, one with a different `guid` (the list was cleared), or one with an
 *   update number the state never reached gets `reset: true` and the full list to replace its own.
 * - `clear` empties the list and the log, restarts update numbers and ordinals at 0, and is the only
 *   operation that changes `guid`.
 */
import { z } from 'zod';
import { schemaOnce } from '../schema-once';
import { SIZE_BUDGETS } from '../temporal-limits';
import { DEFAULT_MAX_NOTIFICATIONS, DEFAULT_MAX_UPDATES, NotificationSchema } from './schema';
import type { MarkReadInput, Notification, ValidNotificationInput } from './schema';
import type { NotificationSizes } from './sizes';
import { bury, fingerprint, notificationsBytes, overflowOf, tombstoneBytes } from './sizes';

/** A workflow's notifications, plus what clients need to sync them. Plain JSON; never mutated. */
export interface NotificationState {
  /** Oldest first; `notifications[i].no === i`. */
  readonly notifications: readonly Notification[];
  /** Change log: the ordinal (`no + evicted`) of the item each change touched, oldest change first. */
  readonly updates: readonly number[];
  /** Log entries dropped from the front of `updates`; update number of `updates[i]` is `updatesBase + i + 1`. */
  readonly updatesBase: number;
  /** Notifications evicted for capacity since the last clear. */
  readonly evicted: number;
  /** Identifies this list between clears; a new value tells clients to resync from scratch. */
  readonly guid: string;
  /** Capacity; beyond it the oldest notifications are evicted. */
  readonly max: number;
  /**
   * Byte capacity: the notifications as JSON (UTF-8) stay at or under it, the oldest evicted first.
   * Absent means `SIZE_BUDGETS.notificationStateBytes`, which is also its upper bound.
   */
  readonly maxBytes?: number;
  /** How many entries `updates` keeps. */
  readonly maxUpdates: number;
  /**
   * The most recently evicted notifications as `[id, fingerprint of their content]`, oldest first,
   * within `SIZE_BUDGETS.notificationTombstones` / `notificationTombstoneBytes`. A producer that sends
   * the same notification again (a retry after a timeout or a worker crash) after it was evicted
   * meets its tombstone and changes nothing, instead of creating it a second time. Other content
   * under an evicted id is a new item at the end. Absent means none.
   */
  readonly tombstones?: readonly (readonly [string, string])[];
}

/**
 * Validates a state that arrives from outside the workflow (continue-as-new input, a carried
 * snapshot), including the invariants the operations rely on. Parse before use; an invalid state
 * should fail the run with a non-retryable error.
 */
export const NotificationStateSchema = schemaOnce(
  'shared/notifications/state#NotificationStateSchema',
  () =>
    z
      .object({
        notifications: z.array(NotificationSchema),
        updates: z.array(z.number().int().nonnegative()),
        updatesBase: z.number().int().nonnegative(),
        evicted: z.number().int().nonnegative(),
        guid: z.string().min(1),
        max: z.number().int().min(1),
        maxBytes: z
          .number()
          .int()
          .min(SIZE_BUDGETS.notificationBytes)
          .max(SIZE_BUDGETS.notificationStateBytes)
          .optional(),
        maxUpdates: z.number().int().min(1).max(DEFAULT_MAX_UPDATES),
        tombstones: z
          .array(z.tuple([z.string(), z.string()]))
          .max(SIZE_BUDGETS.notificationTombstones)
          .optional(),
      })
      .superRefine((s, ctx) => {
        if (s.notifications.length > s.max) {
          ctx.addIssue({
            code: 'custom',
            message: `holds ${s.notifications.length} notifications, max is ${s.max}`,
          });
        }
        const bytes = notificationsBytes(s.notifications);
        const maxBytes = s.maxBytes ?? SIZE_BUDGETS.notificationStateBytes;
        if (bytes > maxBytes) {
          ctx.addIssue({
            code: 'custom',
            message: `holds ${bytes} bytes of notifications, maxBytes is ${maxBytes}`,
          });
        }
        if (s.updates.length > s.maxUpdates) {
          ctx.addIssue({
            code: 'custom',
            message: `holds ${s.updates.length} updates, maxUpdates is ${s.maxUpdates}`,
          });
        }
        if (s.notifications.some((n, i) => n.no !== i)) {
          ctx.addIssue({ code: 'custom', message: 'notification numbers must be 0..count-1 in order' });
        }
        if (s.tombstones && tombstoneBytes(s.tombstones) > SIZE_BUDGETS.notificationTombstoneBytes) {
          ctx.addIssue({
            code: 'custom',
            message: `holds more than ${SIZE_BUDGETS.notificationTombstoneBytes} bytes of tombstones`,
          });
        }
        if (new Set(s.notifications.map((n) => n.id)).size !== s.notifications.length) {
          ctx.addIssue({ code: 'custom', message: 'notification ids must be unique' });
        }
        const nextOrdinal = s.evicted + s.notifications.length;
        if (s.updates.some((ordinal) => ordinal >= nextOrdinal)) {
          ctx.addIssue({ code: 'custom', message: 'updates name a notification that was never created' });
        }
      }) satisfies z.ZodType<NotificationState>,
);

/** What operations need from the outside world, passed in to keep them deterministic. */
export interface NotificationContext {
  /** Current time, ISO 8601. */
  now: string;
  /** A fresh unique id (uuid v4) per call. */
  newId: () => string;
  /**
   * Remembers each stored notification's JSON size, so an add costs the new notification's bytes
   * instead of the whole list's (a workflow that takes many notifications in one task must stay
   * well inside its task's time). Same answers with or without it.
   */
  sizes?: NotificationSizes;
}

/** Options of {@link createNotificationState}. */
export interface NotificationStateOptions {
  /** Identifies the new list; pass a fresh uuid. */
  guid: string;
  /** Capacity, ≥ 1; default {@link DEFAULT_MAX_NOTIFICATIONS}. */
  max?: number;
  /**
   * Byte capacity, from `SIZE_BUDGETS.notificationBytes` (one notification always fits) to
   * `SIZE_BUDGETS.notificationStateBytes` (the default).
   */
  maxBytes?: number;
  /** Change-log length, ≥ 1; default {@link DEFAULT_MAX_UPDATES}. */
  maxUpdates?: number;
}

/**
 * An empty state. Throws `RangeError` for a capacity that is not a positive integer: validate
 * configuration at the boundary first, because inside a workflow a plain error retries the task.
 */
export function createNotificationState(options: NotificationStateOptions): NotificationState {
  const { guid, max = DEFAULT_MAX_NOTIFICATIONS, maxUpdates = DEFAULT_MAX_UPDATES, maxBytes } = options;
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`max must be a positive integer, got ${max}`);
  if (!Number.isInteger(maxUpdates) || maxUpdates < 1 || maxUpdates > DEFAULT_MAX_UPDATES) {
    throw new RangeError(`maxUpdates must be an integer from 1 to ${DEFAULT_MAX_UPDATES}, got ${maxUpdates}`);
  }
  if (
    maxBytes !== undefined &&
    (!Number.isInteger(maxBytes) ||
      maxBytes < SIZE_BUDGETS.notificationBytes ||
      maxBytes > SIZE_BUDGETS.notificationStateBytes)
  ) {
    throw new RangeError(
      `maxBytes must be an integer from ${SIZE_BUDGETS.notificationBytes} to ${SIZE_BUDGETS.notificationStateBytes}, got ${maxBytes}`,
    );
  }
  return {
    notifications: [],
    updates: [],
    updatesBase: 0,
    evicted: 0,
    guid,
    max,
    ...(maxBytes !== undefined ? { maxBytes } : {}),
    maxUpdates,
  };
}

/** The update number a client has seen once it holds this state: changes since the last clear. */
export function currentUpdate(state: NotificationState): number {
  return state.updatesBase + state.updates.length;
}

/** Appends changes to the log, dropping the oldest entries beyond `maxUpdates`. */
function logChanges(state: NotificationState, ordinals: readonly number[]): NotificationState {
  const log = [...state.updates, ...ordinals];
  const dropped = Math.max(0, log.length - state.maxUpdates);
  return { ...state, updates: log.slice(dropped), updatesBase: state.updatesBase + dropped };
}

/** Result of {@link add}. */
export interface AddResult {
  state: NotificationState;
  /** The stored notification, with its final `no`. */
  notification: Notification;
  /** False when an existing notification with the same id was updated in place. */
  created: boolean;
  /**
   * False in the one case where the change itself was evicted: an in-place update that grew the
   * oldest item past what the byte capacity holds together with the newer ones. It is then counted
   * in `evicted` like any other.
   */
  kept: boolean;
}

/**
 * Adds a validated notification.
 *
 * If `input.id` names a stored notification, that one is updated in place: type, priority, title,
 * message, detail, timestamp (`ctx.now`), display_time and group are replaced, `read` becomes false,
 * `no` and `id` stay, and `ctx.newId` is not called. Otherwise a new notification is appended with
 * `input.id` or `ctx.newId()`. Either way the change is logged in `updates`, and then, while the
 * list holds more than `max` items or more than its byte capacity, the oldest are evicted (counted
 * in `evicted`) and the rest renumbered. So every notification ever created since the last clear
 * is either in the list or counted: created = `evicted + count`.
 */
export function add(
  state: NotificationState,
  input: ValidNotificationInput,
  ctx: NotificationContext,
): AddResult {
  const fields = {
    type: input.type,
    priority: input.priority,
    title: input.title,
    message: input.message,
    detail: input.detail,
    timestamp: ctx.now,
    display_time: input.display_time,
  };

  const existing = input.id === undefined ? undefined : state.notifications.find((n) => n.id === input.id);
  const buried = existing ? undefined : state.tombstones?.filter(([id]) => id === input.id);
  if (buried?.length) {
    // The same notification again, after it was evicted: a producer's retry. Nothing to change.
    const print = fingerprint({ ...fields, group: input.group });
    if (buried.some(([, fp]) => fp === print)) {
      return {
        state,
        notification: { no: -1, id: input.id as string, ...fields, read: false, group: input.group },
        created: false,
        kept: false,
      };
    }
  }
  let notification: Notification;
  let notifications: Notification[];
  if (existing) {
    notification = { ...existing, ...fields, read: false, group: input.group };
    notifications = state.notifications.map((n) => (n.no === existing.no ? notification : n));
  } else {
    notification = {
      no: state.notifications.length,
      id: input.id ?? ctx.newId(),
      ...fields,
      read: false,
      group: input.group,
    };
    notifications = [...state.notifications, notification];
  }
  const logged = logChanges(state, [state.evicted + notification.no]);
  const overflow = overflowOf(
    notifications,
    state.max,
    state.maxBytes ?? SIZE_BUDGETS.notificationStateBytes,
    ctx.sizes,
  );
  const next: NotificationState = {
    ...logged,
    notifications:
      overflow === 0 ? notifications : notifications.slice(overflow).map((n, i) => ({ ...n, no: i })),
    evicted: state.evicted + overflow,
    ...(overflow === 0
      ? {}
      : { tombstones: bury(state.tombstones, notifications.slice(0, overflow), ctx.sizes) }),
  };
  ctx.sizes?.keepOnly(next.notifications);
  const kept = notification.no >= overflow;
  return {
    state: next,
    notification: { ...notification, no: kept ? notification.no - overflow : -1 },
    created: existing === undefined,
    kept,
  };
}

/** Result of {@link markRead}. */
export interface MarkReadResult {
  state: NotificationState;
  /** Ids that went from unread to read, in list order. */
  marked: string[];
}

/**
 * Marks notifications read: those whose id is in `input.ids` (unknown ids are ignored), or every
 * one when `input.all` is true. Only items that were unread change and are logged; when none do,
 * the same state object is returned.
 */
export function markRead(state: NotificationState, input: MarkReadInput): MarkReadResult {
  const ids = input.all === true ? undefined : new Set(input.ids ?? []);
  const marked: string[] = [];
  const ordinals: number[] = [];
  const notifications = state.notifications.map((n) => {
    if (n.read || (ids !== undefined && !ids.has(n.id))) return n;
    marked.push(n.id);
    ordinals.push(state.evicted + n.no);
    return { ...n, read: true };
  });
  if (marked.length === 0) return { state, marked };
  return { state: logChanges({ ...state, notifications }, ordinals), marked };
}

/**
 * Removes every notification and starts a new list: a new `guid` from `ctx.newId()`, an empty log,
 * update numbers and ordinals from 0. Capacity settings are kept.
 */
export function clear(state: NotificationState, ctx: Pick<NotificationContext, 'newId'>): NotificationState {
  return createNotificationState({
    guid: ctx.newId(),
    max: state.max,
    maxUpdates: state.maxUpdates,
    ...(state.maxBytes !== undefined ? { maxBytes: state.maxBytes } : {}),
  });
}
