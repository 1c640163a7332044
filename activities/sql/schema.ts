import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import { heartbeatEvery } from '../heartbeats';
import { formatZodIssues } from '../../shared/zod-issues';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';
import { SqlSchemaArgs } from '../../shared/tools/sql';
import { counted } from '../../shared/words';
import type { ResolvedConnection, SqlConnections } from './connections';
import type { SqlSession } from './engines/types';
import {
  SqlConnectError,
  classifyDbError,
  connectionFailure,
  describeDbError,
  redact,
  sqlFailure,
} from './errors';
import { WRITE_RECORD_TABLE } from './write-record';

/** Arguments of `sql_schema` after validation. */
export type SqlSchemaInput = ToolActivityInput<z.input<typeof SqlSchemaArgs>>;

/** One column of a table. */
export interface ColumnInfo {
  name: string;
  type: string;
  nullable: boolean;
  /**
   * Every value of a text column that holds few, repeated ones (a status, a category, a country),
   * sorted: a query's condition must match them as stored ('delivered', not 'Delivered').
   */
  values?: string[];
}

/** One table (or view) as sql_schema reports it. */
export interface TableInfo {
  /** `schema.table` on Postgres when outside the first search_path schema, else the bare name. */
  name: string;
  kind: 'table' | 'view';
  /** Exact for small tables (counted), the planner's estimate for large ones; null when unknown. */
  rows: number | null;
  rowsExact: boolean;
  columns: ColumnInfo[];
  primaryKey: string[];
  /** e.g. `customer_id → customers(id)`. */
  foreignKeys: string[];
}

/** The full record of a sql_schema call, returned as `data` for UIs. */
export interface SqlSchemaData {
  connection: string;
  engine: 'postgres' | 'mysql' | 'pglite';
  writable: boolean;
  description?: string;
  tables: TableInfo[];
}

/** Tables with fewer estimated rows than this are counted exactly (cheap, and estimates lag on new tables). */
const COUNT_BELOW = 10_000;
/** Most tables described in full; the rest are listed by name. */
const MAX_DESCRIBED_TABLES = 200;
/** Schemas cached per worker; the oldest is dropped first. */
const CACHE_ENTRIES = 256;
const SCHEMA_TIMEOUT_FLOOR_MS = 15_000;
/** A text column's values are shown when it holds at most this many distinct ones... */
const MAX_SHOWN_VALUES = 12;
/** ...each of them repeated: the table has at least this many rows per distinct value... */
const ROWS_PER_VALUE = 2;
/** ...and none longer than this (codes and labels, not free text). */
const MAX_VALUE_CHARS = 40;
/** Columns whose values one sql_schema call reads at most (one bounded query each). */
const MAX_VALUE_COLUMNS = 40;
/** Column types whose values may be shown: text of either dialect (MySQL's enum names its values already). */
const TEXT_TYPE =
  /^(text|citext|character varying|character|varchar|char|nvarchar|nchar|tinytext|mediumtext)\b/i;

/** Introspection cache keyed by workflow run id + connection name (a run sees one schema). */
export class SchemaCache {
  private readonly entries = new Map<string, SqlSchemaData>();
  constructor(private readonly limit = CACHE_ENTRIES) {}

  get(key: string): SqlSchemaData | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      // Refresh its place: the Map's insertion order is the eviction order.
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, value: SqlSchemaData): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value as string);
  }

  get size(): number {
    return this.entries.size;
  }
}

const quotePg = (id: string): string => `"${id.replace(/"/g, '""')}"`;
const quoteMy = (id: string): string => `\`${id.replace(/`/g, '``')}\``;

interface RawTable {
  schema: string;
  name: string;
  kind: 'table' | 'view';
  estimate: number | null;
}

async function exactCount(s: SqlSession, from: string): Promise<number> {
  const res = await s.query(`SELECT count(*) FROM (SELECT 1 FROM ${from} LIMIT ${COUNT_BELOW}) AS t`);
  return Number(res.rows[0]?.[0] ?? 0);
}

