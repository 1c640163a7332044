/**
 * The content store as programs outside the worker see it: collect its garbage now (what
 * `durable-agent content gc` runs, the same collector as the scheduled one), read its size, set
 * up the GC schedule, and claim a fork's conversation for the new run.
 */
import type { Client } from '@temporalio/client';
import type { ContentStoreConfig } from '../activities/content/config';
import { contentStoreFor } from '../activities/content/config';
import type { ContentEntry, StoreStats } from '../activities/content/collectable';
import { collectContent } from '../activities/content/gc';
import { temporalLiveness, temporalServiceId } from '../activities/content/liveness';
import { claimReachable, referencesIn } from '../activities/content/references';
import type { ContentRef } from '../shared/content';
import type { ContentGcInput, ContentGcReport } from '../shared/content-gc';
import { claimantOf } from '../shared/content-gc';

export { closeContentStores } from '../activities/content/config';
export type { ContentEntry, StoreStats } from '../activities/content/collectable';
export type { ContentGcScheduleOutcome } from '../workers/content-gc-schedule';
export { deleteContentGcSchedule, ensureContentGcSchedule } from '../workers/content-gc-schedule';

/**
 * Collects the configured store's garbage now, from this process, judging runs in the client's
 * namespace (and any other namespace a claim names). `onRemoved` hears of each value removed (or,
 * dry, that would be).
 */
export function collectContentNow(
  client: Client,
  store: ContentStoreConfig,
  input: ContentGcInput,
  onRemoved?: (entry: ContentEntry) => void,
): Promise<ContentGcReport> {
  return collectContent(
    {
      store: contentStoreFor(store),
      liveness: temporalLiveness(client.workflowService),
      namespace: client.options.namespace,
      ...(onRemoved ? { onRemoved } : {}),
    },
    input,
  );
}

/** What the configured store holds. */
export function contentStoreStats(store: ContentStoreConfig): Promise<StoreStats> {
  return contentStoreFor(store).stats();
}

/**
 * Claims for a new run everything a value it starts from references (a fork's carried state names
 * its original's conversation and tool results), so the content stays while the new run is open
 * or retained, whatever becomes of the original. Answers the references the store no longer holds.
 */
export async function claimContentFor(
  client: Client,
  store: ContentStoreConfig,
  startsFrom: unknown,
  workflowId: string,
): Promise<ContentRef[]> {
  const claimant = claimantOf(
    await temporalServiceId(client.workflowService),
    client.options.namespace,
    workflowId,
  );
  return claimReachable(contentStoreFor(store), referencesIn(startsFrom), claimant);
}
