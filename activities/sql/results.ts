import type { ToolResult } from '../../shared/tools/define';
import type { StatementKind } from './guard';

/** Why a result holds fewer rows than the statement produced. */
export type Truncation = 'rows' | 'bytes';

/** The full record of a sql_query call, returned as `data` for UIs. */
export interface SqlQueryData {
  connection: string;
  engine: 'postgres' | 'mysql' | 'pglite';
  statementType: string;
  kind: StatementKind;
  columns: string[];
  /** JSON-safe values: dates and big numbers as the server's text, binary as `\x…` hex. */
  rows: unknown[][];
  /** Rows in `rows`. */
  rowCount: number;
  truncated: Truncation | false;
  /** Rows inserted, updated or deleted (writes). */
  affectedRows?: number;
  durationMs: number;
  /** True when an earlier attempt of this tool call already committed the write (it was not run again). */
  alreadyApplied?: boolean;
}

/** Longest binary value shown, in bytes; more is elided (binary is rarely useful to a model). */
const MAX_BINARY_BYTES = 64;

/** Turns a driver value into something JSON keeps exactly (no NaN, no BigInt, no Buffer objects). */
export function jsonSafe(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? String(value) : value.toISOString();
  if (value instanceof Uint8Array) {
    const hex = Buffer.from(value.subarray(0, MAX_BINARY_BYTES)).toString('hex');
    return `\\x${hex}${value.length > MAX_BINARY_BYTES ? `… (${value.length} bytes)` : ''}`;
  }
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, jsonSafe(v)]),
    );
  }
  return value;
}

/** Shortens every string in a row so the row's JSON fits in about `budget` bytes. */
function clipRow(row: unknown[], budget: number): unknown[] {
  const each = Math.max(16, Math.floor(budget / Math.max(1, row.length)) - 32);
  return row.map((v) => {
    const text =
      typeof v === 'string' ? v : v !== null && typeof v === 'object' ? JSON.stringify(v) : undefined;
    if (text === undefined || text.length <= each) return v;
    return `${text.slice(0, each)}… (${text.length - each} more characters)`;
  });
}

/**
 * Keeps the rows that fit both caps: at most `maxRows`, and at most `maxBytes` of JSON. A first row
 * that alone is too big is kept with its long values shortened, so the model still sees the shape.
 */
export function capRows(
  rows: unknown[][],
  moreThanMaxRows: boolean,
  maxRows: number,
  maxBytes: number,
): { rows: unknown[][]; truncated: Truncation | false } {
  const out: unknown[][] = [];
  let bytes = 0;
  for (const raw of rows.slice(0, maxRows)) {
    const row = raw.map(jsonSafe);
    const size = Buffer.byteLength(JSON.stringify(row)) + 1;
    if (bytes + size > maxBytes) {
      if (out.length === 0) out.push(clipRow(row, maxBytes));
      return { rows: out, truncated: 'bytes' };
    }
    bytes += size;
    out.push(row);
  }
  return { rows: out, truncated: moreThanMaxRows || rows.length > maxRows ? 'rows' : false };
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** What the model reads: a summary line, a columns line, one JSON array per row, and any truncation notice. */
export function formatQueryResult(
  data: SqlQueryData,
  limits: { maxRows: number; maxBytes: number },
): ToolResult {
  const lines: string[] = [];
  if (data.kind === 'write' && data.affectedRows !== undefined) {
    lines.push(`${data.statementType}: ${plural(data.affectedRows, 'row')} affected (committed).`);
  } else {
    lines.push(`${data.statementType}: ${data.rowCount === 0 ? 'no rows' : plural(data.rowCount, 'row')}.`);
  }
  if (data.columns.length) {
    lines.push(`columns: ${JSON.stringify(data.columns)}`);
    for (const row of data.rows) lines.push(JSON.stringify(row));
  }
  if (data.truncated === 'rows') {
    lines.push(
      `Truncated: showing the first ${data.rowCount} rows; the statement returned more than the row limit of ${limits.maxRows}. ` +
        'Filter with WHERE, aggregate with GROUP BY, or ORDER BY … LIMIT to get the rows you need.',
    );
  } else if (data.truncated === 'bytes') {
    lines.push(
      `Truncated: showing ${plural(data.rowCount, 'row')}, as much as fits the result limit of ${limits.maxBytes} bytes. ` +
        'Select fewer or narrower columns, or aggregate.',
    );
  }
  return { content: lines.join('\n'), data };
}
