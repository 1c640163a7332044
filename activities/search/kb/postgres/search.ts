/**
 * Searching the PostgreSQL index. BM25F is computed in SQL from the postings, with the same
 * weights, IDF and tie order as the embedded engine (rank.ts), so both return the same ranking:
 * the database reads only the postings of the query's terms and sends back the best candidates;
 * the proximity bonus on those candidates, the snippets and the fusion with semantic neighbours
 * are the shared code.
 */
import type pg from 'pg';
import { queryTerms } from '../analyze';
import type { Embedder } from '../embeddings';
import type { SearchOptions } from '../engine';
import type { WeightedQuery } from '../rank';
import { B, K1, RERANK_DEPTH, WEIGHTS, idfOf, rerankByProximity } from '../rank';
import type { KnowledgeBaseHit } from '../search';
import { FUSION_DEPTH, fuseRankings, withRanks } from '../search';
import { bestSnippet } from '../snippet';
import type { Tables } from './schema';
import { hasVectors } from './vectors';

/** A chunk as a search reads it. */
interface ChunkRow {
  id: string;
  path: string;
  filename: string;
  title: string;
  no: number;
  heading: string;
  body: string;
}

interface Ranked extends ChunkRow {
  bm25: number;
  score: number;
}

const CHUNK_COLUMNS = 'c.id, d.path, d.filename, d.title, c.no, c.heading, c.body';

/** The embedded engine's tie order: document path, then chunk number. */
function byPosition(a: { path: string; no: number }, b: { path: string; no: number }): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : a.no - b.no;
}

/** Lengths normalised as BM25 does: 1 − b + b·len/avg, in SQL. */
function norm(column: string, b: number, avgParam: string): string {
  return `(${1 - b} + ${b} * ${column} / ${avgParam})`;
}

/** The query's terms with their IDF, and the average field lengths, in one snapshot of the index. */
async function weigh(
  client: pg.PoolClient,
  t: Tables,
  query: string,
): Promise<{ q: WeightedQuery; avg: number[] }> {
  const terms = queryTerms(query);
  const meta = await client.query<{ n: number; body: number; head: number; title: number; name: number }>(
    `SELECT chunks::float8 AS n, sum_body::float8 AS body, sum_head::float8 AS head,
            sum_title::float8 AS title, sum_name::float8 AS name FROM ${t.meta}`,
  );
  const m = meta.rows[0] ?? { n: 0, body: 0, head: 0, title: 0, name: 0 };
  const n = Math.max(1, m.n);
  const avg = [m.body, m.head, m.title, m.name].map((s) => Math.max(1, s / n));
  if (terms.length === 0) return { q: { terms, idf: new Map() }, avg };
  // A term's document frequency counts the chunks that have it in any field: all chunks of a
  // document whose title or file name has it, plus the other chunks that have it in their text.
  const df = await client.query<{ term: string; df: number }>(
    `WITH dt AS (SELECT t.term, t.doc_id, d.chunks
                   FROM ${t.docTerms} t JOIN ${t.documents} d ON d.id = t.doc_id
                  WHERE t.term = ANY($1::text[]))
     SELECT term, sum(k)::float8 AS df FROM (
       SELECT term, sum(chunks) AS k FROM dt GROUP BY term
       UNION ALL
       SELECT ct.term, count(*) FROM ${t.chunkTerms} ct
        WHERE ct.term = ANY($1::text[])
          AND NOT EXISTS (SELECT 1 FROM dt WHERE dt.term = ct.term AND dt.doc_id = ct.doc_id)
        GROUP BY ct.term
     ) x GROUP BY term`,
    [terms],
  );
  const dfs = new Map(df.rows.map((r) => [r.term, r.df]));
  return { q: { terms, idf: idfOf(terms, m.n, (term) => dfs.get(term)) }, avg };
}

/** The best `depth` chunks by BM25F, best first, ties in document order. */
async function bm25f(
  client: pg.PoolClient,
  t: Tables,
  q: WeightedQuery,
  avg: number[],
  depth: number,
): Promise<Ranked[]> {
  const terms = [...q.idf.keys()];
  const r = await client.query<ChunkRow & { bm25: number }>(
    `WITH q AS (SELECT * FROM unnest($1::text[], $2::float8[]) AS q(term, idf)),
     cw AS (SELECT t.chunk_id, t.doc_id, t.term,
                   ${WEIGHTS.body} * t.body_tf / ${norm('c.body_len', B.body, '$3')}
                 + ${WEIGHTS.head} * t.head_tf / ${norm('c.head_len', B.head, '$4')} AS w
              FROM ${t.chunkTerms} t JOIN ${t.chunks} c ON c.id = t.chunk_id
             WHERE t.term = ANY($1::text[])),
     dw AS (SELECT t.doc_id, t.term,
                   ${WEIGHTS.title} * t.title_tf / ${norm('d.title_len', B.title, '$5')}
                 + ${WEIGHTS.name} * t.name_tf / ${norm('d.name_len', B.name, '$6')} AS w
              FROM ${t.docTerms} t JOIN ${t.documents} d ON d.id = t.doc_id
             WHERE t.term = ANY($1::text[])),
     -- Chunks that match in their text, and the first chunk of documents matched by title or name.
     cand AS (SELECT DISTINCT chunk_id, doc_id FROM cw
              UNION
              SELECT c.id, c.doc_id FROM (SELECT DISTINCT doc_id FROM dw) x
                JOIN ${t.chunks} c ON c.doc_id = x.doc_id AND c.no = 0),
     scored AS (SELECT cand.chunk_id,
                       sum(q.idf * (coalesce(cw.w, 0) + coalesce(dw.w, 0))
                           / (${K1} + coalesce(cw.w, 0) + coalesce(dw.w, 0))) AS bm25
                  FROM cand CROSS JOIN q
                  LEFT JOIN cw ON cw.chunk_id = cand.chunk_id AND cw.term = q.term
                  LEFT JOIN dw ON dw.doc_id = cand.doc_id AND dw.term = q.term
                 WHERE cw.w IS NOT NULL OR dw.w IS NOT NULL
                 GROUP BY cand.chunk_id)
     SELECT s.bm25, ${CHUNK_COLUMNS}
       FROM scored s JOIN ${t.chunks} c ON c.id = s.chunk_id JOIN ${t.documents} d ON d.id = c.doc_id
      ORDER BY s.bm25 DESC, d.path, c.no
      LIMIT $7`,
    [terms, terms.map((term) => q.idf.get(term)), ...avg, depth],
  );
  return r.rows.map((row) => ({ ...row, score: row.bm25 }));
}

