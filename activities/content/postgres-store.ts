import type pg from 'pg';
import type { ContentRef } from '../../shared/content';
import type {
  CollectableContentStore,
  ContentEntry,
  StoreStats,
  SweepOptions,
  SweepTotals,
} from './collectable';
import { counted, decide, emptyTotals } from './collectable';
import { ContentMissingError, assertContentRef, decodeContent, encodeContent } from './store';

/** The table a PostgreSQL content store keeps values in. */
export const CONTENT_TABLE = 'durable_agent_content';
/** Which workflow references which value (see collectable.ts). */
export const CLAIMS_TABLE = 'durable_agent_content_claims';
/** The store's own facts: when claims began to be recorded in a table that already held values (ms). */
const META_TABLE = 'durable_agent_content_meta';

/** Values a sweep reads (and removes) at once. */
const SWEEP_PAGE = 500;
/** References one claim statement takes. */
const CLAIM_BATCH = 1000;

/**
 * Creates the tables on first use, and adds claims to a table made before they existed: its rows
 * keep their creation time as their written time and are marked legacy (never claimed). One
 * process does it at a time (an advisory lock), so workers starting together agree.
 */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS ${CONTENT_TABLE} (
    ref text PRIMARY KEY,
    body text NOT NULL,
    bytes integer NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  );
  ALTER TABLE ${CONTENT_TABLE} ADD COLUMN IF NOT EXISTS written_at timestamptz;
  UPDATE ${CONTENT_TABLE} SET written_at = created_at WHERE written_at IS NULL;
  ALTER TABLE ${CONTENT_TABLE} ALTER COLUMN written_at SET DEFAULT now(), ALTER COLUMN written_at SET NOT NULL;
  CREATE INDEX IF NOT EXISTS ${CONTENT_TABLE}_written_at ON ${CONTENT_TABLE} (written_at);
  CREATE TABLE IF NOT EXISTS ${META_TABLE} (name text PRIMARY KEY, value text NOT NULL);
  INSERT INTO ${META_TABLE} (name, value)
    SELECT 'legacy_before', (extract(epoch FROM now()) * 1000)::bigint::text WHERE EXISTS (SELECT 1 FROM ${CONTENT_TABLE})
    ON CONFLICT (name) DO NOTHING;
  CREATE TABLE ${CLAIMS_TABLE} (
    ref text NOT NULL REFERENCES ${CONTENT_TABLE} (ref) ON DELETE CASCADE,
    workflow_id text NOT NULL,
    claimed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (ref, workflow_id)
  );
  CREATE INDEX ${CLAIMS_TABLE}_workflow ON ${CLAIMS_TABLE} (workflow_id);`;

/** A lock id of this store's schema changes. */
const SCHEMA_LOCK = 4_141_592_653;

/**
 * A content store in PostgreSQL, shared by workers on many machines. One row per value, one per
 * claim; a write that meets an existing row stamps it written now and keeps its bytes, so it is
 * write-once under any number of concurrent writers. The tables are created on first use when the
 * role may create them (in the connection's schema: `?options=-c search_path=…` picks another).
 */
export class PostgresContentStore implements CollectableContentStore {
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
    this.ready ??= this.migrate().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  private async migrate(): Promise<void> {
    const up = await this.pool.query<{ up: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS up`, [
      CLAIMS_TABLE,
    ]);
    if (up.rows[0]?.up) return;
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
      const again = await client.query<{ up: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS up`, [
        CLAIMS_TABLE,
      ]);
      if (!again.rows[0]?.up) await client.query(SCHEMA);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async put(value: unknown, claimant?: string): Promise<ContentRef> {
    const { ref, body } = encodeContent(value);
    await this.init();
    await this.pool.query(
      `WITH k AS (
         INSERT INTO ${CONTENT_TABLE} AS c (ref, body, bytes) VALUES ($1, $2, $3)
         ON CONFLICT (ref) DO UPDATE SET written_at = now()
         RETURNING c.ref)
       INSERT INTO ${CLAIMS_TABLE} (ref, workflow_id) SELECT ref, $4 FROM k WHERE $4::text IS NOT NULL
       ON CONFLICT (ref, workflow_id) DO UPDATE SET claimed_at = now()`,
      [ref, body, Buffer.byteLength(body), claimant ?? null],
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

  async claim(refs: readonly ContentRef[], workflowId: string): Promise<ContentRef[]> {
    for (const ref of refs) assertContentRef(ref);
    await this.init();
    const held = new Set<string>();
    for (let i = 0; i < refs.length; i += CLAIM_BATCH) {
      const r = await this.pool.query<{ ref: string }>(
        `WITH k AS (UPDATE ${CONTENT_TABLE} SET written_at = now() WHERE ref = ANY($1) RETURNING ref)
         INSERT INTO ${CLAIMS_TABLE} (ref, workflow_id) SELECT ref, $2 FROM k
         ON CONFLICT (ref, workflow_id) DO UPDATE SET claimed_at = now()
         RETURNING ref`,
        [refs.slice(i, i + CLAIM_BATCH), workflowId],
      );
      for (const row of r.rows) held.add(row.ref);
    }
    return refs.filter((r) => !held.has(r));
  }

  async claimants(writtenBefore: Date): Promise<string[]> {
    await this.init();
    const r = await this.pool.query<{ workflow_id: string }>(
      `SELECT DISTINCT c.workflow_id FROM ${CLAIMS_TABLE} c JOIN ${CONTENT_TABLE} k ON k.ref = c.ref
       WHERE k.written_at < $1`,
      [writtenBefore],
    );
    return r.rows.map((row) => row.workflow_id);
  }

  private async legacyBefore(): Promise<Date | null> {
    const r = await this.pool.query<{ value: string }>(
      `SELECT value FROM ${META_TABLE} WHERE name = 'legacy_before'`,
    );
    return r.rows[0] ? new Date(Number(r.rows[0].value)) : null;
  }

  async sweep(opts: SweepOptions): Promise<SweepTotals> {
    await this.init();
    const totals = emptyTotals();
    const legacyBefore = await this.legacyBefore();
    const dead = [...opts.dead];
    for (let after = ''; ;) {
      const page = await this.pool.query<{
        ref: ContentRef;
        bytes: number;
        written_at: Date;
        claimants: string[];
      }>(
        `SELECT k.ref, k.bytes, k.written_at,
                coalesce(array_agg(c.workflow_id) FILTER (WHERE c.workflow_id IS NOT NULL), '{}') AS claimants
         FROM ${CONTENT_TABLE} k LEFT JOIN ${CLAIMS_TABLE} c ON c.ref = k.ref
         WHERE k.written_at < $1 AND k.ref > $2
         GROUP BY k.ref ORDER BY k.ref LIMIT ${SWEEP_PAGE}`,
        [opts.writtenBefore, after],
      );
      const last = page.rows.at(-1);
      if (!last) break;
      after = last.ref;
      const going: ContentEntry[] = [];
      for (const row of page.rows) {
        const entry = { ref: row.ref, bytes: row.bytes, writtenAt: row.written_at };
        if (decide(entry, row.claimants, opts, legacyBefore, totals)) going.push(entry);
      }
      if (opts.dryRun) {
        for (const entry of going) counted(entry, opts, totals);
      } else if (going.length > 0) {
        // Checked again as it is removed: a value written or claimed by a live run since is kept.
        const removed = await this.pool.query<{ ref: ContentRef; bytes: number; written_at: Date }>(
          `DELETE FROM ${CONTENT_TABLE} k
           WHERE k.ref = ANY($1) AND k.written_at < $2
             AND NOT EXISTS (SELECT 1 FROM ${CLAIMS_TABLE} c WHERE c.ref = k.ref AND NOT (c.workflow_id = ANY($3)))
           RETURNING k.ref, k.bytes, k.written_at`,
          [going.map((e) => e.ref), opts.writtenBefore, dead],
        );
        for (const row of removed.rows)
          counted({ ref: row.ref, bytes: row.bytes, writtenAt: row.written_at }, opts, totals);
      }
      opts.onProgress?.(totals.scanned);
    }
    return totals;
  }

  async dropClaims(workflowIds: readonly string[], claimedBefore: Date): Promise<number> {
    if (workflowIds.length === 0) return 0;
    await this.init();
    const r = await this.pool.query<{ workflow_id: string }>(
      `DELETE FROM ${CLAIMS_TABLE} WHERE workflow_id = ANY($1) AND claimed_at < $2 RETURNING workflow_id`,
      [workflowIds, claimedBefore],
    );
    return new Set(r.rows.map((row) => row.workflow_id)).size;
  }

  async stats(): Promise<StoreStats> {
    await this.init();
    const legacyBefore = await this.legacyBefore();
    const [values, claims, legacy] = await Promise.all([
      this.pool.query<{ values: number; bytes: string; oldest: Date | null }>(
        `SELECT count(*)::int AS values, coalesce(sum(bytes), 0)::bigint AS bytes, min(written_at) AS oldest
         FROM ${CONTENT_TABLE}`,
      ),
      this.pool.query<{ claims: number; claimants: number }>(
        `SELECT count(*)::int AS claims, count(DISTINCT workflow_id)::int AS claimants FROM ${CLAIMS_TABLE}`,
      ),
      this.pool.query<{ legacy: number; bytes: string }>(
        `SELECT count(*)::int AS legacy, coalesce(sum(bytes), 0)::bigint AS bytes FROM ${CONTENT_TABLE} k
         WHERE k.written_at < $1 AND NOT EXISTS (SELECT 1 FROM ${CLAIMS_TABLE} c WHERE c.ref = k.ref)`,
        [legacyBefore ?? new Date(0)],
      ),
    ]);
    const v = values.rows[0];
    const c = claims.rows[0];
    const l = legacy.rows[0];
    return {
      values: v?.values ?? 0,
      bytes: Number(v?.bytes ?? 0),
      oldest: v?.oldest ?? null,
      claims: c?.claims ?? 0,
      claimants: c?.claimants ?? 0,
      legacy: l?.legacy ?? 0,
      legacyBytes: Number(l?.bytes ?? 0),
    };
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
