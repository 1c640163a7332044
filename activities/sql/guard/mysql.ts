import { Parser } from 'node-sql-parser/build/mysql';
import { deniedFunctionReason } from './functions';
import { deniedMysqlTable, deniedMysqlVariable } from './privileged';
import { scanMysql } from './mysql-lexer';
import type { GuardVerdict, RefusalCode } from './verdict';
import { refuse, stop } from './verdict';

/**
 * The MySQL/MariaDB half of the guard, on `node-sql-parser`'s MySQL grammar.
 *
 * node-sql-parser is not the server's own parser, so two extra defences sit in front of the AST walk:
 * the text is scanned with MySQL's comment rules ({@link scanMysql}), and the parser must produce the
 * same tree for the text with those comments removed; any difference means the parser and the server
 * disagree on what is code. Constructs the grammar does not know are refused as parse errors, which
 * fails closed. Inside the tree, every object's `type` must be on an allow-list.
 */

type Obj = Record<string, unknown>;

const parser = new Parser();
const PARSE_OPTIONS = { database: 'MySQL' } as const;

/** Expression and clause `type` values that only compute values. Anything else is refused. */
const EXPRESSION_TYPES = new Set([
  'column_ref',
  'number',
  'bigint',
  'bool',
  'null',
  'star',
  'single_quote_string',
  'double_quote_string',
  'natural_string',
  'hex_string',
  'full_hex_string',
  'bit_string',
  'date',
  'time',
  'timestamp',
  'datetime',
  'binary_expr',
  'unary_expr',
  'expr_list',
  'case',
  'when',
  'else',
  'cast',
  'datatype',
  'interval',
  'extract',
  'collate',
  'window',
  'function',
  'aggr_func',
  'origin',
  'fulltext_search',
  // LIKE … ESCAPE '!'
  'ESCAPE',
  'default',
  'dual',
  'values',
  // ORDER BY items reuse the `type` key for their direction.
  'ASC',
  'DESC',
]);

/** Keys a SELECT may carry; a new clause in a parser upgrade is refused until reviewed. */
const SELECT_KEYS = new Set([
  'with',
  'type',
  'options',
  'distinct',
  'columns',
  'into',
  'from',
  'where',
  'groupby',
  'having',
  'orderby',
  'limit',
  'locking_read',
  'window',
  'collate',
  '_next',
  'set_op',
  'parentheses',
  '_parentheses',
  'parentheses_symbol',
  // ORDER BY and LIMIT applying to a whole parenthesised UNION.
  '_orderby',
  '_limit',
]);

/** SHOW forms that only describe the schema the role can already see. */
const SHOW_ALLOWED = new Set(['tables', 'columns', 'index', 'databases', 'collation', 'character']);

/** First keywords of statements node-sql-parser cannot parse, for a precise refusal code. */
const LEADING_KEYWORD_CODES: ReadonlyMap<string, RefusalCode> = new Map([
  ['exec', 'procedural'],
  ['execute', 'procedural'],
  ['do', 'procedural'],
  ['prepare', 'procedural'],
  ['deallocate', 'procedural'],
  ['handler', 'procedural'],
  ['call', 'procedural'],
  ['create', 'ddl'],
  ['alter', 'ddl'],
  ['drop', 'ddl'],
  ['truncate', 'ddl'],
  ['rename', 'ddl'],
  ['grant', 'access_control'],
  ['revoke', 'access_control'],
  ['kill', 'maintenance'],
  ['shutdown', 'maintenance'],
  ['install', 'maintenance'],
  ['uninstall', 'maintenance'],
  ['flush', 'maintenance'],
  ['reset', 'maintenance'],
  ['purge', 'maintenance'],
  ['change', 'maintenance'],
  ['optimize', 'maintenance'],
  ['analyze', 'maintenance'],
  ['check', 'maintenance'],
  ['repair', 'maintenance'],
  ['set', 'session_state'],
  ['use', 'session_state'],
  ['begin', 'transaction_control'],
  ['start', 'transaction_control'],
  ['commit', 'transaction_control'],
  ['rollback', 'transaction_control'],
  ['savepoint', 'transaction_control'],
  ['release', 'transaction_control'],
  ['xa', 'transaction_control'],
  ['lock', 'locking'],
  ['unlock', 'locking'],
  ['load', 'file_access'],
]);

