import type pg from 'pg';
import type { ContentRef } from '../../shared/content';
import type { ContentStore } from './store';
import { ContentMissingError, assertContentRef, decodeContent, encodeContent } from './store';

/** The table a PostgreSQL content store keeps values in. */
export const CONTENT_TABLE = 'durable_agent_content';

/**
 * A content store in PostgreSQL, shared by workers on many machines. One row per value; inserts
 * that meet an existing row do nothing (`ON CONFLICT DO NOTHING`), so it is write-once under any
 * number of concurrent writers. The table is created on first use when the role may create it.
 */
export class PostgresContentStore implements ContentStore {
  private readonly pool: pg.Pool;
  private ready: Promise<void> | undefined;

  constructor(
    url: string,
    readonly where = `PostgreSQL table ${CONTENT_TABLE}`,
  ) {
    // Loaded when a store opens: commands that only read the content-store setting need no driver.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
    const { Pool } = require('pg') as typeof pg;
    this.pool = new Pool({ connectionString: url, max: 4 });
    // An idle client's error (server restart) must not crash the worker; the next query reconnects.
    this.pool.on('error', () => undefined);
  }

  private init(): Promise<void> {
    this.ready ??= this.pool
      .query(
        `CREATE TABLE IF NOT EXISTS ${CONTENT_TABLE} (
           ref text PRIMARY KEY,
           body text NOT NULL,
           bytes integer NOT NULL,
           created_at timestamptz NOT NULL DEFAULT now()
         )`,
      )
      .then(() => undefined)
      .catch((err: unknown) => {
        this.ready = undefined;
        throw err;
      });
    return this.ready;
  }

  async put(value: unknown): Promise<ContentRef> {
    const { ref, body } = encodeContent(value);
    await this.init();
    await this.pool.query(
      `INSERT INTO ${CONTENT_TABLE} (ref, body, bytes) VALUES ($1, $2, $3) ON CONFLICT (ref) DO NOTHING`,
      [ref, body, Buffer.byteLength(body)],
    );
    return ref;
  }

  async get(ref: ContentRef): Promise<unknown> {
    assertContentRef(ref);
    await this.init();
    const r = await this.pool.query<{ body: string }>(`SELECT body FROM ${CONTENT_TABLE} WHERE ref = $1`, [
      ref,
    ]);
    const row = r.rows[0];
    if (!row) throw new ContentMissingError(ref, this.where);
    return decodeContent(ref, row.body);
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
