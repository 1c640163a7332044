import { checkMysql } from './guard/mysql';
import { checkPostgres } from './guard/postgres';
import type { CheckSqlInput, GuardVerdict } from './guard/verdict';
import { MAX_SQL_LENGTH, RefusalSignal, refuse, unanalysable } from './guard/verdict';

export { MAX_SQL_LENGTH, REFUSAL_CODES } from './guard/verdict';
export type { CheckSqlInput, GuardVerdict, RefusalCode, SqlDialect, StatementKind } from './guard/verdict';

/**
 * Decides whether one SQL statement may run, from the parse tree of the dialect's SQL parser rather
 * than from regular expressions.
 *
 * - Unparseable text, more than one statement, and text the parser and server could read differently
 *   are refused.
 * - Without `allowWrites`, only statements the tree proves read-only pass (SELECT, VALUES, SHOW,
 *   DESCRIBE, EXPLAIN, WITH … SELECT) — the whole tree is walked, so a data-modifying CTE, a locking
 *   clause, SELECT … INTO or a dangerous function anywhere refuses the statement.
 * - With `allowWrites`, INSERT/UPDATE/DELETE also pass; UPDATE and DELETE need a WHERE that filters on
 *   a column of the target table.
 * - DDL, privileges, files, procedures, session and transaction control, locks and maintenance are
 *   always refused. Unknown node types are refused too: the guard allow-lists what it understands.
 *
 * The guard is one layer: the tool still runs reads in a READ ONLY transaction, with a timeout, as a
 * least-privilege role, and sends values as bound parameters. Never throws for any SQL text; an
 * unknown dialect is a configuration bug and throws a TypeError.
 */
export async function checkSql(input: CheckSqlInput): Promise<GuardVerdict> {
  const { dialect, sql, allowWrites } = input;
  if (sql.length > MAX_SQL_LENGTH) {
    return refuse(
      'statement_too_long',
      `The statement is ${sql.length} characters; the limit is ${MAX_SQL_LENGTH}. Pass large values as bound parameters and keep the SQL itself short.`,
    );
  }
  // Both parsers read C strings and stop at NUL, while a server may not; what follows is invisible.
  if (sql.includes('\u0000')) {
    return refuse(
      'ambiguous_syntax',
      'The statement contains a NUL character, which hides everything after it from the parser. Remove it; pass binary data as a bound parameter.',
    );
  }
  if (sql.trim() === '') return refuse('empty_statement', 'The statement is empty. Send one SQL statement.');
  if (dialect !== 'postgres' && dialect !== 'mysql') {
    // A configuration bug, not a statement to judge: fail loudly rather than guess a grammar.
    throw new TypeError(`Unknown SQL dialect ${JSON.stringify(dialect satisfies never)}`);
  }
  try {
    return dialect === 'postgres' ? await checkPostgres(sql, allowWrites) : checkMysql(sql, allowWrites);
  } catch (err) {
    if (err instanceof RefusalSignal) return err.refusal;
    return unanalysable(err);
  }
}
