import type { SqlDialect } from '../guard';

/** Rows of one statement, as arrays in column order (duplicate column names stay distinct). */
export interface StatementResult {
  columns: string[];
  /** At most the `keepRows` asked for. */
  rows: unknown[][];
  /** Rows the statement produced, which may be more than `rows` holds. */
  rowCount: number;
  /** Rows inserted, updated or deleted, for writes. */
  affectedRows?: number;
}

/** One connection, held for the length of a session (a transaction). */
export interface SqlSession {
  /**
   * Runs one statement with bound parameters (never interpolated) through the driver's extended /
   * prepared protocol, which also refuses a second statement. Keeps at most `keepRows` rows.
   */
  query(sql: string, params?: readonly unknown[], keepRows?: number): Promise<StatementResult>;
  /** Runs one fixed statement of the tool's own (BEGIN, SET LOCAL, COMMIT…), never model text. */
  command(sql: string): Promise<void>;
}

/** What a session may take, and what the engine enforces on its own. */
export interface SessionOptions {
  /** The statement time limit. The engine stops a session that runs past it (plus a short grace). */
  timeoutMs: number;
  /** Aborts the session like an expired limit (activity cancellation); rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** One named connection: a pool (Postgres, MySQL) or an embedded database (PGlite). */
export interface SqlEngine {
  readonly kind: 'postgres' | 'mysql' | 'pglite';
  readonly dialect: SqlDialect;
  /**
   * Runs `fn` on one connection. Connection and login failures surface as the driver's error (the
   * caller classifies them); a session past its limit is stopped and fails with `SqlTimeoutError`.
   */
  session<T>(fn: (s: SqlSession) => Promise<T>, opts: SessionOptions): Promise<T>;
  /** Closes every connection (or stops the embedded database). Safe to call twice. */
  close(): Promise<void>;
}