async function postgresSchema(s: SqlSession): Promise<TableInfo[]> {
  const tables = await s.query(
    `SELECT n.nspname, c.relname, c.relkind, c.reltuples::float8, n.nspname = current_schema() AS first
       FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND n.nspname = ANY (current_schemas(false))
        AND c.relname <> '${WRITE_RECORD_TABLE}' AND NOT c.relispartition
      ORDER BY n.nspname <> current_schema(), n.nspname, c.relname`,
  );
  const columns = await s.query(
    `SELECT n.nspname, c.relname, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull
       FROM pg_catalog.pg_attribute a
       JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE a.attnum > 0 AND NOT a.attisdropped AND n.nspname = ANY (current_schemas(false))
      ORDER BY n.nspname, c.relname, a.attnum`,
  );
  const keys = await s.query(
    `SELECT n.nspname, c.relname, k.contype, pg_catalog.pg_get_constraintdef(k.oid)
       FROM pg_catalog.pg_constraint k
       JOIN pg_catalog.pg_class c ON c.oid = k.conrelid
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE k.contype IN ('p', 'f') AND n.nspname = ANY (current_schemas(false))
      ORDER BY n.nspname, c.relname, k.conname`,
  );
  const out: TableInfo[] = [];
  for (const [schema, name, relkind, reltuples, first] of tables.rows as [
    string,
    string,
    string,
    number,
    boolean,
  ][]) {
    const raw: RawTable = {
      schema,
      name,
      kind: relkind === 'v' || relkind === 'm' ? 'view' : 'table',
      estimate: reltuples >= 0 ? Math.round(reltuples) : null,
    };
    const info = describe(raw, first ? name : `${schema}.${name}`);
    for (const [cs, cn, col, type, notNull] of columns.rows as [string, string, string, string, boolean][]) {
      if (cs === schema && cn === name) info.columns.push({ name: col, type, nullable: !notNull });
    }
    for (const [ks, kn, contype, def] of keys.rows as [string, string, string, string][]) {
      if (ks !== schema || kn !== name) continue;
      if (contype === 'p')
        info.primaryKey = (/\(([^)]*)\)/.exec(def)?.[1] ?? '').split(/,\s*/).filter(Boolean);
      else info.foreignKeys.push(def.replace(/^FOREIGN KEY \(([^)]*)\) REFERENCES /, '$1 → '));
    }
    out.push(info);
  }
  await fillCounts(s, out, (t) => `${quotePg(t.schema)}.${quotePg(t.name)}`, quotePg);
  return out;
}

async function mysqlSchema(s: SqlSession): Promise<TableInfo[]> {
  const tables = await s.query(
    `SELECT TABLE_NAME, TABLE_TYPE, TABLE_ROWS FROM information_schema.TABLES
      WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME <> '${WRITE_RECORD_TABLE}' ORDER BY TABLE_NAME`,
  );
  const columns = await s.query(
    `SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_KEY FROM information_schema.COLUMNS
      WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME, ORDINAL_POSITION`,
  );
  const fks = await s.query(
    `SELECT TABLE_NAME, COLUMN_NAME, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE
      WHERE TABLE_SCHEMA = DATABASE() AND REFERENCED_TABLE_NAME IS NOT NULL
      ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION`,
  );
  const out: TableInfo[] = [];
  for (const [name, type, rows] of tables.rows as [string, string, number | string | null][]) {
    const info = describe(
      {
        schema: '',
        name,
        kind: type === 'VIEW' ? 'view' : 'table',
        estimate: rows === null ? null : Number(rows),
      },
      name,
    );
    for (const [tn, col, colType, nullable, key] of columns.rows as [
      string,
      string,
      string,
      string,
      string,
    ][]) {
      if (tn !== name) continue;
      info.columns.push({ name: col, type: colType, nullable: nullable === 'YES' });
      if (key === 'PRI') info.primaryKey.push(col);
    }
    for (const [tn, col, refTable, refCol] of fks.rows as [string, string, string, string][]) {
      if (tn === name) info.foreignKeys.push(`${col} → ${refTable}(${refCol})`);
    }
    out.push(info);
  }
  await fillCounts(s, out, (t) => quoteMy(t.name), quoteMy);
  return out;
}

type Pending = TableInfo & { schema: string; estimate: number | null };

function describe(raw: RawTable, shownName: string): Pending {
  return {
    name: shownName,
    schema: raw.schema,
    kind: raw.kind,
    estimate: raw.estimate,
    rows: raw.estimate,
    rowsExact: false,
    columns: [],
    primaryKey: [],
    foreignKeys: [],
  };
}

