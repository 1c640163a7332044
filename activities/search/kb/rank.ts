/**
 * Lexical ranking: BM25F over four fields, then a phrase and proximity bonus on the best candidates.
 *
 * BM25F (Robertson & Zaragoza) first adds up a term's frequencies across fields, each weighted and
 * normalised by its field's length, and only then saturates the sum. Two properties follow that a
 * plain weighted sum of per-field scores lacks:
 * - a field weight cannot drown the body: however often a word appears in a title, the term's share
 *   of the score stays below its IDF, the same ceiling a body match has;
 * - long fields are normalised (b), so a chunk that is mostly its heading does not beat a passage
 *   that discusses the words.
 * A document's title and file name count for all its chunks, but as ordinary fields of each chunk:
 * their words are frequent across the index (every chunk of the document has them), so their IDF
 * is low on its own.
 */
import { analyze, queryTerms } from './analyze';
import type { Snapshot } from './snapshot';
import { own } from './snapshot';

/** Field weights: body, heading, title, file name. Kept close so no field dominates. */
export const WEIGHTS = { body: 1, head: 1.5, title: 1.5, name: 0.75 } as const;
/** Length normalisation per field (BM25's b). Titles and names vary little; no need to normalise. */
export const B = { body: 0.75, head: 0.5, title: 0.3, name: 0.3 } as const;
/** Term-frequency saturation (BM25's k1). */
export const K1 = 1.2;
/** Candidates that get the proximity pass; the rest keep their BM25F score. */
export const RERANK_DEPTH = 100;
/** Words apart that still count as "near" for the proximity bonus. */
const NEAR = 6;
/** Largest share proximity and phrases add to a score (0.5 = up to 50 % more). */
const PROXIMITY_WEIGHT = 0.5;

/** A ranked chunk: its index in the snapshot and its score. */
export interface RankedChunk {
  chunk: number;
  score: number;
  /** The BM25F part of the score, before the proximity bonus. */
  bm25: number;
}

/** A query's analysed terms with their IDF; terms the index does not know are left out. */
export interface WeightedQuery {
  /** Every analysed term, in query order (unknown ones included, for phrase adjacency). */
  terms: string[];
  idf: Map<string, number>;
}

/** Analyses a query and weights its terms against the snapshot. */
export function weighQuery(snap: Snapshot, query: string): WeightedQuery {
  const terms = queryTerms(query);
  return { terms, idf: idfOf(terms, snap.chunks.length, (t) => own(snap.df, t)) };
}

/**
 * BM25's IDF of each term the index knows (`df` > 0), over `chunks` chunks. Both engines weigh
 * terms with it, so their scores agree.
 */
export function idfOf(
  terms: readonly string[],
  chunks: number,
  df: (term: string) => number | undefined,
): Map<string, number> {
  const n = Math.max(1, chunks);
  const idf = new Map<string, number>();
  for (const t of terms) {
    const d = df(t);
    if (d) idf.set(t, Math.log(1 + (n - d + 0.5) / (d + 0.5)));
  }
  return idf;
}

function norm(len: number, avg: number, b: number): number {
  return 1 - b + b * (len / avg);
}

/** Scores every chunk that matches a term, best first. */
export function rankChunks(snap: Snapshot, q: WeightedQuery, limit: number): RankedChunk[] {
  // Per chunk and term, the length-normalised weighted frequency summed over fields.
  const tfs = new Map<number, Map<string, number>>();
  const add = (chunk: number, term: string, value: number) => {
    let m = tfs.get(chunk);
    if (!m) tfs.set(chunk, (m = new Map<string, number>()));
    m.set(term, (m.get(term) ?? 0) + value);
  };
  const docFirstChunk = firstChunks(snap);
  const docTitleTf = new Map<string, Map<number, number>>();
  for (const term of q.idf.keys()) {
    const postings = own(snap.chunkTerms, term) ?? [];
    for (let i = 0; i < postings.length; i += 3) {
      const c = postings[i] as number;
      const chunk = snap.chunks[c]!;
      const body = (postings[i + 1] as number) / norm(chunk.bl, snap.avg.body, B.body);
      const head = (postings[i + 2] as number) / norm(chunk.hl, snap.avg.head, B.head);
      add(c, term, WEIGHTS.body * body + WEIGHTS.head * head);
    }
    const docPostings = own(snap.docTerms, term) ?? [];
    const perDoc = new Map<number, number>();
    for (let i = 0; i < docPostings.length; i += 3) {
      const d = docPostings[i] as number;
      const doc = snap.docs[d]!;
      const title = (docPostings[i + 1] as number) / norm(doc.titleLen, snap.avg.title, B.title);
      const name = (docPostings[i + 2] as number) / norm(doc.nameLen, snap.avg.name, B.name);
      perDoc.set(d, WEIGHTS.title * title + WEIGHTS.name * name);
    }
    docTitleTf.set(term, perDoc);
  }
  // Title and file-name matches join the chunks that matched in their text. A document matched by
  // title alone is represented by its first chunk (its introduction), not by all its chunks.
  for (const perDoc of docTitleTf.values()) {
    for (const d of perDoc.keys()) {
      const first = docFirstChunk[d];
      if (first !== undefined && !tfs.has(first)) tfs.set(first, new Map());
    }
  }
  const scored: RankedChunk[] = [];
  for (const [c, perTerm] of tfs) {
    const d = snap.chunks[c]!.d;
    let score = 0;
    for (const [term, idf] of q.idf) {
      const tf = (perTerm.get(term) ?? 0) + (docTitleTf.get(term)?.get(d) ?? 0);
      if (tf > 0) score += (idf * tf) / (K1 + tf);
    }
    scored.push({ chunk: c, score, bm25: score });
  }
  scored.sort(byScore);
  return rerankByProximity(
    scored,
    q,
    limit,
    (r) => {
      const c = snap.chunks[r.chunk]!;
      return { heading: c.h, text: c.t };
    },
    (a, b) => a.chunk - b.chunk,
  );
}

