import mysql from 'mysql2';
import type { FieldPacket, PoolConnection, ResultSetHeader } from 'mysql2';
import type { MysqlConnectionConfig } from '../config';
import { SqlConnectError } from '../errors';
import type { Socket } from 'node:net';
import { SIZE_BUDGETS } from '../../../shared/temporal-limits';
import { withDeadline } from './deadline';
import { watchWireBytes } from './wire-budget';
import type { SessionOptions, SqlEngine, SqlSession, StatementResult } from './types';

/** Extra time the server gets to honour its own max_statement_time before the client drops the connection. */
const BACKSTOP_GRACE_MS = 2000;

/**
 * Runs one statement as a server-side prepared statement (the binary protocol: values are bound,
 * never interpolated, and only one statement can be prepared), streaming rows so that at most
 * `keepRows` are held in memory however many the server sends.
 */
export function mysqlStatement(
  conn: PoolConnection,
  sql: string,
  params: readonly unknown[] = [],
  keepRows = Number.POSITIVE_INFINITY,
): Promise<StatementResult> {
  return new Promise((resolve, reject) => {
    const result: StatementResult = { columns: [], rows: [], rowCount: 0 };
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      reject(err instanceof Error ? err : new Error(String(err)));
    };
    let cmd;
    try {
      cmd = conn.execute({ sql, values: [...params], rowsAsArray: true });
    } catch (err) {
      // mysql2 throws synchronously for values it cannot bind (undefined, functions).
      fail(err);
      return;
    }
    // Statements without a result set (INSERT, UPDATE) emit `fields` with undefined.
    cmd.on('fields', (fields: FieldPacket[] | undefined) => {
      result.columns = (fields ?? []).map((f) => f.name);
    });
    cmd.on('result', (row: unknown[] | ResultSetHeader) => {
      if (!Array.isArray(row)) {
        result.affectedRows = row.affectedRows;
        return;
      }
      result.rowCount += 1;
      if (result.rows.length < keepRows) result.rows.push(row);
    });
    cmd.on('error', fail);
    cmd.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(result);
    });
  });
}

/** Runs one fixed statement of the tool's own (transaction control, session settings) as text. */
function mysqlCommand(conn: PoolConnection, sql: string): Promise<void> {
  return new Promise((resolve, reject) => conn.query(sql, (err) => (err ? reject(err) : resolve())));
}

/** A MySQL or MariaDB connection pool (`mysql2`). */
export class MysqlEngine implements SqlEngine {
  readonly kind = 'mysql';
  readonly dialect = 'mysql';
  private readonly pool: mysql.Pool;
  private closed = false;

  constructor(config: MysqlConnectionConfig) {
    this.pool = mysql.createPool({
      uri: config.url,
      connectionLimit: config.poolSize,
      // The guard allows one statement; the driver must not even be able to send two.
      multipleStatements: false,
      // Dates as the server's text, so no time zone is applied on the way to the model.
      dateStrings: true,
      supportBigNumbers: true,
      maxPreparedStatements: 200,
      connectTimeout: 10_000,
    });
    if (!config.writable) {
      // Every transaction on a read-only connection is read-only, even one the tool did not start.
      this.pool.on('connection', (conn) => {
        conn.query('SET SESSION TRANSACTION READ ONLY');
      });
    }
  }

  async session<T>(fn: (s: SqlSession) => Promise<T>, opts: SessionOptions): Promise<T> {
    const conn = await new Promise<PoolConnection>((resolve, reject) =>
      this.pool.getConnection((err, c) => (err ? reject(new SqlConnectError(err)) : resolve(c))),
    );
    let destroyed = false;
    const destroy = () => {
      if (destroyed) return;
      destroyed = true;
      conn.destroy();
    };
    // Stops a statement whose rows (or one huge value) would not fit the worker's byte budget.
    const wire = watchWireBytes(
      (conn as unknown as { connection?: { stream?: Socket }; stream?: Socket }).stream ??
        (conn as unknown as { connection?: { stream?: Socket } }).connection?.stream,
      SIZE_BUDGETS.sqlWireBytes,
      opts.signal,
    );
    const session: SqlSession = {
      query: (sql, params, keepRows) => mysqlStatement(conn, sql, params, keepRows),
      command: (sql) => mysqlCommand(conn, sql),
    };
    try {
      const result = await withDeadline(fn(session), {
        ms: opts.timeoutMs + BACKSTOP_GRACE_MS,
        limitMs: opts.timeoutMs,
        signal: wire.signal,
        stop: destroy,
      });
      if (!destroyed) conn.release();
      wire.stop();
      return result;
    } catch (err) {
      wire.stop();
      // The session may have left a transaction open (its ROLLBACK failed): never reuse the connection.
      destroy();
      throw err;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await new Promise<void>((resolve) => this.pool.end(() => resolve()));
  }
}
