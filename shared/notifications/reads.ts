/**
 * Reads of the notification state, for query handlers: the whole list, pages of it within a query
 * result's budget, the changes since an update number, and the unread count. Pure, like state.ts.
 */
import { SIZE_BUDGETS, jsonBytes } from '../temporal-limits';
import type { Notification } from './schema';
import type { NotificationState } from './state';
import { currentUpdate } from './state';

/** Answer of {@link history}. */
export interface NotificationHistory {
  /** All notifications, oldest first. */
  notifications: readonly Notification[];
  guid: string;
  count: number;
  /** The change log (ordinals; see {@link NotificationState.updates}). */
  updates: readonly number[];
  /** Current update number: pass it to {@link since} to get later changes. */
  update: number;
  /** Notifications evicted since the last clear; keep it to apply the next {@link since} answer. */
  evicted: number;
}

/** Everything a client needs to show the list and to sync incrementally from here on. */
export function history(state: NotificationState): NotificationHistory {
  return {
    notifications: state.notifications,
    guid: state.guid,
    count: state.notifications.length,
    updates: state.updates,
    update: currentUpdate(state),
    evicted: state.evicted,
  };
}

/** Arguments of the paged `notifications` query; both optional. */
export interface NotificationPageInput {
  /** At most this many items (the newest ones below `before`); whole numbers ≥ 1. */
  limit?: number;
  /** Only items numbered below this (a cursor from the previous page's `before`). */
  before?: number;
}

/** Answer of {@link page}: a {@link NotificationHistory} whose `notifications` may be a part. */
export interface NotificationPage extends NotificationHistory {
  /** True when `notifications` is not the whole list (a page, or trimmed to the byte budget). */
  truncated: boolean;
  /** Pass as `before` to get the next older page; absent when there is none. */
  before?: number;
}

/** A whole number ≥ 0, or undefined for anything else. */
function wholeOrUndefined(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

/**
 * A page of the list for the `notifications` query: the newest `limit` items numbered below
 * `before` (oldest first, like the whole list), then trimmed from the old end so the answer stays
 * within `maxBytes` as JSON. Bad arguments (not whole numbers) count as absent, since a query
 * handler must not throw. `truncated` says whether items were left out; `before` is the cursor for
 * the next older page.
 */
export function page(
  state: NotificationState,
  input: NotificationPageInput = {},
  maxBytes: number = SIZE_BUDGETS.queryResultBytes,
): NotificationPage {
  const full = history(state);
  const before = Math.min(wholeOrUndefined(input?.before) ?? full.count, full.count);
  const limit = wholeOrUndefined(input?.limit) || full.count;
  let start = Math.max(0, before - limit);
  const base = { ...full, notifications: [] as Notification[] };
  let bytes = jsonBytes({ ...base, truncated: true, before: full.count });
  const sizes = state.notifications.slice(start, before).map((n) => jsonBytes(n) + 1);
  for (const size of sizes) bytes += size;
  for (let i = 0; bytes > maxBytes && start < before; i++) {
    bytes -= sizes[i] ?? 0;
    start += 1;
  }
  const notifications = state.notifications.slice(start, before);
  return {
    ...full,
    notifications,
    truncated: notifications.length < full.count,
    ...(start > 0 ? { before: start } : {}),
  };
}

/** Answer of {@link since}. */
export interface NotificationChanges {
  guid: string;
  /** Current update number: pass it to the next {@link since} call. */
  update: number;
  /** Notifications in the list now. */
  count: number;
  /** Notifications evicted since the last clear; the client drops its oldest `evicted - previousEvicted`. */
  evicted: number;
  /**
   * True when the client cannot be brought up to date by a diff (new guid, too far behind, or an
   * update number this list never reached): `notifications` is then the full list, to replace its own.
   */
  reset: boolean;
  /** Current items changed after the client's update number (or all, on reset), oldest first. */
  notifications: readonly Notification[];
}

/**
 * What changed after update number `updateNo` (see the module documentation for the semantics).
 * Pass the `guid` the client got with `updateNo` so a clear in between forces a reset; without it,
 * the caller is responsible for comparing guids.
 */
export function since(state: NotificationState, updateNo: number, guid?: string): NotificationChanges {
  const update = currentUpdate(state);
  const base = { guid: state.guid, update, count: state.notifications.length, evicted: state.evicted };
  const reset =
    (guid !== undefined && guid !== state.guid) ||
    !Number.isInteger(updateNo) ||
    updateNo < state.updatesBase ||
    updateNo > update;
  if (reset) return { ...base, reset: true, notifications: state.notifications };

  // Ordinals of evicted items map to negative numbers, which no current item has.
  const changed = new Set(state.updates.slice(updateNo - state.updatesBase).map((o) => o - state.evicted));
  const notifications = state.notifications.filter((n) => changed.has(n.no));
  return { ...base, reset: false, notifications };
}

/** Notifications not yet marked read. */
export function unreadCount(state: NotificationState): number {
  return state.notifications.reduce((count, n) => count + (n.read ? 0 : 1), 0);
}
