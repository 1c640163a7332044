/**
 * References inside stored values: a conversation node names the node before it and its head, and
 * keeps long texts and search results by reference. A run that takes over content another run
 * stored (a fork) claims all of it, following these references.
 */
import type { ContentRef } from '../../shared/content';
import { isContentRef } from '../../shared/content';
import type { CollectableContentStore } from './collectable';

/** Every content reference inside a value, at any depth: a string that is exactly a reference. */
export function referencesIn(value: unknown, out = new Set<ContentRef>()): Set<ContentRef> {
  if (isContentRef(value)) out.add(value);
  else if (Array.isArray(value)) for (const v of value) referencesIn(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) referencesIn(v, out);
  return out;
}

/**
 * Claims for `workflowId` every value reachable from `refs`, so it stays while that workflow is
 * open or retained whatever becomes of the run that stored it. Stored texts are leaves: only
 * structured values (nodes, heads, records) are read for the references they hold. Answers the
 * references the store no longer holds.
 */
export async function claimReachable(
  store: CollectableContentStore,
  refs: Iterable<ContentRef>,
  workflowId: string,
): Promise<ContentRef[]> {
  const seen = new Set<ContentRef>(refs);
  const missing: ContentRef[] = [];
  for (let level = [...seen]; level.length > 0;) {
    const lost = new Set(await store.claim(level, workflowId));
    missing.push(...lost);
    const values = await Promise.all(level.filter((r) => !lost.has(r)).map((r) => store.get(r)));
    const next: ContentRef[] = [];
    for (const value of values) {
      if (!value || typeof value !== 'object') continue;
      for (const ref of referencesIn(value)) {
        if (seen.has(ref)) continue;
        seen.add(ref);
        next.push(ref);
      }
    }
    level = next;
  }
  return missing;
}
