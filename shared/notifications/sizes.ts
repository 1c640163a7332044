/**
 * What the notification state's budgets count: the JSON bytes of stored notifications (remembered
 * per list, so an add costs its own bytes), which of the oldest must go to fit, and the tombstones
 * of evicted ones (an id and a fingerprint of its content, so a resend of an evicted notification
 * changes nothing). Pure and deterministic, like the state machine that uses it (state.ts).
 */
import { SIZE_BUDGETS, jsonBytes } from '../temporal-limits';
import type { Notification } from './schema';

/**
 * JSON sizes of stored notifications, by id. Renumbering changes only `no`, so a remembered size is
 * adjusted by the width of the number; any other change of the item (an in-place update, a mark
 * read) makes it measured again. Create one per notification list (never module-level: workflow
 * code runs in a reused context).
 */
export class NotificationSizes {
  private readonly known = new Map<string, { item: Notification; bytesWithoutNo: number }>();

  /** The JSON size (UTF-8 bytes) of `n`, exactly as {@link jsonBytes} counts it. */
  bytesOf(n: Notification): number {
    const hit = this.known.get(n.id);
    if (hit && sameButNo(hit.item, n)) return hit.bytesWithoutNo + String(n.no).length;
    const bytes = jsonBytes(n);
    this.known.set(n.id, { item: n, bytesWithoutNo: bytes - String(n.no).length });
    return bytes;
  }

  /** Forgets items no longer in `notifications`, so the cache stays the size of the list. */
  keepOnly(notifications: readonly Notification[]): void {
    if (this.known.size <= notifications.length * 2 + 16) return;
    const ids = new Set(notifications.map((n) => n.id));
    for (const id of [...this.known.keys()]) if (!ids.has(id)) this.known.delete(id);
  }

  /** The last tombstone list {@link bury} made, and its JSON bytes. */
  private buried?: { list: readonly Tombstone[]; bytes: number };

  /**
   * JSON bytes of a tombstone list, as {@link tombstoneBytes} counts them; remembered for the list
   * the last eviction made, so an eviction costs its own tombstones instead of the whole list's.
   */
  tombstoneBytesOf(list: readonly Tombstone[]): number {
    return this.buried?.list === list ? this.buried.bytes : tombstoneBytes(list);
  }

  rememberTombstones(list: readonly Tombstone[], bytes: number): void {
    this.buried = { list, bytes };
  }
}

/** True when `a` and `b` differ at most in `no` (fields compared by value; usually the same strings). */
function sameButNo(a: Notification, b: Notification): boolean {
  return (
    a.id === b.id &&
    a.type === b.type &&
    a.priority === b.priority &&
    a.title === b.title &&
    a.message === b.message &&
    a.detail === b.detail &&
    a.timestamp === b.timestamp &&
    a.display_time === b.display_time &&
    a.read === b.read &&
    a.group === b.group &&
    Object.keys(a).length === Object.keys(b).length
  );
}

/** An evicted notification's `[id, fingerprint of its content]`. */
export type Tombstone = readonly [string, string];

/** The content a tombstone compares: every field a producer sends (not `no`, `timestamp`, `read`). */
type TombstoneFields = Pick<
  Notification,
  'type' | 'priority' | 'title' | 'message' | 'detail' | 'display_time' | 'group'
>;

/** Characters of a field a fingerprint reads whole; of a longer one it reads this many, spread out. */
const FINGERPRINT_CHARS = 512;

/**
 * A short fingerprint (FNV-1a, 32 bits, hex) of a notification's content. Deterministic, and cheap
 * whatever the size: each field's length and, of a field over {@link FINGERPRINT_CHARS} characters,
 * its first and last 128 characters and 256 spread over the rest (a retry sends the same strings;
 * what it tells apart is another version of a notification, which differs in length or text).
 */
