/**
 * Chunk embeddings in PostgreSQL, without an extension: one `real[]` row per chunk, tagged with
 * the embedder that made it. Nearest neighbours are found by a dot product in SQL over every row
 * of the embedder (the vectors are unit length, so it is the cosine): exact, and linear in the
 * number of chunks. pgvector would index them; it is not required.
 */
import type pg from 'pg';
import type { Embedder } from '../embeddings';
import type { Tables } from './schema';

/** Chunks embedded per round trip; the embedder batches its own requests below this. */
const SYNC_BATCH = 256;

/** What is embedded for a chunk: the same text as the embedded engine's (vectors.ts). */
function passage(title: string, heading: string, body: string): string {
  return `${title}${heading ? ` › ${heading}` : ''}\n${body}`;
}

/**
 * Embeds every chunk that has no vector from `embedder` yet. Chunks of unchanged documents keep
 * theirs; a changed document's chunks are new rows and are embedded again.
 */
export async function syncVectors(
  client: pg.PoolClient,
  t: Tables,
  embedder: Embedder,
  signal?: AbortSignal,
): Promise<{ embedded: number }> {
  let embedded = 0;
  for (;;) {
    const r = await client.query<{ id: string; title: string; heading: string; body: string }>(
      `SELECT c.id, d.title, c.heading, c.body
         FROM ${t.chunks} c JOIN ${t.documents} d ON d.id = c.doc_id
        WHERE NOT EXISTS (SELECT 1 FROM ${t.vectors} v WHERE v.chunk_id = c.id AND v.embedder = $1)
        ORDER BY c.id LIMIT ${SYNC_BATCH}`,
      [embedder.key],
    );
    if (r.rows.length === 0) return { embedded };
    const vectors = await embedder.embed(
      r.rows.map((row) => passage(row.title, row.heading, row.body)),
      'document',
      signal,
    );
    await client.query(
      `INSERT INTO ${t.vectors} (chunk_id, embedder, vec)
       SELECT (e->>0)::bigint, $2, ARRAY(SELECT jsonb_array_elements_text(e->1)::real)
         FROM jsonb_array_elements($1::jsonb) AS e
       ON CONFLICT (chunk_id) DO UPDATE SET embedder = EXCLUDED.embedder, vec = EXCLUDED.vec`,
      [JSON.stringify(r.rows.map((row, i) => [row.id, Array.from(vectors[i] ?? [])])), embedder.key],
    );
    embedded += r.rows.length;
  }
}

/** Whether any chunk has a vector from `embedder`. */
export async function hasVectors(pool: pg.Pool, t: Tables, embedder: Embedder): Promise<boolean> {
  const r = await pool.query(`SELECT 1 FROM ${t.vectors} WHERE embedder = $1 LIMIT 1`, [embedder.key]);
  return r.rows.length > 0;
}