/**
 * Counts small tables exactly (bounded by COUNT_BELOW rows each) and reads their few-valued text
 * columns' values; keeps the estimate for big ones.
 */
async function fillCounts(
  s: SqlSession,
  tables: TableInfo[],
  from: (t: Pending) => string,
  quote: (id: string) => string,
): Promise<void> {
  const valueColumns = { left: MAX_VALUE_COLUMNS };
  for (const t of tables as Pending[]) {
    if (t.kind === 'table' && (t.estimate === null || t.estimate < COUNT_BELOW)) {
      const n = await exactCount(s, from(t));
      t.rows = n;
      t.rowsExact = n < COUNT_BELOW;
      if (!t.rowsExact && t.estimate !== null) t.rows = Math.max(n, t.estimate);
      if (t.rowsExact) await fillValues(s, t, from(t), quote, valueColumns);
    }
    delete (t as Partial<Pending>).estimate;
    delete (t as Partial<Pending>).schema;
  }
}

/**
 * Reads the values of a small table's text columns that hold few, repeated ones (a status, a
 * category): a model writing `WHERE status = ...` must know what is stored. Each query is bounded
 * (the table has under COUNT_BELOW rows; at most MAX_SHOWN_VALUES + 1 values come back), and one
 * sql_schema call reads at most MAX_VALUE_COLUMNS columns.
 */
async function fillValues(
  s: SqlSession,
  t: TableInfo,
  from: string,
  quote: (id: string) => string,
  valueColumns: { left: number },
): Promise<void> {
  const rows = t.rows ?? 0;
  for (const c of t.columns) {
    if (valueColumns.left <= 0 || rows < ROWS_PER_VALUE) return;
    if (!TEXT_TYPE.test(c.type) || t.primaryKey.includes(c.name)) continue;
    valueColumns.left -= 1;
    const col = quote(c.name);
    // In a savepoint: a column this role may not read (a column-level grant) is skipped, and the
    // transaction goes on (PostgreSQL would abort it on the error).
    await s.command('SAVEPOINT column_values');
    let values: string[];
    try {
      const res = await s.query(
        `SELECT DISTINCT ${col} FROM ${from} WHERE ${col} IS NOT NULL ORDER BY 1 LIMIT ${MAX_SHOWN_VALUES + 1}`,
      );
      values = res.rows.map((r) => String(r[0]));
      await s.command('RELEASE SAVEPOINT column_values');
    } catch {
      await s.command('ROLLBACK TO SAVEPOINT column_values');
      continue;
    }
    const shown =
      values.length > 0 &&
      values.length <= MAX_SHOWN_VALUES &&
      rows >= ROWS_PER_VALUE * values.length &&
      values.every((v) => v.length <= MAX_VALUE_CHARS && ![...v].some((ch) => ch < ' '));
    if (shown) c.values = values;
  }
}

/** Reads the schema of a connection, in a read-only transaction. */
async function introspect(conn: ResolvedConnection, signal: AbortSignal): Promise<TableInfo[]> {
  const { engine, config } = conn;
  return engine.session(
    async (s) => {
      await s.command(
        engine.dialect === 'mysql' ? 'START TRANSACTION READ ONLY' : 'BEGIN TRANSACTION READ ONLY',
      );
      try {
        const tables = engine.dialect === 'mysql' ? await mysqlSchema(s) : await postgresSchema(s);
        await s.command('ROLLBACK');
        return tables;
      } catch (err) {
        await s.command('ROLLBACK');
        throw err;
      }
    },
    { timeoutMs: Math.max(config.statementTimeoutMs, SCHEMA_TIMEOUT_FLOOR_MS), signal },
  );
}

/** Values as SQL string literals, `'paid', 'shipped'`, to be copied into a query. */
export function sqlValues(values: readonly string[]): string {
  return values.map((v) => `'${v.replace(/'/g, "''")}'`).join(', ');
}

