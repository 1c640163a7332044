import { parse, scan } from 'libpg-query';
import { deniedFunctionReason } from './functions';
import { deniedPgRelation, deniedPgSetting } from './privileged';
import type { FieldKind } from './postgres-nodes';
import { PG_SHAPES } from './postgres-nodes';
import type { GuardVerdict, RefusalCode } from './verdict';
import { refuse, stop } from './verdict';

/**
 * The PostgreSQL half of the guard, on libpg-query: the server's own grammar compiled to WASM, so the
 * tree is exactly what PostgreSQL would execute (comments, dollar quotes and Unicode escapes included).
 * The walk is driven by the shape table in `postgres-nodes.ts`: only listed node types and fields are
 * accepted, and hooks refuse the dangerous corners of otherwise allowed nodes.
 */

type Obj = Record<string, unknown>;

/** EXPLAIN options that only change the output format or detail; ANALYZE is handled separately. */
const EXPLAIN_OPTIONS = new Set([
  'analyze',
  'verbose',
  'costs',
  'settings',
  'generic_plan',
  'buffers',
  'serialize',
  'wal',
  'timing',
  'summary',
  'memory',
  'format',
]);

/**
 * Checks one PostgreSQL statement. Refusals found deep in the walk are thrown by {@link stop} and
 * turned into verdicts by `checkSql`.
 */
export async function checkPostgres(sql: string, allowWrites: boolean): Promise<GuardVerdict> {
  let statements: Obj[];
  try {
    const tree = await parse(sql);
    statements = (tree.stmts ?? []).map((raw) => (raw.stmt ?? {}) as Obj);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return refuse(
      'parse_error',
      `The PostgreSQL parser rejected the statement: ${message}. Fix the syntax and try again.`,
    );
  }
  if (statements.length === 0) {
    return refuse('empty_statement', 'The statement is empty. Send one SQL statement.');
  }
  if (statements.length > 1) {
    const names = statements.map((s) => statementName(...unwrap(s))).join(', ');
    return refuse(
      'multiple_statements',
      `Found ${statements.length} statements (${names}); the tool runs exactly one per call. Send them as separate calls, without the semicolon between them.`,
    );
  }
  const backslash = await backslashInPlainString(sql);
  if (backslash) return backslash;

  const [type, body] = unwrap(statements[0] as Obj);
  return topLevel(type, body, allowWrites);
}

/**
 * libpg-query assumes `standard_conforming_strings = on`; a server with it off reads `'a\'` as an
 * unterminated literal and runs what the parser took for string content. Refuse the ambiguity.
 */
async function backslashInPlainString(sql: string): Promise<GuardVerdict | undefined> {
  let tokens: Array<{ tokenName: string; text: string }>;
  try {
    tokens = (await scan(sql)).tokens;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return refuse(
      'parse_error',
      `The PostgreSQL scanner rejected the statement: ${message}. Fix the syntax and try again.`,
    );
  }
  const hit = tokens.find((t) => t.tokenName === 'SCONST' && t.text.startsWith("'") && t.text.includes('\\'));
  if (!hit) return undefined;
  return refuse(
    'ambiguous_syntax',
    `The string ${JSON.stringify(hit.text.slice(0, 40))} contains a backslash, which servers with standard_conforming_strings off read as an escape, changing where the string ends. Pass the value as a bound $1 parameter, or write it as E'…'.`,
  );
}

function unwrap(node: Obj): [string, Obj] {
  const keys = Object.keys(node);
  const type = keys[0];
  if (keys.length !== 1 || type === undefined) return ['(unknown)', {}];
  const body = node[type];
  return [type, isObj(body) ? body : {}];
}

/** The value if it is a string, else empty: AST fields are untyped JSON. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function topLevel(type: string, body: Obj, allowWrites: boolean): GuardVerdict {
  switch (type) {
    case 'SelectStmt':
    case 'InsertStmt':
    case 'UpdateStmt':
    case 'DeleteStmt': {
      const walker = new PgWalker(allowWrites);
      walker.visitStruct(type, body);
      return {
        allowed: true,
        kind: walker.wrote ? 'write' : 'read',
        statementType: statementName(type, body),
      };
    }
    case 'ExplainStmt':
      return explain(body, allowWrites);
    case 'VariableShowStmt': {
      const name = text(body.name);
      const reason = deniedPgSetting(name);
      if (reason)
        return refuse('privileged_catalog', `SHOW ${name} ${reason}, which the SQL tool does not allow.`);
      return { allowed: true, kind: 'read', statementType: 'SHOW' };
    }
    default:
      return refusedStatement(type, body);
  }
}

/**
 * Plain EXPLAIN only plans, so the inner statement may be a write even on a read-only connection (the
 * other rules still apply to it); EXPLAIN ANALYZE executes it, so then it is judged as if run directly.
 */