/**
 * Checks one MySQL/MariaDB statement. Refusals found deep in the walk are thrown by {@link stop} and
 * turned into verdicts by `checkSql`.
 */
export function checkMysql(sql: string, allowWrites: boolean): GuardVerdict {
  const scan = scanMysql(sql);
  if ('allowed' in scan) return scan;
  if (!scan.hasContent) return refuse('empty_statement', 'The statement is empty. Send one SQL statement.');

  let ast: unknown;
  try {
    ast = parser.astify(sql, PARSE_OPTIONS);
  } catch (err) {
    return refuseUnparseable(scan.withoutComments, err);
  }
  const statements = flattenStatements(ast);
  if (statements.length === 0) {
    return refuse('empty_statement', 'The statement is empty. Send one SQL statement.');
  }
  if (statements.length > 1) {
    const names = statements.map((s) => text(s.type).toUpperCase()).join(', ');
    return refuse(
      'multiple_statements',
      `Found ${statements.length} statements (${names}); the tool runs exactly one per call. Send them as separate calls, without the semicolon between them.`,
    );
  }

  // The parser's reading must not depend on comments: if it does, it disagrees with the server.
  let stripped: unknown;
  try {
    stripped = parser.astify(scan.withoutComments, PARSE_OPTIONS);
  } catch {
    stripped = undefined;
  }
  if (JSON.stringify(flattenStatements(stripped)) !== JSON.stringify(statements)) {
    return refuse(
      'ambiguous_syntax',
      'The statement reads differently once comments are removed the way MySQL removes them, so the parser and the server would disagree on what runs. Remove the comments.',
    );
  }

  return new MysqlWalker(allowWrites).topLevel(statements[0] as Obj);
}

function flattenStatements(ast: unknown): Obj[] {
  if (Array.isArray(ast)) return ast.flatMap(flattenStatements);
  return isObj(ast) ? [ast] : [];
}

function refuseUnparseable(withoutComments: string, err: unknown): GuardVerdict {
  const message = (err instanceof Error ? err.message : String(err)).replace(/\.$/, '');
  const short = message.length > 300 ? `${message.slice(0, 300)}…` : message;
  const words = withoutComments
    .trim()
    .toLowerCase()
    .split(/[^a-z_]+/);
  const first = words[0] ?? '';
  let code = LEADING_KEYWORD_CODES.get(first);
  if (code === 'ddl' && (words[1] === 'user' || words[1] === 'role')) code = 'access_control';
  if (code) {
    return refuse(
      code,
      `${first.toUpperCase()} statements are not allowed (nor understood by the guard's MySQL parser: ${short}). Only SELECT, SHOW, DESCRIBE and EXPLAIN SELECT run, plus INSERT/UPDATE/DELETE on writable connections.`,
    );
  }
  return refuse(
    'parse_error',
    `The MySQL parser could not read the statement: ${short}. Fix the syntax; note the guard's parser does not know every MySQL extension, so prefer standard SQL.`,
  );
}

/** The value if it is a string, else empty: AST fields are untyped JSON. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Walks one statement, refusing (through {@link stop}) at the first unsafe construct. */
class MysqlWalker {
  private wrote = false;

  constructor(private readonly allowWrites: boolean) {}

  topLevel(node: Obj): GuardVerdict {
    const type = text(node.type);
    switch (type) {
      case 'select':
        this.visit(node);
        return { allowed: true, kind: 'read', statementType: 'SELECT' };
      case 'explain':
        // The grammar only accepts EXPLAIN SELECT, which plans without running.
        if (!isObj(node.expr) || node.expr.type !== 'select') {
          stop('unsupported_statement', 'Only EXPLAIN SELECT is allowed.');
        }
        this.visit(node.expr);
        return { allowed: true, kind: 'read', statementType: 'EXPLAIN' };
      case 'desc':
        if (typeof node.table !== 'string') stop('unsupported_syntax', 'DESCRIBE needs a table name.');
        checkTable(node.db, node.table);
        return { allowed: true, kind: 'read', statementType: 'DESCRIBE' };
      case 'show':
        return this.show(node);
      case 'insert':
      case 'update':
      case 'delete':
        this.visit(node);
        return { allowed: true, kind: 'write', statementType: type.toUpperCase() };
      default:
        return refusedStatement(node);
    }
  }

