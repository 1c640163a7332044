/**
 * What the garbage collector (gc.ts) needs of a store beyond put and get: who claims what, and a
 * sweep that removes values no live claimant holds. A claim is a (workflow id, reference) pair
 * recorded when an activity of that workflow stores the value (or when a fork takes over its
 * original's conversation); a value stays while any of its claimants is open or closed within the
 * grace period. Every write and claim also stamps the value's `writtenAt`, and a sweep removes
 * only values written before its cutoff, re-checked at the moment of removal — so a value a live
 * run writes or claims while a sweep runs is never removed by it.
 */
import type { ContentRef } from '../../shared/content';
import type { ContentStore } from './store';

/** One stored value as a sweep sees it. */
export interface ContentEntry {
  ref: ContentRef;
  /** Bytes of its stored JSON. */
  bytes: number;
  /** Last written or claimed. */
  writtenAt: Date;
}

/** What a sweep removes (or, in a dry run, would remove). */
export interface SweepOptions {
  /** Only values last written or claimed before this are considered. */
  writtenBefore: Date;
  /** Claimants whose claims no longer count (their runs are gone or closed before the grace period). */
  dead: ReadonlySet<string>;
  /** Also remove values no one ever claimed that were stored before claims were recorded. */
  includeLegacy: boolean;
  /** Count what would go; remove nothing. */
  dryRun: boolean;
  /** Called with each value removed (or that would be). */
  onRemoved?: (entry: ContentEntry) => void;
  /** Called now and then while a long sweep goes on (heartbeats). */
  onProgress?: (scanned: number) => void;
}

/** Counts of a sweep. */
export interface SweepTotals {
  /** Values old enough to be considered. */
  scanned: number;
  removed: number;
  removedBytes: number;
  /** Oldest `writtenAt` among the removed. */
  oldestRemoved: Date | null;
  /** Old values kept because nobody claimed them and they predate claims (see `includeLegacy`). */
  legacyKept: number;
  legacyKeptBytes: number;
}

/** What a store holds. */
export interface StoreStats {
  values: number;
  bytes: number;
  /** Oldest `writtenAt`. */
  oldest: Date | null;
  /** Claims and distinct claimants recorded. */
  claims: number;
  claimants: number;
  /** Values never claimed that predate claim records (kept unless a collection includes them). */
  legacy: number;
  legacyBytes: number;
}

/** A store the garbage collector can sweep: the file and PostgreSQL stores. */
export interface CollectableContentStore extends ContentStore {
  /**
   * Claims stored values for a workflow and stamps them written now (a fork claims the
   * conversation it starts from). Answers the references the store does not hold.
   */
  claim(refs: readonly ContentRef[], workflowId: string): Promise<ContentRef[]>;
  /** Workflow ids that claim a value written before `writtenBefore` (the ones a sweep must judge). */
  claimants(writtenBefore: Date): Promise<string[]>;
  /** Removes (or counts) the values no live claimant holds; see {@link SweepOptions}. */
  sweep(opts: SweepOptions): Promise<SweepTotals>;
  /** Forgets the claims of dead workflows made before `claimedBefore` (a reused id claims anew). */
  dropClaims(workflowIds: readonly string[], claimedBefore: Date): Promise<number>;
  stats(): Promise<StoreStats>;
}

/** Whether a store can be swept. */
export function isCollectable(store: ContentStore): store is CollectableContentStore {
  const s = store as Partial<CollectableContentStore>;
  return typeof s.sweep === 'function' && typeof s.claim === 'function';
}

/** A sweep's totals before it starts. */
export function emptyTotals(): SweepTotals {
  return { scanned: 0, removed: 0, removedBytes: 0, oldestRemoved: null, legacyKept: 0, legacyKeptBytes: 0 };
}

/**
 * Whether a swept value goes: no claim but a dead one holds it, and, when nobody ever claimed it,
 * it was stored after claims began to be recorded (or legacy values are included). Records the
 * decision in `totals`.
 */
export function decide(
  entry: ContentEntry,
  claimants: readonly string[],
  opts: SweepOptions,
  legacyBefore: Date | null,
  totals: SweepTotals,
): boolean {
  totals.scanned += 1;
  if (claimants.some((c) => !opts.dead.has(c))) return false;
  if (claimants.length === 0 && !opts.includeLegacy && legacyBefore && entry.writtenAt < legacyBefore) {
    totals.legacyKept += 1;
    totals.legacyKeptBytes += entry.bytes;
    return false;
  }
  return true;
}

/** Counts a removed value in `totals` and tells the caller. */
export function counted(entry: ContentEntry, opts: SweepOptions, totals: SweepTotals): void {
  totals.removed += 1;
  totals.removedBytes += entry.bytes;
  if (!totals.oldestRemoved || entry.writtenAt < totals.oldestRemoved) totals.oldestRemoved = entry.writtenAt;
  opts.onRemoved?.(entry);
}