function explain(body: Obj, allowWrites: boolean): GuardVerdict {
  const options = Array.isArray(body.options) ? body.options : [];
  let analyze = false;
  for (const option of options) {
    const [optType, opt] = unwrap(isObj(option) ? option : {});
    const name = typeof opt.defname === 'string' ? opt.defname.toLowerCase() : '';
    if (optType !== 'DefElem' || !EXPLAIN_OPTIONS.has(name)) {
      stop(
        'unsupported_syntax',
        `EXPLAIN option ${JSON.stringify(name || optType)} is not known to the guard. Remove it.`,
      );
    }
    // Even ANALYZE false counts: refusing an odd spelling is cheaper than misjudging it.
    if (name === 'analyze') analyze = true;
  }
  const unknown = Object.keys(body).find((key) => key !== 'query' && key !== 'options');
  if (unknown) stop('unsupported_syntax', `EXPLAIN with ${unknown} is not known to the guard. Remove it.`);
  const walker = new PgWalker(analyze ? allowWrites : true);
  walker.visitNode(body.options);
  walker.visitNode(body.query);
  const [innerType, inner] = unwrap(isObj(body.query) ? body.query : {});
  const kind = analyze && walker.wrote ? 'write' : 'read';
  return {
    allowed: true,
    kind,
    statementType: `EXPLAIN${analyze ? ' ANALYZE' : ''} ${statementName(innerType, inner)}`,
  };
}

/** Walks one allowed statement, refusing (through {@link stop}) at the first unsafe construct. */
class PgWalker {
  wrote = false;

  constructor(private readonly allowWrites: boolean) {}

  visitNode(value: unknown): void {
    if (value === undefined || value === null) return;
    if (Array.isArray(value)) {
      for (const item of value) this.visitNode(item);
      return;
    }
    if (!isObj(value)) {
      stop(
        'unsupported_syntax',
        'The parse tree has an unexpected shape; the guard refuses what it cannot read.',
      );
    }
    const keys = Object.keys(value);
    // An empty node is a placeholder (e.g. plain DISTINCT), not an expression.
    if (keys.length === 0) return;
    const [type, body] = unwrap(value);
    this.visitStruct(type, body);
  }

  visitStruct(type: string, body: unknown): void {
    if (!isObj(body)) {
      stop(
        'unsupported_syntax',
        `The parse tree has an unexpected ${type}; the guard refuses what it cannot read.`,
      );
    }
    const shape = PG_SHAPES[type];
    if (!shape) return refusedNested(type, body);
    this.hook(type, body);
    for (const [field, value] of Object.entries(body)) {
      const kind: FieldKind | undefined = shape[field];
      if (kind === undefined) {
        stop(
          'unsupported_syntax',
          `${statementName(type, body)} with ${field} is not known to the guard, so it cannot prove it safe. Rewrite it with common SQL.`,
        );
      }
      if (kind === 'scalar') {
        if (value !== null && typeof value === 'object') {
          stop('unsupported_syntax', `Unexpected value in ${type}.${field}.`);
        }
      } else if (kind === 'node') {
        this.visitNode(value);
      } else {
        this.visitStruct(kind.struct, value);
      }
    }
  }

  private hook(type: string, body: Obj): void {
    switch (type) {
      case 'SelectStmt':
        if (body.intoClause) {
          stop(
            'ddl',
            'SELECT … INTO creates a new table. Drop the INTO clause: the tool returns the rows to you.',
          );
        }
        if (Array.isArray(body.lockingClause) && body.lockingClause.length > 0) {
          stop(
            'locking',
            'SELECT … FOR UPDATE/SHARE takes row locks that block other users. Remove the locking clause; a plain SELECT reads a consistent snapshot.',
          );
        }
        return;
      case 'InsertStmt':
      case 'UpdateStmt':
      case 'DeleteStmt':
        return this.write(type, body);
      case 'RangeVar': {
        const name = text(body.relname);
        const reason = deniedPgRelation(name);
        if (reason) {
          stop(
            'privileged_catalog',
            `${name} ${reason}, which the SQL tool does not allow. Query the application's own tables instead.`,
          );
        }
        return;
      }
      case 'FuncCall': {
        const name = lastName(body.funcname);
        const reason = name === undefined ? 'has a name the guard cannot read' : deniedFunctionReason(name);
        if (name?.toLowerCase() === 'current_setting') checkCurrentSetting(body.args);
        if (reason) {
          stop(
            'dangerous_function',
            `${name ?? 'A function'}() ${reason}, which the SQL tool does not allow. Remove the call and compute the answer from table data instead.`,
          );
        }
        return;
      }
      default:
        return;
    }
  }