  private show(node: Obj): GuardVerdict {
    const keyword = text(node.keyword).toLowerCase();
    const suffix = typeof node.suffix === 'string' ? node.suffix.toLowerCase() : undefined;
    const ok =
      SHOW_ALLOWED.has(keyword) || (keyword === 'create' && (suffix === 'table' || suffix === 'view'));
    if (!ok) {
      stop(
        'unsupported_statement',
        `SHOW ${keyword.toUpperCase()}${suffix ? ` ${suffix.toUpperCase()}` : ''} is not available. Use SHOW TABLES, SHOW COLUMNS FROM t, SHOW INDEX FROM t, SHOW CREATE TABLE t, or query information_schema.`,
      );
    }
    this.visitChildren(node);
    return { allowed: true, kind: 'read', statementType: 'SHOW' };
  }

  private visit(value: unknown): void {
    if (Array.isArray(value)) {
      for (const item of value) this.visit(item);
      return;
    }
    if (!isObj(value)) return;
    const type = value.type;
    if (typeof type === 'string') this.checkTyped(type, value);
    else if (typeof value.table === 'string' && 'db' in value) checkTable(value.db, value.table);
    this.visitChildren(value);
  }

  private visitChildren(node: Obj): void {
    for (const child of Object.values(node)) this.visit(child);
  }

  private checkTyped(type: string, node: Obj): void {
    switch (type) {
      case 'select':
        return this.checkSelect(node);
      case 'insert':
      case 'update':
      case 'delete':
        return this.checkWrite(type, node);
      case 'assign':
        return stop(
          'session_state',
          'Assigning a user variable (@v := …) changes session state. Compute the value in the query itself, e.g. with a subquery or window function.',
        );
      case 'function':
      case 'aggr_func':
        return checkFunction(node);
      case 'var':
        if (node.prefix === '@@') {
          const reason = deniedMysqlVariable(text(node.name));
          if (reason)
            stop('privileged_catalog', `@@${text(node.name)} ${reason}, which the SQL tool does not allow.`);
        }
        // Reading @user and @@system variables is harmless; `$name` is an identifier to MySQL, not a placeholder.
        if (node.prefix !== '@' && node.prefix !== '@@') {
          stop(
            'unsupported_syntax',
            `${text(node.prefix)}${String(node.name)} is not a MySQL placeholder. Use ? placeholders for bound parameters.`,
          );
        }
        return;
      case 'param':
        return stop(
          'unsupported_syntax',
          `Named placeholders (:${text(node.value)}) are not supported. Use ? placeholders for bound parameters.`,
        );
      case 'origin':
        // Raw keywords the grammar did not model further; only words and the ? placeholder are expected.
        if (typeof node.value !== 'string' || !(node.value === '?' || /^[A-Za-z_ ]+$/.test(node.value))) {
          stop(
            'unsupported_syntax',
            `The guard cannot analyse ${JSON.stringify(node.value)} here. Rewrite it in plain SQL.`,
          );
        }
        return;
      default:
        if (!EXPRESSION_TYPES.has(type)) {
          stop(
            'unsupported_syntax',
            `The guard does not know the construct "${type}" and cannot prove it safe. Rewrite the query with common SQL.`,
          );
        }
    }
  }

  private checkSelect(node: Obj): void {
    for (const key of Object.keys(node)) {
      if (!SELECT_KEYS.has(key)) {
        stop('unsupported_syntax', `The SELECT clause "${key}" is not known to the guard. Remove it.`);
      }
    }
    const into = node.into;
    if (isObj(into) && (into.position != null || into.keyword != null || into.expr != null)) {
      const keyword = text(into.keyword).toUpperCase();
      if (keyword === 'OUTFILE' || keyword === 'DUMPFILE') {
        stop(
          'file_access',
          `SELECT … INTO ${keyword} writes a file on the database server. Drop the INTO clause: the tool returns the rows to you.`,
        );
      }
      if (keyword === 'VAR') {
        stop(
          'session_state',
          'SELECT … INTO @variable changes session state. Drop the INTO clause: the tool returns the rows to you.',
        );
      }
      stop(
        'ddl',
        'SELECT … INTO stores the result on the server. Drop the INTO clause: the tool returns the rows to you.',
      );
    }
    if (node.locking_read != null) {
      stop(
        'locking',
        `SELECT … ${text(node.locking_read).toUpperCase()} takes row locks that block other users. Remove the locking clause; a plain SELECT reads a consistent snapshot.`,
      );
    }
  }

