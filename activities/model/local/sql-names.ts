/**
 * Names in a small model's SQL checked against the schema it has read. Qwen2.5-Coder-0.5B writes the
 * task's words as columns ("customers from Germany (country code DE)" → `country_code`) and, shown
 * the refusal and then the schema with a column `country`, writes `country_code` again (measured:
 * naming the real column in the refusal did not help either). So once a run has read the schema, a
 * name that is neither a table, a column, an alias of the statement nor SQL, and that is a column of
 * a table the statement reads with a word added (`country_code` for `country`, `category_name` for
 * `category`) or a plural's `s`, is replaced by that column, when exactly one column fits; a table
 * named in the singular (`customer`) by the table.
 */
import { SCHEMA_COLUMN, SCHEMA_HEAD, SCHEMA_TABLE } from './prompt';

/** Words of SQL (keywords, functions, types) a statement may hold besides the schema's names. */
const SQL_WORDS = new Set(
  `select from where and or not in is null as by group order having limit offset distinct join inner
  left right outer full cross on using like ilike between case when then else end asc desc nulls
  first last union all intersect except exists any some with recursive over partition filter
  count sum avg min max round floor ceil ceiling abs coalesce nullif lower upper length trim
  substring substr concat cast extract date_trunc date_part now current_date current_timestamp
  interval year month day hour minute second week quarter epoch true false numeric integer int
  bigint text varchar char decimal float real double precision date time timestamp boolean
  string_agg array_agg greatest least to_char`.split(/\s+/),
);

/** Tables and their columns, from sql_schema's text (the tool's own format); empty for other text. */
export function schemaTables(content: string): Map<string, string[]> {
  const tables = new Map<string, string[]>();
  const lines = content.split('\n');
  if (!SCHEMA_HEAD.test(lines[0] ?? '')) return tables;
  let current: string[] | undefined;
  for (const line of lines.slice(1)) {
    const t = SCHEMA_TABLE.exec(line);
    const c = SCHEMA_COLUMN.exec(line);
    if (t) {
      current = [];
      tables.set((t[1] as string).toLowerCase(), current);
    } else if (current && c && !/^(?:PRIMARY|FOREIGN)$/.test(c[1] as string)) {
      current.push((c[1] as string).toLowerCase());
    }
  }
  return tables;
}

/** A name and where it stands in the statement (outside quoted text). */
interface Name {
  word: string;
  index: number;
}

/** The names of a statement, outside '…' strings and "…" identifiers, with what follows each. */
function namesOf(sql: string): { names: Name[]; next: (n: Name) => string } {
  const names: Name[] = [];
  const re = /'(?:[^']|'')*'|"(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_]*/g;
  for (const m of sql.matchAll(re)) {
    if (m[0].startsWith("'") || m[0].startsWith('"')) continue;
    names.push({ word: m[0], index: m.index ?? 0 });
  }
  const next = (n: Name) =>
    sql
      .slice(n.index + n.word.length)
      .trimStart()
      .charAt(0);
  return { names, next };
}

/**
 * Whether the `i`th name is an alias (after AS or a table name, or before a dot: `c.country`) or a
 * function (before a bracket), given the character that follows it.
 */
function aliasOrFunction(
  lower: string[],
  i: number,
  following: string,
  tables: Map<string, string[]>,
): boolean {
  const prev = lower[i - 1];
  return prev === 'as' || (prev !== undefined && tables.has(prev)) || following === '.' || following === '(';
}

/**
 * The column a wrong name stands for: the one column of the statement's tables it starts with
 * (`category_name`: category, not name), else the one it ends with (`customer_country`), else the
 * one it is a plural or singular of.
 */
function columnFor(word: string, columns: string[]): string | undefined {
  const w = word.toLowerCase();
  const only = (fits: string[]) => {
    const set = [...new Set(fits)];
    return set.length === 1 ? set[0] : undefined;
  };
  const starts = columns.filter((c) => w.startsWith(`${c}_`));
  if (starts.length) return only(starts);
  const ends = columns.filter((c) => w.endsWith(`_${c}`));
  if (ends.length) return only(ends);
  return only(columns.filter((c) => w === `${c}s` || `${w}s` === c));
}