/** Chunks nearest to the query vector, most similar first (a dot product over every stored vector). */
async function nearest(
  client: pg.PoolClient,
  t: Tables,
  embedder: Embedder,
  vector: Float32Array,
): Promise<ChunkRow[]> {
  const r = await client.query<ChunkRow>(
    `SELECT ${CHUNK_COLUMNS}
       FROM ${t.vectors} v JOIN ${t.chunks} c ON c.id = v.chunk_id JOIN ${t.documents} d ON d.id = c.doc_id
      WHERE v.embedder = $2 AND cardinality(v.vec) = cardinality($1::real[])
      ORDER BY (SELECT sum(a::float8 * b) FROM unnest(v.vec, $1::real[]) AS u(a, b)) DESC, d.path, c.no
      LIMIT ${FUSION_DEPTH}`,
    [Array.from(vector), embedder.key],
  );
  return r.rows;
}

/** The query's vector, or undefined (with the reason told) when the search must stay lexical. */
async function queryVector(
  pool: pg.Pool,
  t: Tables,
  query: string,
  embedder: Embedder,
  opts: SearchOptions,
): Promise<Float32Array | undefined> {
  if (!(await hasVectors(pool, t, embedder))) {
    opts.onFallback?.('the chunks have no embeddings yet (run `durable-agent kb add` on the folders)');
    return undefined;
  }
  try {
    const [v] = await embedder.embed([query], 'query', opts.signal);
    return v;
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    opts.onFallback?.(`the embedding provider failed: ${(err as Error).message}`);
    return undefined;
  }
}

/** The best `limit` chunks for `query` in the PostgreSQL index. */
export async function searchPostgres(
  pool: pg.Pool,
  t: Tables,
  query: string,
  limit: number,
  embedder: Embedder | undefined,
  opts: SearchOptions = {},
): Promise<KnowledgeBaseHit[]> {
  // The provider is asked before the transaction opens: it may take seconds.
  const vector = embedder ? await queryVector(pool, t, query, embedder, opts) : undefined;
  const client = await pool.connect();
  let failed = false;
  try {
    // One snapshot for the weights, the postings and the neighbours, while writers go on.
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const { q, avg } = await weigh(client, t, query);
    const depth = vector ? Math.max(limit, FUSION_DEPTH) : limit;
    const candidates = q.idf.size ? await bm25f(client, t, q, avg, Math.max(depth, RERANK_DEPTH)) : [];
    const lexical = rerankByProximity(
      candidates,
      q,
      depth,
      (r) => ({ heading: r.heading, text: r.body }),
      byPosition,
    );
    const semantic = vector && embedder ? await nearest(client, t, embedder, vector) : undefined;
    await client.query('COMMIT');

    const hit = (row: ChunkRow, score: number): KnowledgeBaseHit => ({
      path: row.path,
      filename: row.filename,
      title: row.title,
      heading: row.heading,
      chunkNo: row.no,
      text: row.body,
      score,
      snippet: bestSnippet(row.body, q.idf),
      ranking: semantic ? 'hybrid' : 'lexical',
    });
    if (!semantic) return lexical.slice(0, limit).map((r, i) => withRanks(hit(r, r.score), i + 1, undefined));
    const rows = new Map<string, ChunkRow>([...semantic, ...lexical].map((r) => [r.id, r]));
    const fusion = fuseRankings(
      lexical.map((r) => r.id),
      semantic.map((r) => r.id),
      (a, b) => byPosition(rows.get(a)!, rows.get(b)!),
    );
    return fusion.order
      .slice(0, limit)
      .map((f) =>
        withRanks(
          hit(rows.get(f.key)!, f.score),
          fusion.lexicalRank.get(f.key),
          fusion.semanticRank.get(f.key),
        ),
      );
  } catch (err) {
    failed = true;
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release(failed ? true : undefined);
  }
}