  private checkWrite(type: string, node: Obj): void {
    const name = type.toUpperCase();
    if (!this.allowWrites) {
      stop(
        'write_not_allowed',
        `${name} changes data, and this connection is read-only. Use SELECT to read; writes need a connection configured as writable.`,
      );
    }
    if (this.wrote) stop('unsupported_syntax', `A ${name} nested inside another statement is not allowed.`);
    this.wrote = true;
    if (type === 'update' || type === 'delete') checkWhere(name, node);
  }
}

/** Refuses a table reference (FROM, JOIN, DESCRIBE …) into a privileged schema or table. */
function checkTable(db: unknown, table: string): void {
  const schema = typeof db === 'string' ? db : null;
  const reason = deniedMysqlTable(schema, table);
  if (reason) {
    stop(
      'privileged_catalog',
      `${schema}.${table}: ${schema} ${reason}, which the SQL tool does not allow. Query the application's own tables instead.`,
    );
  }
}

function checkFunction(node: Obj): void {
  const name = functionName(node);
  if (name === undefined) {
    stop(
      'unsupported_syntax',
      'A function call whose name the guard cannot read. Call functions by plain name.',
    );
  }
  const reason = deniedFunctionReason(name);
  if (reason) {
    stop(
      'dangerous_function',
      `${name}() ${reason}, which the SQL tool does not allow. Remove the call and compute the answer from table data instead.`,
    );
  }
}

function functionName(node: Obj): string | undefined {
  if (typeof node.name === 'string') return node.name;
  const parts = isObj(node.name) ? node.name.name : undefined;
  if (!Array.isArray(parts) || parts.length === 0) return undefined;
  const last: unknown = parts[parts.length - 1];
  return isObj(last) && typeof last.value === 'string' ? last.value : undefined;
}

function refusedStatement(node: Obj): never {
  const type = text(node.type);
  const keyword = typeof node.keyword === 'string' ? node.keyword.toLowerCase() : '';
  const name = `${type.toUpperCase().replace(/_/g, ' ')}${keyword && keyword !== 'priv' ? ` ${keyword.toUpperCase()}` : ''}`;
  switch (type) {
    case 'create':
    case 'alter':
    case 'drop':
      if (keyword === 'user' || keyword === 'role') {
        return stop(
          'access_control',
          `${name} manages accounts; the SQL tool never does. Ask a database administrator.`,
        );
      }
      return stop(
        'ddl',
        `${name} changes the schema; the SQL tool never does. Ask a person with the right role; use SELECT to read data.`,
      );
    case 'truncate':
    case 'rename':
      return stop(
        'ddl',
        `${name} changes the schema or empties tables; the SQL tool never does. Ask a person with the right role.`,
      );
    case 'grant':
    case 'revoke':
      return stop(
        'access_control',
        `${type.toUpperCase()} changes privileges; the SQL tool never does. Ask a database administrator.`,
      );
    case 'set':
    case 'use':
      return stop(
        'session_state',
        `${type.toUpperCase()} changes session state, which the tool fixes from its configuration. Send the query without it; name tables as db.table if needed.`,
      );
    case 'transaction':
      return stop(
        'transaction_control',
        'Transaction control (BEGIN, COMMIT, ROLLBACK…) is not allowed: the tool runs each statement in its own transaction. Send the statement on its own.',
      );
    case 'lock':
    case 'unlock':
      return stop(
        'locking',
        'LOCK/UNLOCK TABLES blocks other users. Send a plain statement; the tool handles isolation.',
      );
    case 'call':
      return stop(
        'procedural',
        'CALL runs a stored procedure the guard cannot inspect. Write the query as a single SELECT instead.',
      );
    case 'load_data':
      return stop(
        'file_access',
        'LOAD DATA reads a file into a table. Use INSERT with bound ? parameters on a writable connection instead.',
      );
    case 'replace':
      return stop(
        'unsupported_statement',
        'REPLACE deletes and re-inserts rows (firing cascades). Use INSERT … ON DUPLICATE KEY UPDATE on a writable connection.',
      );
    default:
      return stop(
        'unsupported_statement',
        `${name} is not allowed. Only SELECT, SHOW, DESCRIBE and EXPLAIN SELECT run, plus INSERT/UPDATE/DELETE on writable connections.`,
      );
  }
}

