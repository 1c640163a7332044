import type { Refusal } from './verdict';
import { refuse } from './verdict';

/**
 * Scans MySQL text for comments the way the MySQL server does, not the way `node-sql-parser` does,
 * so the guard can refuse text the two would read differently.
 *
 * Why each rule exists (all verified against node-sql-parser 5.4):
 * - `/*! … *\/`, `/*!50000 … *\/` (MySQL) and `/*M! … *\/` (MariaDB) are executed by the server but
 *   skipped as comments by the parser; `/*+ … *\/` optimizer hints can change session variables
 *   (`SET_VAR`) and the statement timeout (`MAX_EXECUTION_TIME`). All are refused.
 * - `--x` (no space) is a comment to the parser but two minus signs to MySQL, which only starts a
 *   comment at `--` followed by whitespace or a control character: `SELECT 1--1` differs.
 * - `#` and `-- ` comments end at `\n` for MySQL, but the parser also ends them at `\r`, so
 *   `DELETE FROM t # \r WHERE id = 1` shows the parser a WHERE the server never sees.
 * - An unterminated `/*` makes the parser read `/` and `*` as operators; the server sees a comment.
 *   Nested `/*` inside a comment is refused too: MySQL versions have differed on nesting.
 * - A backslash inside a quoted string is an escape unless `sql_mode` has NO_BACKSLASH_ESCAPES, and
 *   `"…"` is an identifier under ANSI_QUOTES, where backslashes never escape; the end of the literal,
 *   and so everything after it, depends on server settings the parser cannot know.
 * Ordinary `/* … *\/`, `# …` and `-- …` comments hide nothing and are allowed: agents write them.
 */

/** What {@link scanMysql} found in text it did not refuse. */
export interface MysqlScan {
  /** The text with every comment replaced by one space (executable comments are refused, not kept). */
  withoutComments: string;
  /** Whether anything other than whitespace, comments and semicolons is present. */
  hasContent: boolean;
}

const LINE_BREAKS_PARSER_MAY_HONOUR = /[\r\v\f\u0085\u2028\u2029]/;

/** Scans `sql` with MySQL's comment and quoting rules; returns a refusal when the text is ambiguous. */
export function scanMysql(sql: string): MysqlScan | Refusal {
  let out = '';
  let hasContent = false;
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i];
    const next = sql[i + 1];
    if (c === "'" || c === '"' || c === '`') {
      const end = findQuoteEnd(sql, i);
      if (end === 'backslash') {
        return refuse(
          'ambiguous_syntax',
          `The literal starting ${preview(sql.slice(i, i + 24))} contains a backslash, which MySQL reads as an escape or not depending on sql_mode (NO_BACKSLASH_ESCAPES, ANSI_QUOTES), so where it ends is uncertain. Pass the value as a bound ? parameter instead.`,
        );
      }
      if (end === undefined) {
        return refuse('parse_error', `Unterminated ${c}…${c} at offset ${i}. Close the quote.`);
      }
      out += sql.slice(i, end);
      hasContent = true;
      i = end;
      continue;
    }
    if (c === '/' && next === '*') {
      const body0 = sql[i + 2];
      if (body0 === '!' || body0 === '+' || (body0 === 'M' && sql[i + 3] === '!')) {
        const what = body0 === '+' ? 'an optimizer hint' : 'an executable comment';
        return refuse(
          'executable_comment',
          `${preview(sql.slice(i, i + 24))} is ${what}: MySQL/MariaDB run its content as SQL while parsers skip it as a comment. Write the statement without /*! … */, /*M! … */ or /*+ … */.`,
        );
      }
      const close = sql.indexOf('*/', i + 2);
      if (close < 0) {
        return refuse(
          'ambiguous_syntax',
          `Unterminated /* comment at offset ${i}. Close it with */ or remove it.`,
        );
      }
      if (sql.slice(i + 2, close).includes('/*')) {
        return refuse(
          'ambiguous_syntax',
          `Nested /* inside a comment at offset ${i}; MySQL versions disagree on nesting. Remove it.`,
        );
      }
      out += ' ';
      i = close + 2;
      continue;
    }
    const dashComment = c === '-' && next === '-';
    if (dashComment && i + 2 < n && !isMysqlCommentSpace(sql.charCodeAt(i + 2))) {
      return refuse(
        'ambiguous_syntax',
        `"--" followed by ${JSON.stringify(sql[i + 2])} at offset ${i} is a comment to the parser but a double minus to MySQL. Put a space after -- for a comment, or write - (-x) for arithmetic.`,
      );
    }
    if (c === '#' || dashComment) {
      const lf = sql.indexOf('\n', i);
      const end = lf < 0 ? n : lf;
      // A CR right before the LF is an ordinary Windows line ending; anywhere else it ends the comment
      // for the parser but not for the server.
      const body = sql.slice(i, end).replace(/\r$/, '');
      if (LINE_BREAKS_PARSER_MAY_HONOUR.test(body)) {
        return refuse(
          'ambiguous_syntax',
          `The comment at offset ${i} contains a line break other than \\n; MySQL ends the comment only at \\n, the parser earlier, so they would run different statements. Use plain \\n line breaks.`,
        );
      }
      out += ' ';
      i = end;
      continue;
    }
    if (c !== undefined && !/[\s;]/.test(c)) hasContent = true;
    out += c;
    i += 1;
  }
  return { withoutComments: out, hasContent };
}

/** MySQL starts a `--` comment only when a whitespace or control character follows. */
function isMysqlCommentSpace(code: number): boolean {
  return code <= 0x20 || code === 0x7f;
}

/**
 * Index just past the closing quote (a doubled quote is an escaped quote), `undefined` when the quote
 * never closes, or `'backslash'` when a string (not a backtick identifier) contains a backslash.
 */
function findQuoteEnd(sql: string, start: number): number | 'backslash' | undefined {
  const q = sql[start];
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i];
    if (c === '\\' && q !== '`') return 'backslash';
    if (c === q) {
      if (sql[i + 1] === q) {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i += 1;
  }
  return undefined;
}

function preview(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}
