/**
 * Writing the PostgreSQL index: each batch of documents in one transaction (old versions deleted,
 * new rows and postings inserted, the length sums in the meta row moved by the difference), so a
 * search sees a batch whole or not at all, and a writer killed mid-batch leaves nothing behind.
 * The caller holds the index's writer lock (knowledge-base.ts): one writer at a time.
 */
import path from 'node:path';
import type pg from 'pg';
import type { Embedder } from '../embeddings';
import type { KnowledgeBaseStats, KnowledgeBaseWriter } from '../engine';
import { analyzeDocument } from '../snapshot';
import type { StoredDocument } from '../store';
import type { Tables } from './schema';
import { syncVectors } from './vectors';

/** Changes to the meta row's counts and length sums. */
interface Sums {
  documents: number;
  chunks: number;
  sum_body: number;
  sum_head: number;
  sum_title: number;
  sum_name: number;
}

/** PostgreSQL text cannot hold NUL; a file with one is otherwise stored as it reads. */
function pgText(s: string): string {
  return s.includes('\u0000') ? s.replaceAll('\u0000', '') : s;
}

/** The writer of one indexing run, on the connection that holds the writer lock. */
export class PostgresWriter implements KnowledgeBaseWriter {
  constructor(
    private readonly client: pg.PoolClient,
    private readonly t: Tables,
    private readonly embedder: Embedder | undefined,
  ) {}

  async stats(): Promise<KnowledgeBaseStats> {
    const r = await this.client.query<KnowledgeBaseStats>(
      `SELECT documents::float8 AS documents, chunks::float8 AS chunks FROM ${this.t.meta}`,
    );
    return r.rows[0] ?? { documents: 0, chunks: 0 };
  }

  async documentHashes(root: string): Promise<Map<string, string>> {
    const r = await this.client.query<{ path: string; hash: string }>(
      `SELECT path, hash FROM ${this.t.documents} WHERE path = $1 OR left(path, length($2)) = $2`,
      [root, root.endsWith(path.sep) ? root : root + path.sep],
    );
    return new Map(r.rows.map((row) => [row.path, row.hash]));
  }

  async documentsUnder(folder: string): Promise<string[]> {
    return [...(await this.documentHashes(folder)).keys()];
  }

  async putDocuments(docs: readonly StoredDocument[]): Promise<void> {
    if (docs.length === 0) return;
    await this.transaction(async () => {
      const sums = await this.deleteDocuments(docs.map((d) => d.path));
      for (const doc of docs) {
        const added = await this.insertDocument(doc);
        for (const k of Object.keys(sums) as (keyof Sums)[]) sums[k] += added[k];
      }
      await this.moveSums(sums);
    });
  }

  async removeDocuments(paths: readonly string[]): Promise<number> {
    if (paths.length === 0) return 0;
    return this.transaction(async () => {
      const sums = await this.deleteDocuments(paths);
      await this.moveSums(sums);
      return -sums.documents;
    });
  }

  async commit(signal?: AbortSignal): Promise<void> {
    // Batches are searchable once committed; what is left is embedding the new chunks. A
    // cancelled run does not start embedding, as with the embedded engine.
    if (!this.embedder || signal?.aborted) return;
    await syncVectors(this.client, this.t, this.embedder, signal);
  }

