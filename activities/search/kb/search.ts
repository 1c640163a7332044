/**
 * Searching a snapshot: lexical ranking, optionally fused with semantic (embedding) ranking, and
 * snippets for the winners.
 */
import type { RankedChunk } from './rank';
import { rankChunks, weighQuery } from './rank';
import type { Snippet } from './snippet';
import { bestSnippet } from './snippet';
import type { Snapshot } from './snapshot';

/** One search hit: a chunk with its document. */
export interface KnowledgeBaseHit {
  path: string;
  filename: string;
  title: string;
  heading: string;
  chunkNo: number;
  text: string;
  score: number;
  /** The best-matching passage of `text`, with the matched words' ranges. */
  snippet: Snippet;
  /** How the hit was ranked: `lexical`, or `hybrid` when semantic ranks were fused in. */
  ranking: 'lexical' | 'hybrid';
  /** Rank in the lexical and semantic lists (1-based), when it was in them. */
  lexicalRank?: number;
  semanticRank?: number;
}

/** Semantic neighbours of a query: chunk indexes of the snapshot, most similar first. */
export type SemanticRanking = readonly number[];

/**
 * Reciprocal rank fusion's constant: 60 is the value of the original paper (Cormack et al. 2009)
 * and the usual default; it keeps one list's first place from outweighing agreement between lists.
 */
const RRF_K = 60;
/** How deep each list is read for fusion. */
export const FUSION_DEPTH = 50;

/**
 * Reciprocal rank fusion of a lexical and a semantic ranking (chunk keys, best first): a chunk
 * scores Σ 1/(60 + rank) over the lists it appears in; ties go by `order`. Also returns each
 * chunk's rank in either list. Both engines fuse with it.
 */
export function fuseRankings<K>(
  lexical: readonly K[],
  semantic: readonly K[],
  order: (a: K, b: K) => number,
): { order: { key: K; score: number }[]; lexicalRank: Map<K, number>; semanticRank: Map<K, number> } {
  const fused = new Map<K, number>();
  const addList = (list: readonly K[]) =>
    list.slice(0, FUSION_DEPTH).forEach((c, i) => fused.set(c, (fused.get(c) ?? 0) + 1 / (RRF_K + i + 1)));
  addList(lexical);
  addList(semantic);
  return {
    order: [...fused]
      .map(([key, score]) => ({ key, score }))
      .sort((a, b) => b.score - a.score || order(a.key, b.key)),
    lexicalRank: new Map(lexical.map((c, i) => [c, i + 1])),
    semanticRank: new Map(semantic.slice(0, FUSION_DEPTH).map((c, i) => [c, i + 1])),
  };
}

/**
 * The best `limit` chunks for `query`. With `semantic` (chunk indexes from an embedding search),
 * the lexical and semantic lists are fused by reciprocal rank fusion (see {@link fuseRankings}).
 */
export function searchSnapshot(
  snap: Snapshot,
  query: string,
  limit: number,
  semantic?: SemanticRanking,
): KnowledgeBaseHit[] {
  const q = weighQuery(snap, query);
  const lexical = q.idf.size ? rankChunks(snap, q, semantic ? Math.max(limit, FUSION_DEPTH) : limit) : [];
  const fusion = semantic
    ? fuseRankings(
        lexical.map((r: RankedChunk) => r.chunk),
        semantic,
        (a, b) => a - b,
      )
    : undefined;
  const order = fusion?.order.map((f) => ({ chunk: f.key, score: f.score })) ?? lexical;
  const lexicalRank = fusion?.lexicalRank ?? new Map(lexical.map((r, i) => [r.chunk, i + 1]));
  return order.slice(0, limit).map(({ chunk, score }) => {
    const c = snap.chunks[chunk]!;
    const doc = snap.docs[c.d]!;
    return withRanks(
      {
        path: doc.path,
        filename: doc.filename,
        title: doc.title,
        heading: c.h,
        chunkNo: c.n,
        text: c.t,
        score,
        snippet: bestSnippet(c.t, q.idf),
        ranking: semantic ? 'hybrid' : 'lexical',
      },
      lexicalRank.get(chunk),
      fusion?.semanticRank.get(chunk),
    );
  });
}

/** A hit with its ranks in the lexical and semantic lists, where it had one. */
export function withRanks(
  hit: KnowledgeBaseHit,
  lexicalRank: number | undefined,
  semanticRank: number | undefined,
): KnowledgeBaseHit {
  if (lexicalRank !== undefined) hit.lexicalRank = lexicalRank;
  if (semanticRank !== undefined) hit.semanticRank = semanticRank;
  return hit;
}
