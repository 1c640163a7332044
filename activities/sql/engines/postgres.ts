import pg from 'pg';
import type { PostgresConnectionConfig } from '../config';
import { SqlConnectError } from '../errors';
import type { Socket } from 'node:net';
import { SIZE_BUDGETS } from '../../../shared/temporal-limits';
import { withDeadline } from './deadline';
import { watchWireBytes } from './wire-budget';
import type { SessionOptions, SqlEngine, SqlSession, StatementResult } from './types';

/**
 * Date and time types stay the server's text: converting them to JS Dates would move a
 * `timestamp without time zone` into the worker's time zone and change what the model reads.
 */
const TEXT_TYPES = new Set([1082, 1083, 1114, 1184, 1266]);

/** pg's own parser lookup, typed by what it returns. */
const builtinParser = pg.types.getTypeParser as (
  oid: number,
  format?: 'text' | 'binary',
) => (value: string) => unknown;

const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    TEXT_TYPES.has(oid)
      ? (value: string) => value
      : builtinParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** Extra time the server gets to honour its own statement_timeout before the client drops the connection. */
const BACKSTOP_GRACE_MS = 2000;

/** pg's query config plus `queryMode`, which pg supports but its type definitions omit. */
interface ExtendedQueryConfig extends pg.QueryArrayConfig {
  queryMode: 'extended';
}

/** Runs one statement on a pg client; shared with the benchmark's raw baseline. */
export async function pgStatement(
  client: pg.PoolClient,
  sql: string,
  params: readonly unknown[] = [],
  keepRows = Number.POSITIVE_INFINITY,
): Promise<StatementResult> {
  const config: ExtendedQueryConfig = {
    text: sql,
    values: [...params],
    rowMode: 'array',
    // Always the extended protocol, even without parameters: it runs exactly one statement, so the
    // server itself refuses stacked statements whatever the guard decided.
    queryMode: 'extended',
  };
  const res = await client.query(config);
  const rows = (res.rows ?? []) as unknown[][];
  return {
    columns: (res.fields ?? []).map((f) => f.name),
    rows: rows.length > keepRows ? rows.slice(0, keepRows) : rows,
    rowCount: rows.length,
    ...(res.command === 'INSERT' ||
    res.command === 'UPDATE' ||
    res.command === 'DELETE' ||
    res.command === 'MERGE'
      ? { affectedRows: res.rowCount ?? 0 }
      : {}),
  };
}

/** A PostgreSQL connection pool (`pg`). */
export class PostgresEngine implements SqlEngine {
  readonly kind = 'postgres';
  readonly dialect = 'postgres';
  private readonly pool: pg.Pool;

  constructor(config: PostgresConnectionConfig) {
    this.pool = new pg.Pool({
      connectionString: config.url,
      max: config.poolSize,
      ...(config.schema ? { options: `-c search_path=${config.schema}` } : {}),
      types,
      connectionTimeoutMillis: 10_000,
      idleTimeoutMillis: 30_000,
      application_name: 'durable-agent',
      // Idle connections alone must not keep a stopped worker's process alive.
      allowExitOnIdle: true,
    });
    // An idle client losing its connection emits on the pool; unhandled, that would crash the worker.
    this.pool.on('error', () => undefined);
  }

  async session<T>(fn: (s: SqlSession) => Promise<T>, opts: SessionOptions): Promise<T> {
    const client = await this.pool.connect().catch((err: unknown) => {
      throw new SqlConnectError(err);
    });
    let destroyed = false;
    const destroy = (why: Error) => {
      if (destroyed) return;
      destroyed = true;
      client.release(why);
    };
    // Stops a statement whose rows (or one huge value) would not fit the worker's byte budget.
    const wire = watchWireBytes(
      (client as unknown as { connection?: { stream?: Socket } }).connection?.stream,
      SIZE_BUDGETS.sqlWireBytes,
      opts.signal,
    );
    const session: SqlSession = {
      query: (sql, params, keepRows) => pgStatement(client, sql, params, keepRows),
      command: async (sql) => {
        await client.query(sql);
      },
    };
    try {
      const result = await withDeadline(fn(session), {
        ms: opts.timeoutMs + BACKSTOP_GRACE_MS,
        limitMs: opts.timeoutMs,
        signal: wire.signal,
        stop: () => destroy(new Error('statement time limit exceeded')),
      });
      if (!destroyed) client.release();
      wire.stop();
      return result;
    } catch (err) {
      wire.stop();
      // The session may have left a transaction open (its ROLLBACK failed): never reuse the connection.
      destroy(err instanceof Error ? err : new Error(String(err)));
      throw err;
    }
  }

  async close(): Promise<void> {
    if (!this.pool.ended) await this.pool.end();
  }
}
