/** SQL dialects the guard understands. MariaDB is checked with the MySQL rules. */
export type SqlDialect = 'postgres' | 'mysql';

/**
 * Every reason the guard can refuse a statement. A closed list so callers (the SQL tool, tests,
 * dashboards) can switch on it exhaustively; the human-readable `reason` carries the detail.
 */
export const REFUSAL_CODES = [
  /** The dialect's parser rejected the text; the reason carries the parser's message. */
  'parse_error',
  /** Nothing but whitespace, comments or semicolons. */
  'empty_statement',
  /** More than one statement: stacking (`COMMIT; DROP …`) is the classic way out of a sandbox. */
  'multiple_statements',
  /** Longer than {@link MAX_SQL_LENGTH}: bounds parser time and memory. */
  'statement_too_long',
  /** MySQL/MariaDB `/*! … *\/`, `/*M! … *\/` or `/*+ … *\/`: code the server runs but a parser skips. */
  'executable_comment',
  /** Text the server and the parser could read differently (NUL bytes, `--x`, backslashes in strings…). */
  'ambiguous_syntax',
  /** CREATE, ALTER, DROP, TRUNCATE, SELECT … INTO a new table and other schema changes. */
  'ddl',
  /** GRANT, REVOKE, and creating, altering or dropping users and roles. */
  'access_control',
  /** Reading or writing server files or programs: COPY, INTO OUTFILE, LOAD DATA, LOAD. */
  'file_access',
  /** Running code other than the statement itself: DO, CALL, EXECUTE, PREPARE, cursors, xp_/sp_. */
  'procedural',
  /** Changing session state: SET, RESET, USE, user variable assignment, LISTEN/NOTIFY. */
  'session_state',
  /** BEGIN, COMMIT, ROLLBACK, SAVEPOINT: the tool owns the transaction. */
  'transaction_control',
  /** Row or table locks: LOCK TABLE, SELECT … FOR UPDATE/SHARE. */
  'locking',
  /** VACUUM, ANALYZE, REINDEX, CHECKPOINT, ALTER SYSTEM, KILL, FLUSH and other server administration. */
  'maintenance',
  /** A function call with side effects outside the query: sleeping, files, locks, other sessions, SQL text. */
  'dangerous_function',
  /** Catalogs, settings and variables only a privileged role should read: password hashes, server files, other sessions. */
  'privileged_catalog',
  /** INSERT/UPDATE/DELETE (anywhere in the tree) on a connection that is not configured writable. */
  'write_not_allowed',
  /** UPDATE/DELETE without a WHERE clause that mentions a column of the target table. */
  'missing_where',
  /** UPDATE/DELETE whose WHERE can be always true (`x = x`, an OR branch without a target column). */
  'tautological_where',
  /** A statement kind that is not on the allow-list (MERGE, REPLACE, HANDLER, …). */
  'unsupported_statement',
  /** A construct inside an allowed statement that the guard does not know, so cannot prove safe. */
  'unsupported_syntax',
] as const;

/** One of {@link REFUSAL_CODES}. */
export type RefusalCode = (typeof REFUSAL_CODES)[number];

/** Whether an allowed statement only reads, or may change data (then it needs a writable connection). */
export type StatementKind = 'read' | 'write';

/** The guard's decision for one SQL text. */
export type GuardVerdict =
  | {
      allowed: true;
      /** `read` statements can run in a READ ONLY transaction; `write` ones need a writable connection. */
      kind: StatementKind;
      /** Upper-case statement name, e.g. `SELECT`, `EXPLAIN`, `UPDATE`. */
      statementType: string;
    }
  | {
      allowed: false;
      code: RefusalCode;
      /** Says what was refused, why, and what to do instead; written for the model to read. */
      reason: string;
    };

/** A refused verdict. */
export type Refusal = Extract<GuardVerdict, { allowed: false }>;

/** Input of {@link checkSql}. */
export interface CheckSqlInput {
  dialect: SqlDialect;
  /** Exactly one statement; a single trailing semicolon is fine. */
  sql: string;
  /** Whether the connection is configured writable; without it only provably read-only statements pass. */
  allowWrites: boolean;
}

/** Upper bound on statement length, in UTF-16 code units. Agents never need more; parsers are not free. */
export const MAX_SQL_LENGTH = 100_000;

/** Builds a refusal. */
export function refuse(code: RefusalCode, reason: string): Refusal {
  return { allowed: false, code, reason };
}

/**
 * Thrown inside a dialect walker to stop at the first refusal, however deep; `checkSql` catches it
 * and returns its refusal, so it never escapes to callers.
 */
export class RefusalSignal extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.reason);
    this.name = 'RefusalSignal';
  }
}

/** Stops the current walk with a refusal. */
export function stop(code: RefusalCode, reason: string): never {
  throw new RefusalSignal(refuse(code, reason));
}

/**
 * Fails closed when the analysis itself breaks (e.g. a stack overflow on a pathologically nested
 * expression): a statement the guard could not finish reading is not a statement it proved safe.
 */
export function unanalysable(err: unknown): Refusal {
  const detail = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return refuse(
    'unsupported_syntax',
    `The guard could not analyse the statement (${detail}). Simplify it, e.g. with fewer nested expressions.`,
  );
}