  private write(type: string, body: Obj): void {
    const name = statementName(type, body);
    if (!this.allowWrites) {
      stop(
        'write_not_allowed',
        `${name} changes data (data-modifying CTEs included), and this connection is read-only. Use SELECT to read; writes need a connection configured as writable.`,
      );
    }
    this.wrote = true;
    if (type === 'UpdateStmt') checkWhere(name, body, body.fromClause);
    if (type === 'DeleteStmt') checkWhere(name, body, body.usingClause);
  }
}

/** `current_setting('name')` reads a setting like SHOW: only a literal name that SHOW would allow. */
function checkCurrentSetting(args: unknown): void {
  const first: unknown = Array.isArray(args) ? args[0] : undefined;
  const konst = isObj(first) && isObj(first.A_Const) ? first.A_Const : undefined;
  const name = konst && isObj(konst.sval) ? konst.sval.sval : undefined;
  if (typeof name !== 'string') {
    stop(
      'privileged_catalog',
      'current_setting() needs the setting name as a literal string, so the guard can tell a harmless setting from a server file path.',
    );
  }
  const reason = deniedPgSetting(name);
  if (reason)
    stop('privileged_catalog', `current_setting('${name}') ${reason}, which the SQL tool does not allow.`);
}

function lastName(list: unknown): string | undefined {
  if (!Array.isArray(list) || list.length === 0) return undefined;
  const last: unknown = list[list.length - 1];
  if (!isObj(last) || !isObj(last.String)) return undefined;
  const sval = last.String.sval;
  return typeof sval === 'string' ? sval : undefined;
}

/** A statement type that is fine in the allow-list but showed up somewhere it cannot be judged. */
function refusedNested(type: string, body: Obj): never {
  if (/Stmt$/.test(type)) return refusedStatement(type, body);
  return stop(
    'unsupported_syntax',
    `The guard does not know the construct ${type} and cannot prove it safe. Rewrite the query with common SQL.`,
  );
}

const TRANSACTION_NAMES: Readonly<Record<string, string>> = {
  TRANS_STMT_BEGIN: 'BEGIN',
  TRANS_STMT_START: 'START TRANSACTION',
  TRANS_STMT_COMMIT: 'COMMIT',
  TRANS_STMT_ROLLBACK: 'ROLLBACK',
  TRANS_STMT_SAVEPOINT: 'SAVEPOINT',
  TRANS_STMT_RELEASE: 'RELEASE SAVEPOINT',
  TRANS_STMT_ROLLBACK_TO: 'ROLLBACK TO SAVEPOINT',
  TRANS_STMT_PREPARE: 'PREPARE TRANSACTION',
  TRANS_STMT_COMMIT_PREPARED: 'COMMIT PREPARED',
  TRANS_STMT_ROLLBACK_PREPARED: 'ROLLBACK PREPARED',
};

const SPECIAL_NAMES: Readonly<Record<string, string>> = {
  CreateStmt: 'CREATE TABLE',
  CreatedbStmt: 'CREATE DATABASE',
  DropdbStmt: 'DROP DATABASE',
  IndexStmt: 'CREATE INDEX',
  ViewStmt: 'CREATE VIEW',
  CreateTableAsStmt: 'CREATE TABLE AS',
  RenameStmt: 'ALTER … RENAME',
  DoStmt: 'DO',
  LoadStmt: 'LOAD',
  RuleStmt: 'CREATE RULE',
  CreateTrigStmt: 'CREATE TRIGGER',
  CreateSeqStmt: 'CREATE SEQUENCE',
  DefineStmt: 'CREATE AGGREGATE/OPERATOR/TYPE',
  CheckPointStmt: 'CHECKPOINT',
  RefreshMatViewStmt: 'REFRESH MATERIALIZED VIEW',
  LockStmt: 'LOCK TABLE',
  AlterSystemStmt: 'ALTER SYSTEM',
  ExplainStmt: 'EXPLAIN',
  VariableShowStmt: 'SHOW',
};

