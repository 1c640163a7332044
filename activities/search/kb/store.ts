/**
 * The knowledge-base index: Postgres full-text search in PGlite (in-process, zero setup), stored
 * in a folder the worker and the CLI share.
 *
 * Ranking is BM25-like: a chunk scores the sum, over the query's words, of the word's rarity
 * (inverse document frequency over all chunks) times Postgres' weighted frequency of the word in
 * the chunk. Title words weigh most, then the section heading, then the file name, then the body.
 * Matching any query word is enough to be a candidate: models ask in whole sentences, and an AND
 * of every word (plain `websearch_to_tsquery`) misses most of them.
 *
 * PGlite does not enforce `statement_timeout`, so every query here is bounded by construction:
 * candidates come from the GIN index and results are LIMITed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { Chunk } from './documents';
import { acquireLock } from './lock';
import type { HeldLock } from './lock';

/** A document to store, already parsed. */
export interface StoredDocument {
  /** Absolute path: the document's identity. */
  path: string;
  /** Path relative to the folder it was added from, shown to users and the model. */
  filename: string;
  /** Content hash; an unchanged file is not re-indexed. */
  hash: string;
  title: string;
  chunks: Chunk[];
}

/** One search hit: a chunk with its document. */
export interface KnowledgeBaseHit {
  path: string;
  filename: string;
  title: string;
  heading: string;
  chunkNo: number;
  text: string;
  score: number;
}

/** Size of the index. */
export interface KnowledgeBaseStats {
  documents: number;
  chunks: number;
}