  private async transaction<T>(fn: () => Promise<T>): Promise<T> {
    await this.client.query('BEGIN');
    try {
      const out = await fn();
      await this.client.query('COMMIT');
      return out;
    } catch (err) {
      await this.client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  /** Deletes documents (their chunks and postings cascade) and returns the sums they took away. */
  private async deleteDocuments(paths: readonly string[]): Promise<Sums> {
    const { documents, chunks } = this.t;
    const r = await this.client.query<Sums>(
      `SELECT count(*)::float8 AS documents,
              coalesce(sum(d.chunks), 0)::float8 AS chunks,
              coalesce(sum(c.body), 0)::float8 AS sum_body,
              coalesce(sum(c.head), 0)::float8 AS sum_head,
              coalesce(sum(d.title_len * d.chunks), 0)::float8 AS sum_title,
              coalesce(sum(d.name_len * d.chunks), 0)::float8 AS sum_name
         FROM ${documents} d
         LEFT JOIN LATERAL (SELECT sum(body_len) AS body, sum(head_len) AS head
                              FROM ${chunks} WHERE doc_id = d.id) c ON true
        WHERE d.path = ANY($1::text[])`,
      [paths.map(pgText)],
    );
    await this.client.query(`DELETE FROM ${documents} WHERE path = ANY($1::text[])`, [paths.map(pgText)]);
    const gone = r.rows[0]!;
    return {
      documents: -gone.documents,
      chunks: -gone.chunks,
      sum_body: -gone.sum_body,
      sum_head: -gone.sum_head,
      sum_title: -gone.sum_title,
      sum_name: -gone.sum_name,
    };
  }

  /** Inserts one parsed document with its chunks and postings; returns what it adds to the sums. */
  private async insertDocument(doc: StoredDocument): Promise<Sums> {
    const rec = analyzeDocument(doc);
    const t = this.t;
    const d = await this.client.query<{ id: string }>(
      `INSERT INTO ${t.documents} (path, filename, hash, title, title_len, name_len, chunks)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
      [
        pgText(rec.path),
        pgText(rec.filename),
        rec.hash,
        pgText(rec.title),
        rec.titleLen,
        rec.nameLen,
        rec.chunks.length,
      ],
    );
    const docId = d.rows[0]!.id;

    const docTerms = [...new Set([...Object.keys(rec.titleTerms), ...Object.keys(rec.nameTerms)])];
    if (docTerms.length) {
      await this.client.query(
        `INSERT INTO ${t.docTerms} (term, doc_id, title_tf, name_tf)
         SELECT term, $1, title_tf, name_tf FROM unnest($2::text[], $3::int[], $4::int[]) AS x(term, title_tf, name_tf)`,
        [
          docId,
          docTerms,
          docTerms.map((term) => (Object.hasOwn(rec.titleTerms, term) ? rec.titleTerms[term] : 0)),
          docTerms.map((term) => (Object.hasOwn(rec.nameTerms, term) ? rec.nameTerms[term] : 0)),
        ],
      );
    }

    let sumBody = 0;
    let sumHead = 0;
    if (rec.chunks.length) {
      const c = await this.client.query<{ id: string; no: number }>(
        `INSERT INTO ${t.chunks} (doc_id, no, heading, body, body_len, head_len)
         SELECT $1, * FROM unnest($2::int[], $3::text[], $4::text[], $5::int[], $6::int[])
         RETURNING id, no`,
        [
          docId,
          rec.chunks.map((ch) => ch.no),
          rec.chunks.map((ch) => pgText(ch.heading)),
          rec.chunks.map((ch) => pgText(ch.text)),
          rec.chunks.map((ch) => ch.bodyLen),
          rec.chunks.map((ch) => ch.headLen),
        ],
      );
      const idOf = new Map(c.rows.map((row) => [row.no, row.id]));
      const terms: string[] = [];
      const chunkIds: string[] = [];
      const bodyTf: number[] = [];
      const headTf: number[] = [];
      for (const ch of rec.chunks) {
        sumBody += ch.bodyLen;
        sumHead += ch.headLen;
        for (const term of new Set([...Object.keys(ch.body), ...Object.keys(ch.head)])) {
          terms.push(term);
          chunkIds.push(idOf.get(ch.no)!);
          bodyTf.push(Object.hasOwn(ch.body, term) ? ch.body[term]! : 0);
          headTf.push(Object.hasOwn(ch.head, term) ? ch.head[term]! : 0);
        }
      }
      await this.client.query(
        `INSERT INTO ${t.chunkTerms} (term, chunk_id, doc_id, body_tf, head_tf)
         SELECT term, chunk_id, $1, body_tf, head_tf
           FROM unnest($2::text[], $3::bigint[], $4::int[], $5::int[]) AS x(term, chunk_id, body_tf, head_tf)`,
        [docId, terms, chunkIds, bodyTf, headTf],
      );
    }
    const n = rec.chunks.length;
    return {
      documents: 1,
      chunks: n,
      sum_body: sumBody,
      sum_head: sumHead,
      sum_title: rec.titleLen * n,
      sum_name: rec.nameLen * n,
    };
  }

  private async moveSums(s: Sums): Promise<void> {
    await this.client.query(
      `UPDATE ${this.t.meta} SET documents = documents + $1, chunks = chunks + $2, sum_body = sum_body + $3,
              sum_head = sum_head + $4, sum_title = sum_title + $5, sum_name = sum_name + $6`,
      [s.documents, s.chunks, s.sum_body, s.sum_head, s.sum_title, s.sum_name],
    );
  }
}
