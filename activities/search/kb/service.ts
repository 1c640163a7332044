/**
 * The knowledge base as its users call it (the search activity, the CLI, the bench): search the
 * last snapshot, with semantic recall when an embedder is configured, and keep vectors in step
 * with each new snapshot.
 */
import type { Embedder } from './embeddings';
import type { KnowledgeBaseHit } from './search';
import { searchSnapshot } from './search';
import type { SnapshotHook } from './store';
import { loadSnapshot } from './store';
import { loadVectors, nearestChunks, syncVectors } from './vectors';

/** How many semantic neighbours take part in the fusion. */
const SEMANTIC_DEPTH = 50;

/** Options of {@link searchKnowledgeBase}. */
export interface KnowledgeBaseSearchOptions {
  embedder?: Embedder | undefined;
  signal?: AbortSignal;
  /** Told why a search fell back to lexical ranking (vectors missing, provider failing). */
  onFallback?: (reason: string) => void;
}

/** The best `limit` chunks for `query`, from the last snapshot in `dir`. */
export async function searchKnowledgeBase(
  dir: string,
  query: string,
  limit: number,
  opts: KnowledgeBaseSearchOptions = {},
): Promise<KnowledgeBaseHit[]> {
  const snap = loadSnapshot(dir);
  if (!snap) return [];
  if (!opts.embedder) return searchSnapshot(snap, query, limit);
  const vectors = loadVectors(dir, snap, opts.embedder);
  if (!vectors) {
    opts.onFallback?.('the chunks have no embeddings yet (run `durable-agent kb add` on the folders)');
    return searchSnapshot(snap, query, limit);
  }
  let queryVector: Float32Array | undefined;
  try {
    [queryVector] = await opts.embedder.embed([query], 'query', opts.signal);
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    opts.onFallback?.(`the embedding provider failed: ${(err as Error).message}`);
    return searchSnapshot(snap, query, limit);
  }
  const semantic = queryVector ? nearestChunks(vectors, queryVector, SEMANTIC_DEPTH) : [];
  return searchSnapshot(snap, query, limit, semantic);
}

/** The writer's snapshot hook: embeds new chunks when an embedder is configured. */
export function vectorHook(embedder: Embedder | undefined): SnapshotHook | undefined {
  if (!embedder) return undefined;
  return async (dir, snapshot, signal) => {
    await syncVectors(dir, snapshot, embedder, signal);
  };
}