/** The SQL keyword(s) a statement node stands for, for messages and `statementType`. */
function statementName(type: string, body: Obj): string {
  switch (type) {
    case 'SelectStmt':
      if (body.valuesLists) return 'VALUES';
      return 'SELECT';
    case 'DropStmt':
      return `DROP ${text(body.removeType)
        .replace(/^OBJECT_/, '')
        .replace(/_/g, ' ')}`.trim();
    case 'TransactionStmt':
      return TRANSACTION_NAMES[text(body.kind)] ?? 'transaction control';
    case 'VariableSetStmt': {
      const name = text(body.name).toLowerCase();
      if (text(body.kind).startsWith('VAR_RESET')) return 'RESET';
      if (name === 'role') return 'SET ROLE';
      if (name === 'session_authorization') return 'SET SESSION AUTHORIZATION';
      return 'SET';
    }
    case 'CopyStmt':
      if (body.is_program) return 'COPY … PROGRAM';
      return body.filename ? 'COPY … file' : 'COPY';
    case 'GrantStmt':
    case 'GrantRoleStmt':
      return body.is_grant ? 'GRANT' : 'REVOKE';
    case 'VacuumStmt':
      return body.is_vacuumcmd ? 'VACUUM' : 'ANALYZE';
    case 'CreateFunctionStmt':
      return body.is_procedure ? 'CREATE PROCEDURE' : 'CREATE FUNCTION';
    default:
      return (
        SPECIAL_NAMES[type] ??
        type
          .replace(/Stmt$/, '')
          .replace(/([a-z])([A-Z])/g, '$1 $2')
          .toUpperCase()
      );
  }
}

const STATEMENT_CODES: Readonly<Record<string, RefusalCode>> = {
  TransactionStmt: 'transaction_control',
  VariableSetStmt: 'session_state',
  DiscardStmt: 'session_state',
  ListenStmt: 'session_state',
  UnlistenStmt: 'session_state',
  NotifyStmt: 'session_state',
  CopyStmt: 'file_access',
  LoadStmt: 'file_access',
  DoStmt: 'procedural',
  CallStmt: 'procedural',
  ExecuteStmt: 'procedural',
  PrepareStmt: 'procedural',
  DeallocateStmt: 'procedural',
  DeclareCursorStmt: 'procedural',
  FetchStmt: 'procedural',
  ClosePortalStmt: 'procedural',
  GrantStmt: 'access_control',
  GrantRoleStmt: 'access_control',
  CreateRoleStmt: 'access_control',
  AlterRoleStmt: 'access_control',
  AlterRoleSetStmt: 'access_control',
  DropRoleStmt: 'access_control',
  AlterDefaultPrivilegesStmt: 'access_control',
  ReassignOwnedStmt: 'access_control',
  DropOwnedStmt: 'access_control',
  CreateUserMappingStmt: 'access_control',
  AlterUserMappingStmt: 'access_control',
  DropUserMappingStmt: 'access_control',
  LockStmt: 'locking',
  VacuumStmt: 'maintenance',
  ClusterStmt: 'maintenance',
  ReindexStmt: 'maintenance',
  CheckPointStmt: 'maintenance',
  RefreshMatViewStmt: 'maintenance',
  AlterSystemStmt: 'maintenance',
  MergeStmt: 'unsupported_statement',
};

const DDL_TYPE =
  /^(Create|Alter|Drop|Define|Rename|Comment|Truncate|Index|View|Rule|SecLabel|ImportForeignSchema|CompositeType)/;

/** What each statement-level refusal says after the statement's name: why, and what to do instead. */
const INSTEAD: Readonly<Partial<Record<RefusalCode, string>>> = {
  ddl: 'changes the database schema, which the SQL tool never does. Ask a person with the right role to run it; use SELECT to read data.',
  access_control:
    'changes roles, users or privileges, which the SQL tool never does. Ask a database administrator.',
  file_access:
    'reads or writes files, programs or client streams on the server. Use SELECT to read data (the rows come back to you) or INSERT with bound parameters on a writable connection.',
  procedural:
    'runs code the guard cannot inspect. Write the work as one plain SELECT (or INSERT/UPDATE/DELETE on a writable connection).',
  session_state:
    'changes or listens to session state, which the tool fixes from its configuration. Send the query without it; schema-qualify names (schema.table) if needed.',
  transaction_control:
    'is transaction control, and the tool runs each statement in its own transaction. Send the statement on its own.',
  locking: 'takes locks that block other users. Send a plain statement; the tool handles isolation.',
  maintenance:
    'is a maintenance or server-administration command, which the SQL tool never runs. Ask a database administrator.',
  unsupported_statement:
    'is not supported. Use SELECT, VALUES, SHOW or EXPLAIN, plus INSERT (… ON CONFLICT), UPDATE or DELETE on a writable connection.',
};