export function fingerprint(n: TombstoneFields): string {
  let h = 0x811c9dc5;
  const mix = (c: number) => {
    h = Math.imul(h ^ c, 0x01000193);
  };
  for (const field of [
    n.type,
    String(n.priority),
    n.title,
    n.message,
    n.detail,
    String(n.display_time),
    n.group,
  ]) {
    const len = field.length;
    mix(len & 0xffff);
    mix(len >>> 16);
    if (len <= FINGERPRINT_CHARS) {
      for (let i = 0; i < len; i++) mix(field.charCodeAt(i));
    } else {
      for (let i = 0; i < 128; i++) mix(field.charCodeAt(i));
      for (let i = len - 128; i < len; i++) mix(field.charCodeAt(i));
      const stride = (len - 256) / 256;
      for (let k = 0; k < 256; k++) mix(field.charCodeAt(128 + Math.floor(k * stride)));
    }
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

/** JSON bytes of one tombstone `["id","fp"],`, counted without encoding. */
function tombstoneEntryBytes([id, fp]: readonly [string, string]): number {
  let idBytes = 0;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    idBytes += c < 0x20 || c === 0x22 || c === 0x5c ? 6 : c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
  }
  return idBytes + fp.length + 8;
}

/** JSON bytes of a list of tombstones (an upper bound for ids with surrogate pairs). */
export function tombstoneBytes(tombstones: readonly Tombstone[]): number {
  let bytes = 2;
  for (const t of tombstones) bytes += tombstoneEntryBytes(t);
  return bytes;
}

/**
 * Tombstones after `evicted` left the list: the newest within the count and byte budgets. With
 * `sizes`, the bytes of the list it made last are not counted again.
 */
export function bury(
  tombstones: readonly Tombstone[] | undefined,
  evicted: readonly Notification[],
  sizes?: NotificationSizes,
): Tombstone[] {
  const previous = tombstones ?? [];
  const added = evicted.map((n) => [n.id, fingerprint(n)] as const);
  const all = [...previous, ...added];
  let bytes = sizes ? sizes.tombstoneBytesOf(previous) : tombstoneBytes(previous);
  for (const t of added) bytes += tombstoneEntryBytes(t);
  let from = 0;
  const overCount = all.length - SIZE_BUDGETS.notificationTombstones;
  while (from < overCount || (bytes > SIZE_BUDGETS.notificationTombstoneBytes && from < all.length)) {
    bytes -= tombstoneEntryBytes(all[from]!);
    from += 1;
  }
  const kept = all.slice(from);
  sizes?.rememberTombstones(kept, bytes);
  return kept;
}

/** Bytes of a list of notifications as JSON (UTF-8): what the byte capacity limits. */
export function notificationsBytes(notifications: readonly Notification[]): number {
  return jsonBytes(notifications);
}

/**
 * At least the JSON size of `n`: a UTF-16 unit is at most 6 bytes of JSON (a control character
 * escaped as `\u00XX`; otherwise at most 3 bytes of UTF-8), plus the keys, numbers and punctuation.
 */
function upperBoundBytes(n: Notification): number {
  const text =
    n.id.length + n.type.length + n.title.length + n.message.length + n.detail.length + n.timestamp.length;
  return 6 * (text + n.group.length) + 256;
}

/**
 * How many of the oldest notifications must go so that at most `max` remain and the rest fit in
 * `maxBytes` as JSON. Eviction is always oldest first, never of a newer item before an older one.
 */
export function overflowOf(
  notifications: readonly Notification[],
  max: number,
  maxBytes: number,
  sizes?: NotificationSizes,
): number {
  let overflow = Math.max(0, notifications.length - max);
  // Exact sizes cost a JSON encoding of the whole list; a cheap upper bound settles the usual case.
  let bound = 2;
  for (let i = overflow; i < notifications.length; i++) bound += upperBoundBytes(notifications[i]!) + 1;
  if (bound <= maxBytes) return overflow;
  // JSON of an array: brackets, plus a comma between items.
  let bytes = 2 + Math.max(0, notifications.length - 1);
  const bytesOf = sizes ? (n: Notification) => sizes.bytesOf(n) : (n: Notification) => jsonBytes(n);
  const each = notifications.map(bytesOf);
  for (const size of each) bytes += size;
  for (let i = 0; i < overflow; i++) bytes -= (each[i] ?? 0) + 1;
  while (bytes > maxBytes && overflow < notifications.length) {
    bytes -= (each[overflow] ?? 0) + 1;
    overflow += 1;
  }
  return overflow;
}
