/**
 * The PostgreSQL engine's tables, created on first use. The inverted index is a table of postings
 * (term → chunk, with the term's counts in the body and heading), so any number of workers and
 * CLIs share one index and a corpus larger than memory has a home:
 *
 *     <prefix>_meta         one row: format version and the sums BM25F's average lengths come from
 *     <prefix>_documents    one row per file: path (identity), title, content hash, field lengths
 *     <prefix>_chunks       one row per passage: heading, text, field lengths
 *     <prefix>_chunk_terms  postings of the chunks' body and heading
 *     <prefix>_doc_terms    postings of the documents' title and file name
 *     <prefix>_vectors      chunk embeddings, when an embedding provider is configured
 *
 * Terms are the embedded engine's (analyze.ts: Porter2 stems, CJK bigrams and unigrams), so both
 * engines rank alike and Chinese or Japanese text needs no PostgreSQL text-search configuration.
 */
import type pg from 'pg';
import { KnowledgeBaseDatabaseError } from '../engine';

/** Bump when the tables change shape; an index in another format is refused with what to do. */
export const PG_FORMAT = 1;

/** The table names of one index. */
export interface Tables {
  prefix: string;
  meta: string;
  documents: string;
  chunks: string;
  chunkTerms: string;
  docTerms: string;
  vectors: string;
}

/** Table names for `prefix` (checked by the config schema: lower-case letters, digits, `_`). */
export function tablesOf(prefix: string): Tables {
  if (!/^[a-z_][a-z0-9_]{0,39}$/.test(prefix))
    throw new Error(`Invalid knowledge-base table prefix "${prefix}"`);
  return {
    prefix,
    meta: `${prefix}_meta`,
    documents: `${prefix}_documents`,
    chunks: `${prefix}_chunks`,
    chunkTerms: `${prefix}_chunk_terms`,
    docTerms: `${prefix}_doc_terms`,
    vectors: `${prefix}_vectors`,
  };
}

/**
 * Advisory-lock keys (two 32-bit integers) of an index: the first says "durable-agent knowledge
 * base" and what for, the second which index. Writers hold the `writer` lock for a whole indexing
 * run; schema creation takes the `schema` lock for its transaction only, so a new worker's first
 * search never waits for a long `kb add` elsewhere.
 */
export function lockKeys(prefix: string, purpose: 'writer' | 'schema'): [number, number] {
  let h = 0;
  for (const ch of prefix) h = (Math.imul(h, 31) + ch.charCodeAt(0)) | 0;
  return [purpose === 'writer' ? 0x6b62_0001 : 0x6b62_0002, h & 0x7fffffff];
}

function ddl(t: Tables): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${t.meta} (
       singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
       format integer NOT NULL,
       documents bigint NOT NULL DEFAULT 0,
       chunks bigint NOT NULL DEFAULT 0,
       sum_body bigint NOT NULL DEFAULT 0,
       sum_head bigint NOT NULL DEFAULT 0,
       sum_title bigint NOT NULL DEFAULT 0,
       sum_name bigint NOT NULL DEFAULT 0
     )`,
    `INSERT INTO ${t.meta} (format) VALUES (${PG_FORMAT}) ON CONFLICT (singleton) DO NOTHING`,
    `CREATE TABLE IF NOT EXISTS ${t.documents} (
       id bigserial PRIMARY KEY,
       path text COLLATE "C" NOT NULL UNIQUE,
       filename text NOT NULL,
       hash text NOT NULL,
       title text NOT NULL,
       title_len integer NOT NULL,
       name_len integer NOT NULL,
       chunks integer NOT NULL,
       indexed_at timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE TABLE IF NOT EXISTS ${t.chunks} (
       id bigserial PRIMARY KEY,
       doc_id bigint NOT NULL REFERENCES ${t.documents} (id) ON DELETE CASCADE,
       no integer NOT NULL,
       heading text NOT NULL,
       body text NOT NULL,
       body_len integer NOT NULL,
       head_len integer NOT NULL,
       UNIQUE (doc_id, no)
     )`,
    `CREATE TABLE IF NOT EXISTS ${t.chunkTerms} (
       term text COLLATE "C" NOT NULL,
       chunk_id bigint NOT NULL REFERENCES ${t.chunks} (id) ON DELETE CASCADE,
       doc_id bigint NOT NULL,
       body_tf integer NOT NULL,
       head_tf integer NOT NULL,
       PRIMARY KEY (term, chunk_id)
     )`,
    `CREATE INDEX IF NOT EXISTS ${t.chunkTerms}_chunk ON ${t.chunkTerms} (chunk_id)`,
    `CREATE TABLE IF NOT EXISTS ${t.docTerms} (
       term text COLLATE "C" NOT NULL,
       doc_id bigint NOT NULL REFERENCES ${t.documents} (id) ON DELETE CASCADE,
       title_tf integer NOT NULL,
       name_tf integer NOT NULL,
       PRIMARY KEY (term, doc_id)
     )`,
    `CREATE INDEX IF NOT EXISTS ${t.docTerms}_doc ON ${t.docTerms} (doc_id)`,
    `CREATE TABLE IF NOT EXISTS ${t.vectors} (
       chunk_id bigint PRIMARY KEY REFERENCES ${t.chunks} (id) ON DELETE CASCADE,
       embedder text NOT NULL,
       vec real[] NOT NULL
     )`,
  ];
}

/** The tables' format, or undefined when they do not all exist yet. */
async function formatOf(client: pg.PoolClient, t: Tables): Promise<number | undefined> {
  // The vectors table is created last, in the same transaction as the others. Read from pg_class
  // (a fresh snapshot per statement), not to_regclass: a name lookup can answer from a session's
  // cache of "no such table" made before another session created it.
  const exists = await client.query<{ ok: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                     WHERE c.relname = $1 AND n.nspname = current_schema()) AS ok`,
    [t.vectors],
  );
  if (!exists.rows[0]?.ok) return undefined;
  const r = await client.query<{ format: number }>(`SELECT format FROM ${t.meta}`);
  return r.rows[0]?.format;
}

/**
 * Creates the tables when they are missing and checks their format. Safe when many workers start
 * at once: the creation runs in one transaction under the index's schema lock (two concurrent
 * `CREATE TABLE IF NOT EXISTS` can otherwise both try to create the table's type and one fails),
 * and when the tables exist no DDL runs at all, so a starting worker takes no lock a writer holds.
 */
export async function ensureSchema(pool: pg.Pool, t: Tables, where: string): Promise<void> {
  const client = await pool.connect();
  try {
    let format = await formatOf(client, t);
    if (format === undefined) {
      await client.query('BEGIN');
      try {
        const [k1, k2] = lockKeys(t.prefix, 'schema');
        await client.query('SELECT pg_advisory_xact_lock($1, $2)', [k1, k2]);
        // Another process may have created them while this one waited for the lock, and may be
        // writing already: DDL now (even IF NOT EXISTS) would take locks its inserts conflict with.
        if ((await formatOf(client, t)) === undefined) for (const sql of ddl(t)) await client.query(sql);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
      format = await formatOf(client, t);
    }
    if (format !== PG_FORMAT) {
      throw new KnowledgeBaseDatabaseError(
        `The knowledge base in ${where} was built by another version of durable-agent (format ${format}, ` +
          `this one reads ${PG_FORMAT}): drop its ${t.prefix}_* tables, or set another ` +
          'search.knowledgeBase.tablePrefix, and add your documents again.',
        false,
      );
    }
  } finally {
    client.release();
  }
}