function byScore(a: RankedChunk, b: RankedChunk): number {
  return b.score - a.score || a.chunk - b.chunk;
}

/**
 * The proximity pass of the ranking, shared by both engines: `ranked` (best BM25F first) gets a
 * bonus for the query's words standing together on its first {@link RERANK_DEPTH} entries, which
 * are then re-sorted (ties by `order`) and cut to `limit`.
 */
export function rerankByProximity<T extends { score: number; bm25: number }>(
  ranked: readonly T[],
  q: WeightedQuery,
  limit: number,
  textOf: (r: T) => { heading: string; text: string },
  order: (a: T, b: T) => number,
): T[] {
  const head = ranked.slice(0, Math.max(limit, RERANK_DEPTH));
  for (const r of head) {
    const { heading, text } = textOf(r);
    r.score = r.bm25 * (1 + PROXIMITY_WEIGHT * proximity(heading, text, q));
  }
  head.sort((a, b) => b.score - a.score || order(a, b));
  return head.slice(0, limit);
}

function firstChunks(snap: Snapshot): number[] {
  const first: number[] = [];
  snap.chunks.forEach((c, i) => {
    if (first[c.d] === undefined) first[c.d] = i;
  });
  return first;
}

/**
 * How closely the query's words occur together in a chunk (its heading, then its text), from 0
 * to 1: the IDF share of the query that appears inside one window of {@link NEAR} words (when at
 * least two terms do), averaged with the share of consecutive query-term pairs that appear as an
 * exact phrase.
 */
export function proximity(heading: string, text: string, q: WeightedQuery): number {
  const known = q.terms.filter((t) => q.idf.has(t));
  if (known.length < 2) return 0;
  const tokens = analyze(heading ? `${heading}\n${text}` : text).filter((t) => q.idf.has(t.term));
  if (tokens.length < 2) return 0;
  const total = known.reduce((s, t) => s + (q.idf.get(t) ?? 0), 0);

  let best = 0;
  let lo = 0;
  const inWindow = new Map<string, number>();
  for (let hi = 0; hi < tokens.length; hi++) {
    const t = tokens[hi]!;
    inWindow.set(t.term, (inWindow.get(t.term) ?? 0) + 1);
    while (t.pos - tokens[lo]!.pos > NEAR) {
      const old = tokens[lo++]!.term;
      const left = (inWindow.get(old) ?? 1) - 1;
      if (left === 0) inWindow.delete(old);
      else inWindow.set(old, left);
    }
    if (inWindow.size >= 2) {
      let mass = 0;
      for (const term of inWindow.keys()) mass += q.idf.get(term) ?? 0;
      best = Math.max(best, mass / total);
    }
  }

  const positions = new Map<string, Set<number>>();
  for (const t of tokens) {
    let s = positions.get(t.term);
    if (!s) positions.set(t.term, (s = new Set()));
    s.add(t.pos);
  }
  let pairs = 0;
  let adjacent = 0;
  for (let i = 0; i + 1 < q.terms.length; i++) {
    const a = q.terms[i]!;
    const b = q.terms[i + 1]!;
    if (!q.idf.has(a) || !q.idf.has(b)) continue;
    pairs += 1;
    const pa = positions.get(a);
    const pb = positions.get(b);
    if (pa && pb && [...pa].some((p) => pb.has(p + 1) || pb.has(p))) adjacent += 1;
  }
  return pairs ? (best + adjacent / pairs) / 2 : best / 2;
}