function refusedStatement(type: string, body: Obj): never {
  const code: RefusalCode = STATEMENT_CODES[type] ?? (DDL_TYPE.test(type) ? 'ddl' : 'unsupported_statement');
  return stop(code, `${statementName(type, body)} ${INSTEAD[code] ?? INSTEAD.unsupported_statement ?? ''}`);
}

/**
 * UPDATE/DELETE must filter on the target table. A column counts when it is qualified with the
 * target's visible name, or unqualified when no FROM/USING table could own it. Columns inside
 * subqueries never count: the subquery may shadow the target (`WHERE EXISTS (SELECT 1 FROM t WHERE
 * t.a = 1)` is the same for every row).
 */
function checkWhere(name: string, body: Obj, extraTables: unknown): void {
  const relation = isObj(body.relation) ? body.relation : {};
  const alias =
    isObj(relation.alias) && typeof relation.alias.aliasname === 'string'
      ? relation.alias.aliasname
      : undefined;
  const target = alias ?? text(relation.relname);
  const scope: Scope = {
    target,
    unqualifiedIsTarget: !(Array.isArray(extraTables) && extraTables.length > 0),
  };
  const where = body.whereClause;
  if (!isObj(where) || !mentionsTarget(where, scope)) {
    stop(
      'missing_where',
      `${name} needs a WHERE clause that selects rows by a column of ${target} (e.g. WHERE id = $1); ${where ? `this one does not reference such a column directly${scope.unqualifiedIsTarget ? '' : ` (with FROM/USING, qualify it as ${target}.column)`}, and columns inside subqueries do not count` : 'without one it changes every row'}. Whole-table changes are not done through this tool.`,
    );
  }
  if (!restricts(where, scope)) {
    stop(
      'tautological_where',
      `${name}'s WHERE may be true for every row: each OR branch must compare a column of ${target}, and a column compared with itself (x = x) does not count. Select the rows explicitly, e.g. WHERE id = $1.`,
    );
  }
}

interface Scope {
  target: string;
  unqualifiedIsTarget: boolean;
}

/** Whether the condition can only be true for some rows: AND needs one such argument, OR needs all. */
function restricts(expr: Obj, scope: Scope): boolean {
  const bool = expr.BoolExpr;
  if (isObj(bool) && Array.isArray(bool.args)) {
    const args = bool.args.filter(isObj);
    if (bool.boolop === 'AND_EXPR') return args.some((a) => restricts(a, scope));
    if (bool.boolop === 'OR_EXPR') return args.length > 0 && args.every((a) => restricts(a, scope));
  }
  return mentionsTarget(expr, scope) && !hasSelfComparison(expr);
}

function mentionsTarget(value: unknown, scope: Scope): boolean {
  if (Array.isArray(value)) return value.some((v) => mentionsTarget(v, scope));
  if (!isObj(value)) return false;
  if ('SelectStmt' in value) return false;
  const ref = value.ColumnRef;
  if (isObj(ref) && Array.isArray(ref.fields)) {
    const fields = ref.fields.filter(isObj);
    if (fields.length === 1) return scope.unqualifiedIsTarget && 'String' in (fields[0] as Obj);
    const qualifier = fields[fields.length - 2];
    return isObj(qualifier) && isObj(qualifier.String) && qualifier.String.sval === scope.target;
  }
  return Object.values(value).some((v) => mentionsTarget(v, scope));
}

function hasSelfComparison(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasSelfComparison);
  if (!isObj(value)) return false;
  if ('SelectStmt' in value) return false;
  const expr = value.A_Expr;
  if (isObj(expr) && expr.lexpr !== undefined && sameTree(expr.lexpr, expr.rexpr)) return true;
  return Object.values(value).some(hasSelfComparison);
}

/** Structural equality ignoring source locations, so `a = a` matches although the two `a`s differ in offset. */
function sameTree(a: unknown, b: unknown): boolean {
  return JSON.stringify(a, dropLocation) === JSON.stringify(b, dropLocation);
}

function dropLocation(key: string, value: unknown): unknown {
  return key === 'location' ? undefined : value;
}
