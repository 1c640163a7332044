/**
 * The PostgreSQL engine: one index that every worker and CLI pointed at the same database shares.
 * Searches read with no lock (MVCC gives each one a consistent snapshot while writers go on);
 * writers take the index's advisory lock for a whole indexing run, so two workers seeding at once
 * index once, and the lock goes with the connection if a writer's process dies.
 */
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import type { Embedder } from '../embeddings';
import type {
  DocumentSummary,
  KnowledgeBaseIndex,
  KnowledgeBaseStats,
  KnowledgeBaseWriter,
  SearchOptions,
} from '../engine';
import { KnowledgeBaseBusyError, KnowledgeBaseDatabaseError } from '../engine';
import type { KnowledgeBaseHit } from '../search';
import type { Tables } from './schema';
import { ensureSchema, lockKeys, tablesOf } from './schema';
import { searchPostgres } from './search';
import { PostgresWriter } from './writer';

/** Settings of the PostgreSQL engine. */
export interface PostgresSettings {
  /** postgres:// URL; it holds a password and never appears in a message. */
  url: string;
  tablePrefix: string;
  poolSize: number;
  lockTimeoutMs: number;
  embedder?: Embedder | undefined;
}

/** How often a writer asks for the lock again while another process holds it. */
const LOCK_POLL_MS = 100;
/** Names this process in `pg_stat_activity`, so a busy writer can be told who holds the lock. */
const APPLICATION_NAME = `durable-agent kb: process ${process.pid} on ${os.hostname()}`.slice(0, 63);

/** Where a PostgreSQL URL points, without user or password. */
export function describePostgresUrl(url: string, prefix: string): string {
  const u = new URL(url);
  return `PostgreSQL ${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname} (tables ${prefix}_*)`;
}

/** The knowledge base in PostgreSQL tables. */
export class PostgresKnowledgeBase implements KnowledgeBaseIndex {
  readonly engine = 'postgres';
  readonly where: string;
  private readonly t: Tables;
  private pool: pg.Pool | undefined;
  private ready: Promise<pg.Pool> | undefined;
  /** Writers of this process take turns rather than waiting on each other's lock. */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly settings: PostgresSettings) {
    this.t = tablesOf(settings.tablePrefix);
    this.where = describePostgresUrl(settings.url, settings.tablePrefix);
  }

  /** The pool, with the tables created on first use. */
  private open(): Promise<pg.Pool> {
    this.ready ??= (async () => {
      // Loaded when an index opens: the embedded engine's users need no driver.
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
      const { Pool } = require('pg') as typeof pg;
      const pool = new Pool({
        connectionString: this.settings.url,
        max: this.settings.poolSize,
        application_name: APPLICATION_NAME,
        // A CLI command ends when its work does, without waiting for idle connections to time out.
        allowExitOnIdle: true,
      });
      // An idle client's error (server restart) must not crash the worker; the next query reconnects.
      pool.on('error', () => undefined);
      this.pool = pool;
      await ensureSchema(pool, this.t, this.where);
      return pool;
    })().catch(async (err: unknown) => {
      const pool = this.pool;
      this.ready = undefined;
      this.pool = undefined;
      await pool?.end().catch(() => undefined);
      throw this.explain(err);
    });
    return this.ready;
  }

  /**
   * A driver error as a {@link KnowledgeBaseDatabaseError} that says where and whether retrying
   * can help; any other error (a cancellation, the embedding provider's) passes unchanged.
   */
  private explain(err: unknown): unknown {
    // Duck-typed: socket errors may come from another realm (a test sandbox), failing instanceof.
    if (typeof err !== 'object' || err === null || err instanceof KnowledgeBaseDatabaseError) return err;
    const { code, message: said } = err as { code?: unknown; message?: unknown };
    if (typeof said !== 'string') return err;
    const fromServer = 'severity' in err && typeof code === 'string';
    const fromSocket = typeof code === 'string' && /^E[A-Z]+$/.test(code);
    if (!fromServer && !fromSocket) return err;
    // Wrong password or role, no such database, no privilege: the settings need fixing.
    const settings = fromServer && (code.startsWith('28') || code === '3D000' || code === '42501');
    const message = said.split(this.settings.url).join('[url]');
    return new KnowledgeBaseDatabaseError(
      `The knowledge base in ${this.where} failed: ${message}` +
        (settings ? "; check search.knowledgeBase.url and the role's privileges" : ''),
      !settings,
    );
  }

  async stats(): Promise<KnowledgeBaseStats> {
    const pool = await this.open();
    const r = await pool.query<KnowledgeBaseStats>(
      `SELECT documents::float8 AS documents, chunks::float8 AS chunks FROM ${this.t.meta}`,
    );
    return r.rows[0] ?? { documents: 0, chunks: 0 };
  }

  async search(query: string, limit: number, opts: SearchOptions = {}): Promise<KnowledgeBaseHit[]> {
    const pool = await this.open();
    try {
      return await searchPostgres(pool, this.t, query, limit, this.settings.embedder, opts);
    } catch (err) {
      throw this.explain(err);
    }
  }

  async documents(): Promise<DocumentSummary[]> {
    const pool = await this.open();
    const r = await pool.query<DocumentSummary>(
      `SELECT path, filename, title, chunks FROM ${this.t.documents} ORDER BY path`,
    );
    return r.rows;
  }

  write<T>(fn: (w: KnowledgeBaseWriter) => Promise<T>, opts: { signal?: AbortSignal } = {}): Promise<T> {
    const run = this.chain.then(() => this.writeNow(fn, opts.signal));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async writeNow<T>(fn: (w: KnowledgeBaseWriter) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const pool = await this.open();
    const client = await pool.connect();
    const [k1, k2] = lockKeys(this.t.prefix, 'writer');
    let broken = false;
    try {
      await this.lock(client, k1, k2, signal);
      try {
        return await fn(new PostgresWriter(client, this.t, this.settings.embedder));
      } finally {
        await client.query('SELECT pg_advisory_unlock($1, $2)', [k1, k2]).catch(() => {
          // The session ends with the client below, and its lock with it.
          broken = true;
        });
      }
    } catch (err) {
      broken ||= !(err instanceof KnowledgeBaseBusyError);
      throw this.explain(err);
    } finally {
      client.release(broken ? true : undefined);
    }
  }

  /** Takes the writer lock, waiting up to the lock timeout for another process to finish. */
  private async lock(client: pg.PoolClient, k1: number, k2: number, signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + this.settings.lockTimeoutMs;
    for (;;) {
      const r = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [k1, k2]);
      if (r.rows[0]?.ok) return;
      if (Date.now() >= deadline)
        throw new KnowledgeBaseBusyError(await this.holder(client, k1, k2), this.where);
      await sleep(LOCK_POLL_MS, undefined, signal ? { signal } : {});
    }
  }

  /** Who holds the writer lock: the process and host its application name gives, else the session. */
  private async holder(client: pg.PoolClient, k1: number, k2: number): Promise<string> {
    const r = await client.query<{ pid: number; app: string | null }>(
      `SELECT a.pid, a.application_name AS app
         FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1::bigint::oid
          AND l.objid = $2::bigint::oid AND l.objsubid = 2`,
      [k1, k2],
    );
    const row = r.rows[0];
    if (!row) return 'another process';
    const m = /^durable-agent kb: (.+)$/.exec(row.app ?? '');
    return m?.[1] ?? `PostgreSQL session ${row.pid}${row.app ? ` (${row.app})` : ''}`;
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.ready = undefined;
    this.pool = undefined;
    await pool?.end();
  }
}
