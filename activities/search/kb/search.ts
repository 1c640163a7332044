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
const FUSION_DEPTH = 50;

/**
 * The best `limit` chunks for `query`. With `semantic` (chunk indexes from an embedding search),
 * the lexical and semantic lists are fused by reciprocal rank fusion: a chunk scores
 * Σ 1/(60 + rank) over the lists it appears in.
 */
export function searchSnapshot(
  snap: Snapshot,
  query: string,
  limit: number,
  semantic?: SemanticRanking,
): KnowledgeBaseHit[] {
  const q = weighQuery(snap, query);
  const lexical = q.idf.size ? rankChunks(snap, q, semantic ? Math.max(limit, FUSION_DEPTH) : limit) : [];
  const lexicalRank = new Map(lexical.map((r, i) => [r.chunk, i + 1]));
  let order: { chunk: number; score: number }[];
  if (semantic) {
    const fused = new Map<number, number>();
    const addList = (list: readonly number[]) =>
      list.slice(0, FUSION_DEPTH).forEach((c, i) => fused.set(c, (fused.get(c) ?? 0) + 1 / (RRF_K + i + 1)));
    addList(lexical.map((r: RankedChunk) => r.chunk));
    addList(semantic);
    order = [...fused]
      .map(([chunk, score]) => ({ chunk, score }))
      .sort((a, b) => b.score - a.score || a.chunk - b.chunk);
  } else {
    order = lexical;
  }
  const semanticRank = new Map((semantic ?? []).slice(0, FUSION_DEPTH).map((c, i) => [c, i + 1]));
  return order.slice(0, limit).map(({ chunk, score }) => {
    const c = snap.chunks[chunk]!;
    const doc = snap.docs[c.d]!;
    const hit: KnowledgeBaseHit = {
      path: doc.path,
      filename: doc.filename,
      title: doc.title,
      heading: c.h,
      chunkNo: c.n,
      text: c.t,
      score,
      snippet: bestSnippet(c.t, q.idf),
      ranking: semantic ? 'hybrid' : 'lexical',
    };
    const lr = lexicalRank.get(chunk);
    const sr = semanticRank.get(chunk);
    if (lr !== undefined) hit.lexicalRank = lr;
    if (sr !== undefined) hit.semanticRank = sr;
    return hit;
  });
}
