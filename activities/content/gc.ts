/**
 * The content store's garbage collector: removes the values no open run and no retained history
 * references. Values are claimed by the workflows that store them (collectable.ts), so a
 * collection needs no history: it asks Temporal about each workflow that claims an old value,
 * and a value goes when it was last written before the cutoff (now less the grace period, never
 * shorter than the namespace's retention) and every workflow claiming it is gone or closed before
 * the cutoff. A run waiting for approval for weeks is open, so its values stay; a closed run's
 * values stay as long as its history is retained, so it can be replayed, exported or forked.
 */
import { formatZodIssues } from '../../shared/zod-issues';
import { ApplicationFailure } from '@temporalio/common';
import type { ContentRef } from '../../shared/content';
import type { ContentGcInput, ContentGcReport } from '../../shared/content-gc';
import { parseClaimant } from '../../shared/content-gc';
import { ContentGcInputSchema } from '../../shared/content-gc-schema';
import type { CollectableContentStore, ContentEntry } from './collectable';

/** Where a workflow is: open, closed (when), or unknown to the server (never ran, or deleted). */
export type RunStatus = { state: 'open' } | { state: 'closed'; closedAt: Date } | { state: 'gone' };

/** What the collector asks Temporal (liveness.ts answers from the workflow service). */
export interface RunLiveness {
  /** The service's id as claims name it (liveness.ts `temporalServiceId`). */
  serviceId(): Promise<string>;
  /** How long a namespace keeps closed runs; null when the server does not know the namespace. */
  retentionMs(namespace: string): Promise<number | null>;
  status(namespace: string, workflowId: string): Promise<RunStatus>;
}

/** What a collection runs with. */
export interface CollectorDeps {
  store: CollectableContentStore;
  liveness: RunLiveness;
  /** The namespace the collector runs in: its retention counts even when no claim names it. */
  namespace: string;
  now?: () => Date;
  /** Called as the collection goes on (an activity heartbeats). */
  progress?: (what: string) => void;
  /** Called with each value removed (or, dry, that would be). */
  onRemoved?: (entry: ContentEntry) => void;
}

/** Workflows described at once. */
const DESCRIBE_CONCURRENCY = 8;
/** References a report lists. */
const SAMPLE = 10;

/** Runs `fn` over `items`, `limit` at a time. */
async function eachBounded<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++] as T);
  });
  await Promise.all(lanes);
}

/** Collects (or, with `dryRun`, counts) the store's garbage now. */
export async function collectContent(
  deps: CollectorDeps,
  input: ContentGcInput = {},
): Promise<ContentGcReport> {
  const { store, liveness } = deps;
  const dryRun = input.dryRun === true;
  const now = deps.now?.() ?? new Date();
  const asked = input.graceMs;
  const checked = ContentGcInputSchema.safeParse(input);
  if (!checked.success)
    throw ApplicationFailure.nonRetryable(
      `Invalid content GC input: ${formatZodIssues(checked.error)}`,
      'InvalidGcInput',
    );

  // The cutoff is set by the longest retention among the namespaces of the claims it judges: a
  // first look with this namespace's, then again if older claims name a namespace that keeps longer.
  const retention = new Map<string, number | null>();
  const retentionOf = async (ns: string) => {
    if (!retention.has(ns)) retention.set(ns, await liveness.retentionMs(ns));
    return retention.get(ns) ?? null;
  };
  const service = await liveness.serviceId();
  const ours = (c: string) => parseClaimant(c).service === service;
  let retentionMs = (await retentionOf(deps.namespace)) ?? -1;
  if (retentionMs < 0)
    throw ApplicationFailure.nonRetryable(
      `Namespace ${deps.namespace} is not on this Temporal server`,
      'NoNamespace',
    );
  const cutoffFor = (r: number) => new Date(now.getTime() - Math.max(asked ?? 0, r));
  let claimants = await store.claimants(cutoffFor(retentionMs));
  let longest = retentionMs;
  for (const c of claimants)
    longest = Math.max(longest, (await retentionOf(parseClaimant(c).namespace)) ?? 0);
  if (longest > retentionMs) {
    retentionMs = longest;
    claimants = await store.claimants(cutoffFor(retentionMs));
  }
  const graceMs = Math.max(asked ?? 0, retentionMs);
  const cutoff = cutoffFor(retentionMs);
  deps.progress?.(`retention ${retentionMs} ms, grace ${graceMs} ms`);

  const dead = new Set<string>();
  let unjudged = 0;
  let judged = 0;
  await eachBounded(claimants, DESCRIBE_CONCURRENCY, async (claimant) => {
    if (++judged % 200 === 0) deps.progress?.(`${judged} of ${claimants.length} claimants judged`);
    const { namespace, workflowId } = parseClaimant(claimant);
    // Another service's runs are not ours to judge; nor are those of a namespace this one lacks.
    if (!ours(claimant) || retention.get(namespace) === null) {
      unjudged += 1;
      return;
    }
    const s = await liveness.status(namespace, workflowId);
    if (s.state === 'gone' || (s.state === 'closed' && s.closedAt < cutoff)) dead.add(claimant);
  });
  deps.progress?.(`${dead.size} of ${claimants.length} claimants gone`);

  const sample: ContentRef[] = [];
  const totals = await store.sweep({
    writtenBefore: cutoff,
    dead,
    includeLegacy: input.includeLegacy === true,
    dryRun,
    onRemoved: (entry) => {
      if (sample.length < SAMPLE) sample.push(entry.ref);
      deps.onRemoved?.(entry);
    },
    onProgress: (n) => deps.progress?.(`${n} values scanned`),
  });
  if (!dryRun) await store.dropClaims([...dead], now);
  const after = await store.stats();
  return {
    dryRun,
    retentionMs,
    graceMs,
    ...(asked !== undefined && asked < retentionMs
      ? {
          graceNote: `the grace asked for (${asked} ms) is shorter than the retention; the retention is used`,
        }
      : {}),
    cutoff: cutoff.toISOString(),
    claimants: claimants.length,
    deadClaimants: dead.size,
    unjudged,
    scanned: totals.scanned,
    removed: totals.removed,
    removedBytes: totals.removedBytes,
    oldestRemoved: totals.oldestRemoved?.toISOString() ?? null,
    legacyKept: totals.legacyKept,
    legacyKeptBytes: totals.legacyKeptBytes,
    sample,
    storeValues: after.values,
    storeBytes: after.bytes,
  };
}