/**
 * The statement with its unknown names replaced by the columns they stand for (see above), and the
 * replacements made; the statement unchanged when there is nothing to replace or no schema.
 */
export function withSchemaNames(
  sql: string,
  tables: Map<string, string[]>,
): { sql: string; replaced: [string, string][] } {
  if (tables.size === 0) return { sql, replaced: [] };
  const moved = withOwningTable(sql, tables);
  if (moved) {
    const rest = withColumnNames(moved.sql, tables);
    return { sql: rest.sql, replaced: [moved.replaced, ...rest.replaced] };
  }
  return withColumnNames(sql, tables);
}

/** The names part of {@link withSchemaNames}: unknown names replaced by the columns they stand for. */
function withColumnNames(
  sql: string,
  tables: Map<string, string[]>,
): { sql: string; replaced: [string, string][] } {
  const { names, next } = namesOf(sql);
  const lower = names.map((n) => n.word.toLowerCase());
  const read = lower.filter((w) => tables.has(w));
  const columns = (read.length ? read : [...tables.keys()]).flatMap((t) => tables.get(t) ?? []);
  const known = new Set<string>([...SQL_WORDS, ...tables.keys(), ...columns]);
  // Aliases: the name after AS, after a table name, or before a dot (`c.country`); functions.
  names.forEach((n, i) => {
    if (aliasOrFunction(lower, i, next(n), tables)) known.add(lower[i] as string);
  });
  const replaced = new Map<string, string>();
  for (const w of lower) {
    if (known.has(w) || replaced.has(w)) continue;
    // A table named in the singular (`customer`), else a column.
    const name = tables.has(`${w}s`) ? `${w}s` : columnFor(w, columns);
    if (name) replaced.set(w, name);
  }
  if (replaced.size === 0) return { sql, replaced: [] };
  let out = '';
  let end = 0;
  for (const n of names) {
    const column = replaced.get(n.word.toLowerCase());
    if (!column) continue;
    out += sql.slice(end, n.index) + column;
    end = n.index + n.word.length;
  }
  return { sql: out + sql.slice(end), replaced: [...replaced.entries()] };
}

/**
 * A statement that reads one table for columns only another table has, moved to that table:
 * Qwen2.5-Coder-0.5B counts "orders … cancelled or refunded" as `FROM order_items WHERE status = …`,
 * and once the schema shows `status` under `orders` it writes the same statement again. Only when the
 * statement reads exactly one table (no join), and exactly one other table has every column the
 * statement names: those its table lacks and those it has.
 */
function withOwningTable(
  sql: string,
  tables: Map<string, string[]>,
): { sql: string; replaced: [string, string] } | undefined {
  const { names, next } = namesOf(sql);
  const lower = names.map((n) => n.word.toLowerCase());
  const read = [...new Set(lower.filter((w) => tables.has(w)))];
  if (read.length !== 1 || lower.includes('join')) return undefined;
  const table = read[0] as string;
  const own = new Set(tables.get(table) ?? []);
  const unknown = new Set<string>();
  const used = new Set<string>();
  lower.forEach((w, i) => {
    if (aliasOrFunction(lower, i, next(names[i] as Name), tables) || SQL_WORDS.has(w) || tables.has(w))
      return;
    (own.has(w) ? used : unknown).add(w);
  });
  if (unknown.size === 0) return undefined;
  // The other table must have every column the statement names, its own table's included.
  const needed = [...unknown, ...used];
  const owners = [...tables.entries()].filter(
    ([name, columns]) => name !== table && needed.every((w) => columns.includes(w)),
  );
  if (owners.length !== 1) return undefined;
  const owner = (owners[0] as [string, string[]])[0];
  let out = '';
  let end = 0;
  for (const n of names) {
    if (n.word.toLowerCase() !== table) continue;
    out += sql.slice(end, n.index) + owner;
    end = n.index + n.word.length;
  }
  return { sql: out + sql.slice(end), replaced: [table, owner] };
}