// Bump when the schema changes; an index of another version is rebuilt from its documents by `kb add`.
const SCHEMA_VERSION = '1';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS kb_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS kb_documents (
  id serial PRIMARY KEY,
  path text NOT NULL UNIQUE,
  filename text NOT NULL,
  title text NOT NULL,
  hash text NOT NULL,
  indexed_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS kb_chunks (
  id serial PRIMARY KEY,
  doc_id integer NOT NULL REFERENCES kb_documents(id) ON DELETE CASCADE,
  chunk_no integer NOT NULL,
  heading text NOT NULL,
  body text NOT NULL,
  tsv tsvector NOT NULL
);
CREATE INDEX IF NOT EXISTS kb_chunks_tsv ON kb_chunks USING gin (tsv);
CREATE INDEX IF NOT EXISTS kb_chunks_doc ON kb_chunks (doc_id);
CREATE TABLE IF NOT EXISTS kb_terms (word text PRIMARY KEY, ndoc integer NOT NULL);
`;

/**
 * Weights of the D, C, B, A labels for ts_rank: body, file name, heading, title. A title word
 * counts ten times a body word, so "Sourdough starter" beats a page that mentions sourdough once.
 */
const RANK_WEIGHTS = '{0.1, 0.3, 0.6, 1.0}';

const SEARCH_SQL = `
WITH q AS (
  SELECT DISTINCT lex FROM unnest(tsvector_to_array(to_tsvector('english', $1))) AS lex
), n AS (
  SELECT greatest((SELECT count(*) FROM kb_chunks), 1)::float8 AS total
), terms AS (
  SELECT q.lex, quote_literal(q.lex)::tsquery AS tq,
         ln(1 + (n.total - coalesce(t.ndoc, 0) + 0.5) / (coalesce(t.ndoc, 0) + 0.5)) AS idf
  FROM q CROSS JOIN n LEFT JOIN kb_terms t ON t.word = q.lex
), anyterm AS (
  SELECT string_agg(quote_literal(lex), ' | ')::tsquery AS tq FROM q
), candidates AS (
  SELECT c.id, c.doc_id, c.chunk_no, c.heading, c.body, c.tsv
  FROM kb_chunks c, anyterm
  WHERE anyterm.tq IS NOT NULL AND c.tsv @@ anyterm.tq
), scored AS (
  SELECT c.id, sum(terms.idf * ts_rank('${RANK_WEIGHTS}', c.tsv, terms.tq, 1)) AS score
  FROM candidates c CROSS JOIN terms
  WHERE c.tsv @@ terms.tq
  GROUP BY c.id
)
SELECT d.path, d.filename, d.title, c.heading, c.chunk_no, c.body, s.score
FROM scored s
JOIN kb_chunks c ON c.id = s.id
JOIN kb_documents d ON d.id = c.doc_id
ORDER BY s.score DESC, d.filename, c.chunk_no
LIMIT $2`;

/** File names become words too: `kitchen/sourdough-starter.md` → `kitchen sourdough starter`. */
function filenameWords(filename: string): string {
  return filename.replace(/\.[a-z0-9]+$/i, '').replace(/[^\p{L}\p{N}]+/gu, ' ');
}

/**
 * An open knowledge base. Holds the folder's lock until {@link close}; use {@link openKnowledgeBase}
 * (or the shared handle in `pool.ts`) rather than constructing it.
 */
export class KnowledgeBase {
  private constructor(
    private readonly db: PGlite,
    private readonly lock: HeldLock,
    /** The data folder. */
    readonly dir: string,
  ) {}

  /** Opens (creating on first use) the knowledge base in `dir`, taking its lock. */
  static async open(
    dir: string,
    opts: { lockTimeoutMs: number; signal?: AbortSignal },
  ): Promise<KnowledgeBase> {
    fs.mkdirSync(dir, { recursive: true });
    const lock = await acquireLock(path.join(dir, 'kb.lock'), opts.lockTimeoutMs, opts.signal);
    try {
      const db = await PGlite.create(path.join(dir, 'pgdata'));
      try {
        await db.exec(SCHEMA);
        const version = await db.query<{ value: string }>(`SELECT value FROM kb_meta WHERE key = 'schema'`);
        if (!version.rows[0]) {
          await db.query(`INSERT INTO kb_meta (key, value) VALUES ('schema', $1)`, [SCHEMA_VERSION]);
        } else if (version.rows[0].value !== SCHEMA_VERSION) {
          throw new Error(
            `The knowledge base in ${dir} has schema version ${version.rows[0].value}, this build needs ${SCHEMA_VERSION}: ` +
              'delete the folder and add your documents again.',
          );
        }
      } catch (err) {
        await db.close();
        throw err;
      }
      return new KnowledgeBase(db, lock, dir);
    } catch (err) {
      lock.release();
      throw err;
    }
  }

  /** Closes the database and releases the lock. */
  async close(): Promise<void> {
    try {
      await this.db.close();
    } finally {
      this.lock.release();
    }
  }

  /** Number of documents and chunks. */
  async stats(): Promise<KnowledgeBaseStats> {
    const r = await this.db.query<{ documents: number; chunks: number }>(
      `SELECT (SELECT count(*)::int FROM kb_documents) AS documents, (SELECT count(*)::int FROM kb_chunks) AS chunks`,
    );
    return r.rows[0] ?? { documents: 0, chunks: 0 };
  }

  /** Hashes of the stored documents, by absolute path, for skipping unchanged files. */
  async documentHashes(): Promise<Map<string, string>> {
    const r = await this.db.query<{ path: string; hash: string }>(`SELECT path, hash FROM kb_documents`);
    return new Map(r.rows.map((row) => [row.path, row.hash]));
  }

  /**
   * Stores a batch of documents in one transaction, replacing earlier versions of the same paths.
   * One transaction per batch rather than per file: PGlite commits are the slow part of indexing.
   */
  async putDocuments(docs: readonly StoredDocument[]): Promise<void> {
    if (docs.length === 0) return;
    await this.db.transaction(async (tx) => {
      for (const doc of docs) {
        const r = await tx.query<{ id: number }>(
          `INSERT INTO kb_documents (path, filename, title, hash) VALUES ($1, $2, $3, $4)
           ON CONFLICT (path) DO UPDATE SET filename = $2, title = $3, hash = $4, indexed_at = now()
           RETURNING id`,
          [doc.path, doc.filename, doc.title, doc.hash],
        );
        const id = r.rows[0]?.id;
        await tx.query(`DELETE FROM kb_chunks WHERE doc_id = $1`, [id]);
        if (doc.chunks.length === 0) continue;
        await tx.query(
          `INSERT INTO kb_chunks (doc_id, chunk_no, heading, body, tsv)
           SELECT $1, t.no, t.heading, t.body,
                  setweight(to_tsvector('english', $2), 'A') ||
                  setweight(to_tsvector('english', t.heading), 'B') ||
                  setweight(to_tsvector('english', $3), 'C') ||
                  setweight(to_tsvector('english', t.body), 'D')
           FROM unnest($4::int[], $5::text[], $6::text[]) AS t(no, heading, body)`,
          [
            id,
            doc.title,
            filenameWords(doc.filename),
            doc.chunks.map((c) => c.no),
            doc.chunks.map((c) => c.heading),
            doc.chunks.map((c) => c.text),
          ],
        );
      }
      await tx.query(`INSERT INTO kb_meta (key, value) VALUES ('terms_stale', '1')
                      ON CONFLICT (key) DO UPDATE SET value = '1'`);
    });
  }

  /** Removes documents by absolute path (files deleted since they were added). */
  async removeDocuments(paths: readonly string[]): Promise<number> {
    if (paths.length === 0) return 0;
    const r = await this.db.query(`DELETE FROM kb_documents WHERE path = ANY($1::text[])`, [paths]);
    await this.db.query(`INSERT INTO kb_meta (key, value) VALUES ('terms_stale', '1')
                         ON CONFLICT (key) DO UPDATE SET value = '1'`);
    return r.affectedRows ?? 0;
  }

  /** Paths of stored documents under a folder. */
  async documentsUnder(folder: string): Promise<string[]> {
    const prefix = folder.endsWith(path.sep) ? folder : folder + path.sep;
    const r = await this.db.query<{ path: string }>(
      `SELECT path FROM kb_documents WHERE starts_with(path, $1) OR path = $2`,
      [prefix, folder],
    );
    return r.rows.map((row) => row.path);
  }

  /**
   * Recomputes word document-frequencies (the IDF of the ranking) when documents changed. Done once
   * per indexing run, not per batch: it scans every chunk.
   */
  async refreshTermStats(): Promise<void> {
    const stale = await this.db.query<{ value: string }>(
      `SELECT value FROM kb_meta WHERE key = 'terms_stale'`,
    );
    if (stale.rows[0]?.value !== '1') return;
    await this.db.transaction(async (tx) => {
      await tx.query(`DELETE FROM kb_terms`);
      await tx.query(
        `INSERT INTO kb_terms (word, ndoc) SELECT word, ndoc FROM ts_stat('SELECT tsv FROM kb_chunks')`,
      );
      await tx.query(`UPDATE kb_meta SET value = '0' WHERE key = 'terms_stale'`);
    });
  }

  /** The best `limit` chunks for a query, best first. Stop words only (e.g. "the") match nothing. */
  async search(query: string, limit: number): Promise<KnowledgeBaseHit[]> {
    // An interrupted indexing run leaves the statistics stale; fix them before they skew a ranking.
    await this.refreshTermStats();
    const r = await this.db.query<{
      path: string;
      filename: string;
      title: string;
      heading: string;
      chunk_no: number;
      body: string;
      score: number;
    }>(SEARCH_SQL, [query, limit]);
    return r.rows.map((row) => ({
      path: row.path,
      filename: row.filename,
      title: row.title,
      heading: row.heading,
      chunkNo: row.chunk_no,
      text: row.body,
      score: Number(row.score),
    }));
  }
}
