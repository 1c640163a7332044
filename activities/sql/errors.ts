import { ApplicationFailure } from '@temporalio/common';
import type { SqlErrorType } from '../../shared/tools/sql';
import { NON_RETRYABLE_SQL_ERRORS } from '../../shared/tools/sql';

/** A SQL failure of one of the closed set of types; retryable or not according to its type. */
export function sqlFailure(type: SqlErrorType, message: string): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: (NON_RETRYABLE_SQL_ERRORS as readonly string[]).includes(type),
  });
}

/** Thrown by an engine when a session ran past its time limit (the engine has already stopped it). */
export class SqlTimeoutError extends Error {
  override readonly name = 'SqlTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`the statement ran longer than ${timeoutMs} ms`);
  }
}

/** Thrown by an engine when a session received more than its byte budget (the engine has stopped it). */
export class SqlResultTooLargeError extends Error {
  override readonly name = 'SqlResultTooLargeError';
  constructor(readonly budgetBytes: number) {
    super(`the result was larger than ${budgetBytes} bytes`);
  }
}

/** Thrown by an engine when it could not get a connection (or start its database) at all. */
export class SqlConnectError extends Error {
  override readonly name = 'SqlConnectError';
  constructor(override readonly cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/** What went wrong with a statement, decided from the driver's error. */
export type DbErrorClass =
  /** The statement itself: syntax, unknown column, constraint, read-only violation. The model can fix it. */
  | 'statement'
  /** The time limit cancelled it. The model can narrow the query. */
  | 'timeout'
  /** Deadlocks, serialization failures, dropped connections: retrying the activity may succeed. */
  | 'transient'
  /** Wrong credentials or no such database/role: final. */
  | 'auth'
  /** The server cannot be reached: final (the connection is misconfigured or down). */
  | 'connection';

/** The fields pg, PGlite and mysql2 put on their errors (all optional). */
interface DriverError {
  message?: string;
  code?: string | number;
  errno?: number;
  sqlState?: string;
  position?: string;
  hint?: string;
  detail?: string;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'PROTOCOL_SEQUENCE_TIMEOUT',
]);
const DROPPED_CODES = new Set(['ECONNRESET', 'EPIPE', 'PROTOCOL_CONNECTION_LOST', 'ER_SERVER_SHUTDOWN']);

/** SQLSTATE of a Postgres/PGlite error, or MySQL's SQLSTATE, when the driver gives one. */
function sqlState(e: DriverError): string | undefined {
  if (typeof e.sqlState === 'string') return e.sqlState;
  if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
  return undefined;
}

/** Sorts a driver error into what the tool does with it. */
export function classifyDbError(err: unknown): DbErrorClass {
  if (err instanceof SqlTimeoutError) return 'timeout';
  const e = (err ?? {}) as DriverError;
  const state = sqlState(e);
  const code = typeof e.code === 'string' ? e.code : '';
  // MariaDB max_statement_time (1969) and MySQL max_execution_time (3024); Postgres query_canceled.
  if (e.errno === 1969 || e.errno === 3024 || state === '57014') return 'timeout';
  if (
    state === '28P01' ||
    state === '28000' ||
    state === '3D000' ||
    e.errno === 1045 ||
    e.errno === 1044 ||
    e.errno === 1049 ||
    e.errno === 1698
  ) {
    return 'auth';
  }
  if (NETWORK_CODES.has(code)) return 'connection';
  if (
    state === '40001' ||
    state === '40P01' ||
    e.errno === 1213 ||
    e.errno === 1205 ||
    DROPPED_CODES.has(code) ||
    state?.startsWith('08') ||
    state === '57P01' ||
    /Connection terminated|connection is closed|Can't add new command when connection is in closed state/i.test(
      e.message ?? '',
    )
  ) {
    return 'transient';
  }
  return 'statement';
}

/** The server's message with its SQLSTATE, hint and detail: what the model needs to correct a statement. */
export function describeDbError(err: unknown): string {
  const e = (err ?? {}) as DriverError;
  const state = sqlState(e);
  const parts = [String(e.message ?? err).trim()];
  if (e.detail) parts.push(`Detail: ${e.detail}`);
  if (e.hint) parts.push(`Hint: ${e.hint}`);
  if (e.position) parts.push(`At character ${e.position}.`);
  return `${parts.join(' ')}${state ? ` (SQLSTATE ${state})` : ''}`;
}

/**
 * Removes the URL and password of a connection from text that came from a driver, so it can go into
 * messages, logs and workflow history.
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of [...secrets].filter(Boolean).sort((a, b) => b.length - a.length))
    out = out.split(s).join('***');
  return out;
}

/** The password and URL inside a connection URL, for {@link redact}. */
export function secretsOfUrl(url: string): string[] {
  const secrets = [url];
  try {
    const parsed = new URL(url);
    if (parsed.password) secrets.push(parsed.password, decodeURIComponent(parsed.password));
  } catch {
    // An unparseable URL is reported by the driver; the whole string is already a secret.
  }
  return secrets;
}

/**
 * The final failure for a connection or login problem, naming the connection (never its URL or
 * password) and what to check.
 */
export function connectionFailure(
  name: string,
  engine: string,
  err: unknown,
  secrets: readonly string[],
): ApplicationFailure {
  const cls = classifyDbError(err);
  const e = (err ?? {}) as DriverError;
  const said = redact(String(e.message ?? err), secrets);
  const code = typeof e.code === 'string' ? ` (${e.code})` : '';
  if (cls === 'auth') {
    return sqlFailure(
      'SqlAuthFailed',
      `Database connection "${name}" (${engine}) refused the login: ${said}${code}. Check the user, password and database name configured for this connection.`,
    );
  }
  return sqlFailure(
    'SqlConnectionFailed',
    `Could not connect to database connection "${name}" (${engine}): ${said}${code}. Check that the server is running and the configured host and port.`,
  );
}
