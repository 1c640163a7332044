import { z } from 'zod';
import { schemaOnce } from '../schema-once';
import type { ToolActivityOptions } from './define';
import { defineTool } from './define';

/**
 * Every error type the SQL activities raise (a closed union, so workflows, retry policies and UIs can
 * match on it). Problems the model can fix (refusals, syntax, unknown columns, timeouts, unknown
 * connection names) are not errors at all: they come back as tool results with `isError`.
 * `SqlTransientError` (deadlock, serialization failure, a connection dropped mid-statement) retries;
 * all others are final.
 */
export type SqlErrorType =
  'SqlInvalidArguments' | 'SqlConfigError' | 'SqlAuthFailed' | 'SqlConnectionFailed' | 'SqlTransientError';

/** Error types that retrying the same call cannot fix; also listed in the tools' retry policies. */
export const NON_RETRYABLE_SQL_ERRORS = [
  'SqlInvalidArguments',
  'SqlConfigError',
  'SqlAuthFailed',
  'SqlConnectionFailed',
] as const satisfies readonly SqlErrorType[];

/** Largest row cap a call may ask for; connections cap it further with `maxRows`. */
export const MAX_ROWS_LIMIT = 1000;

const connection = schemaOnce('shared/tools/sql#connection', () =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .optional()
    .describe(
      'Name of a configured database connection; omit for "sample" (or the only configured one) / 已配置数据库连接的名称；省略则使用 "sample"（或唯一配置的连接）',
    ),
);

const scalar = schemaOnce('shared/tools/sql#scalar', () =>
  z.union([z.string().max(100_000), z.number(), z.boolean(), z.null()]),
);

/** Arguments of `sql_query`. */
export const SqlQueryArgs = schemaOnce('shared/tools/sql#SqlQueryArgs', () =>
  z
    .object({
      connection,
      // Generous on purpose: the guard refuses long statements with a reason the model can act on.
      sql: z
        .string()
        .min(1)
        .max(1_000_000)
        .describe(
          "Exactly one SQL statement in the connection's dialect. Use placeholders ($1, $2 for Postgres; ? for MySQL/MariaDB) for values / 一条 SQL 语句；值请使用占位符（Postgres 用 $1、$2，MySQL/MariaDB 用 ?）",
        ),
      params: z
        .array(z.union([scalar, z.array(scalar).max(1000)]))
        .max(100)
        .default([])
        .describe(
          'Values for the placeholders, in order; always sent as bound parameters / 占位符的值，按顺序，始终作为绑定参数传递',
        ),
      maxRows: z
        .number()
        .int()
        .min(1)
        .max(MAX_ROWS_LIMIT)
        .optional()
        .describe(
          "Most rows to return (default and upper bound: the connection's limit, 100 unless configured) / 最多返回的行数（默认及上限为连接的限制，未配置时为 100）",
        ),
    })
    .strict(),
);

/** Arguments of `sql_schema`. */
export const SqlSchemaArgs = schemaOnce('shared/tools/sql#SqlSchemaArgs', () =>
  z
    .object({
      connection,
      tables: z
        .array(z.string().min(1).max(200))
        .min(1)
        .max(100)
        .optional()
        .describe(
          'Only these tables (case-insensitive); omit for all / 仅这些表（不区分大小写）；省略则列出全部',
        ),
    })
    .strict(),
);

const activity: ToolActivityOptions = {
  // The statement itself is bounded by the connection's statementTimeoutMs (at most 10 minutes);
  // heartbeats notice a dead worker long before this.
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '15 seconds',
  heartbeatsOnClock: true,
  maximumAttempts: 5,
  nonRetryableErrorTypes: [...NON_RETRYABLE_SQL_ERRORS],
};

/** `sql_query`: runs one guarded SQL statement on a named connection. */
export const sqlQueryTool = defineTool({
  name: 'sql_query',
  description:
    'Runs one SQL statement on a configured database and returns the rows. Read-only unless the connection is configured writable; ' +
    'statements are checked by a SQL parser, run in a read-only transaction with a time limit, and the result is capped. ' +
    'Call sql_schema first to learn the tables and columns. Pass values as params, never inside the SQL text.',
  description_zh:
    '在已配置的数据库上执行一条 SQL 语句并返回结果行。除非连接配置为可写，否则只读；语句先经 SQL 解析器检查，在带时限的只读事务中执行，结果有行数和大小上限。' +
    '请先调用 sql_schema 了解表和列。值请通过 params 传递，不要写进 SQL 文本。',
  category: 'database',
  sign: 'z',
  inputs: SqlQueryArgs,
  output:
    'the statement type, row count and rows (one JSON array per line after a columns line), with a notice when the result was truncated; refusals and database errors as tool errors that say what to change',
  activity,
});

/** `sql_schema`: lists the tables, columns, keys and row estimates of a named connection. */
export const sqlSchemaTool = defineTool({
  name: 'sql_schema',
  description:
    'Lists the tables of a configured database with their columns and types, primary and foreign keys, estimated row counts and, for text columns with a few repeated values (a status, a category), those values, so you can write correct SQL for sql_query.',
  description_zh:
    '列出已配置数据库的表及其列和类型、主键与外键、估计行数，以及取值少且重复的文本列（如状态、类别）的取值，便于为 sql_query 编写正确的 SQL。',
  category: 'database',
  sign: 'z',
  inputs: SqlSchemaArgs,
  output:
    'one block per table: name, row estimate, columns with types and NOT NULL (and the values of few-valued text columns), keys',
  // A catalogue read. sql_query is never local: a writable connection may change rows with it.
  local: true,
  activity,
});