/** What the model reads: one block per table. */
export function formatSchema(data: SqlSchemaData, missing: string[]): string {
  const lines: string[] = [
    `Connection "${data.connection}" (${data.engine === 'mysql' ? 'MySQL/MariaDB' : 'PostgreSQL'} dialect, ${data.writable ? 'writable' : 'read-only'}): ${counted(data.tables.length, 'table')}.`,
  ];
  if (data.description) lines.push(data.description);
  data.tables.forEach((t, i) => {
    if (i >= MAX_DESCRIBED_TABLES) return;
    const rows = t.rows === null ? 'rows unknown' : `${t.rowsExact ? '' : '~'}${counted(t.rows, 'row')}`;
    lines.push('', `${t.name}${t.kind === 'view' ? ' (view)' : ''} — ${rows}`);
    for (const c of t.columns)
      lines.push(
        `  ${c.name} ${c.type}${c.nullable ? '' : ' NOT NULL'}${c.values ? ` — values: ${sqlValues(c.values)}` : ''}`,
      );
    if (t.primaryKey.length) lines.push(`  PRIMARY KEY (${t.primaryKey.join(', ')})`);
    for (const fk of t.foreignKeys) lines.push(`  FOREIGN KEY ${fk}`);
  });
  if (data.tables.length > MAX_DESCRIBED_TABLES) {
    const rest = data.tables.slice(MAX_DESCRIBED_TABLES).map((t) => t.name);
    lines.push(
      '',
      `${rest.length} more ${rest.length === 1 ? 'table' : 'tables'} (ask for them with "tables"): ${rest.join(', ')}`,
    );
  }
  if (missing.length) lines.push('', `No such table: ${missing.join(', ')}.`);
  if (data.tables.length === 0) lines.push('No tables are visible to this connection.');
  return lines.join('\n');
}

/** What the sql_schema activity runs with. */
export interface SqlSchemaDeps {
  connections: SqlConnections;
  cache: SchemaCache;
}

/**
 * The `sql_schema` activity: tables, columns with types, primary and foreign keys and row counts of
 * a connection, read once per workflow run and connection and then served from the worker's cache.
 */
export async function sqlSchema(deps: SqlSchemaDeps, input: SqlSchemaInput): Promise<ToolResult> {
  const ctx = Context.current();
  const parsed = SqlSchemaArgs.safeParse(input.args);
  if (!parsed.success) {
    throw sqlFailure('SqlInvalidArguments', `Invalid sql_schema arguments: ${formatZodIssues(parsed.error)}`);
  }
  const conn = deps.connections.resolve(parsed.data.connection);
  if ('error' in conn) return { content: conn.error, isError: true, data: { error: 'unknown_connection' } };

  const run = ctx.info.workflowExecution?.runId ?? `activity:${ctx.info.activityId}`;
  const key = `${run}\n${conn.name}`;
  let full = deps.cache.get(key);
  if (!full) {
    const beat = setInterval(() => ctx.heartbeat(), heartbeatEvery(3000, ctx.info));
    try {
      const roleProblem = await deps.connections.checkRole(conn);
      if (roleProblem) throw sqlFailure('SqlConfigError', roleProblem);
      full = {
        connection: conn.name,
        engine: conn.engine.kind,
        writable: conn.config.writable,
        ...(conn.config.description ? { description: conn.config.description } : {}),
        tables: await introspect(conn, ctx.cancellationSignal),
      };
    } catch (err) {
      if (err instanceof ApplicationFailure) throw err;
      if (err instanceof SqlConnectError)
        throw connectionFailure(conn.name, conn.engine.kind, err.cause, conn.secrets);
      const cls = classifyDbError(err);
      if (cls === 'auth' || cls === 'connection')
        throw connectionFailure(conn.name, conn.engine.kind, err, conn.secrets);
      throw sqlFailure(
        'SqlTransientError',
        `Reading the schema of database connection "${conn.name}" failed: ${redact(describeDbError(err), conn.secrets)}; will retry`,
      );
    } finally {
      clearInterval(beat);
    }
    deps.cache.set(key, full);
  }
  const wanted = parsed.data.tables?.map((t) => t.toLowerCase());
  const data: SqlSchemaData = wanted
    ? { ...full, tables: full.tables.filter((t) => wanted.includes(t.name.toLowerCase())) }
    : full;
  const missing = wanted ? wanted.filter((w) => !full.tables.some((t) => t.name.toLowerCase() === w)) : [];
  return { content: formatSchema(data, missing), data };
}