/** The tables an UPDATE/DELETE changes, and whether unqualified columns can only belong to them. */
interface WriteTargets {
  names: string[];
  unqualifiedIsTarget: boolean;
}

function tableRefName(ref: unknown): string | undefined {
  if (!isObj(ref)) return undefined;
  if (typeof ref.as === 'string' && ref.as) return ref.as;
  return typeof ref.table === 'string' ? ref.table : undefined;
}

function isMultiTable(refs: unknown[]): boolean {
  return refs.length > 1 || refs.some((r) => isObj(r) && (r.join != null || r.expr != null));
}

function writeTargets(name: string, node: Obj): WriteTargets {
  const tables = Array.isArray(node.table) ? (node.table as unknown[]) : [];
  if (name === 'UPDATE') {
    if (!isMultiTable(tables)) {
      return { names: [tableRefName(tables[0])].filter(isString), unqualifiedIsTarget: true };
    }
    const set = Array.isArray(node.set) ? (node.set as unknown[]) : [];
    const names = set.map((s) => (isObj(s) && typeof s.table === 'string' ? s.table : undefined));
    if (names.some((n) => n === undefined)) {
      stop(
        'missing_where',
        'In a multi-table UPDATE, qualify every SET column with its table (SET t.col = …) so the guard can check the WHERE.',
      );
    }
    return { names: names.filter(isString), unqualifiedIsTarget: false };
  }
  const from = Array.isArray(node.from) ? (node.from as unknown[]) : [];
  if (!isMultiTable(from)) {
    return { names: [tableRefName(from[0])].filter(isString), unqualifiedIsTarget: true };
  }
  return {
    names: tables
      .map((t) => (isObj(t) && typeof t.table === 'string' ? t.table : undefined))
      .filter(isString),
    unqualifiedIsTarget: false,
  };
}

function isString(v: unknown): v is string {
  return typeof v === 'string';
}

function checkWhere(name: string, node: Obj): void {
  const targets = writeTargets(name, node);
  const label = targets.names.join(', ') || 'the target table';
  const where = node.where;
  if (!isObj(where) || !mentionsTarget(where, targets)) {
    stop(
      'missing_where',
      `${name} needs a WHERE clause that selects rows by a column of ${label} (e.g. WHERE id = ?); ${where ? 'this one does not reference such a column directly (columns inside subqueries do not count)' : 'without one it changes every row'}. Whole-table changes are not done through this tool.`,
    );
  }
  if (!restricts(where, targets)) {
    stop(
      'tautological_where',
      `${name}'s WHERE may be true for every row: each OR branch must compare a column of ${label}, and a column compared with itself (x = x) does not count. Select the rows explicitly, e.g. WHERE id = ?.`,
    );
  }
}

const AND_OPS = new Set(['AND', '&&']);
const OR_OPS = new Set(['OR', '||', 'XOR']);

/** Whether the condition can only be true for some rows: AND needs one such side, OR needs all. */
function restricts(expr: Obj, targets: WriteTargets): boolean {
  if (expr.type === 'binary_expr') {
    const op = text(expr.operator).toUpperCase();
    const sides = [expr.left, expr.right].filter(isObj);
    if (AND_OPS.has(op)) return sides.some((s) => restricts(s, targets));
    if (OR_OPS.has(op)) return sides.length === 2 && sides.every((s) => restricts(s, targets));
  }
  return mentionsTarget(expr, targets) && !hasSelfComparison(expr);
}

/** Whether a column of the target appears outside subqueries (which may shadow the target's name). */
function mentionsTarget(value: unknown, targets: WriteTargets): boolean {
  if (Array.isArray(value)) return value.some((v) => mentionsTarget(v, targets));
  if (!isObj(value)) return false;
  if (value.type === 'select' || 'ast' in value) return false;
  if (value.type === 'column_ref') {
    if (value.column === '*') return false;
    if (value.table == null) return targets.unqualifiedIsTarget;
    return typeof value.table === 'string' && targets.names.includes(value.table);
  }
  return Object.values(value).some((v) => mentionsTarget(v, targets));
}

function hasSelfComparison(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasSelfComparison);
  if (!isObj(value)) return false;
  if (value.type === 'select' || 'ast' in value) return false;
  if (value.type === 'binary_expr' && JSON.stringify(value.left) === JSON.stringify(value.right)) return true;
  return Object.values(value).some(hasSelfComparison);
}
