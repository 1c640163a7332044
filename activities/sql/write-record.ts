import { createHash } from 'node:crypto';
import type { ToolResult } from '../../shared/tools/define';
import type { SqlDialect } from './guard';
import type { SqlEngine, SqlSession } from './engines/types';
import { sqlFailure } from './errors';

/** The table that makes writes idempotent: one row per committed write, keyed by workflow and tool call. */
export const WRITE_RECORD_TABLE = 'durable_agent_tool_writes';

/** DDL of the record table per dialect; the README repeats it for administrators who pre-create it. */
export const WRITE_RECORD_DDL: Readonly<Record<SqlDialect, string>> = {
  postgres: `CREATE TABLE IF NOT EXISTS ${WRITE_RECORD_TABLE} (
  write_key char(64) PRIMARY KEY,
  workflow_id text NOT NULL,
  tool_call_id text NOT NULL,
  connection_name text NOT NULL,
  statement_type text NOT NULL,
  result text,
  created_at timestamptz NOT NULL DEFAULT now()
)`,
  mysql: `CREATE TABLE IF NOT EXISTS ${WRITE_RECORD_TABLE} (
  write_key CHAR(64) NOT NULL PRIMARY KEY,
  workflow_id VARCHAR(1000) NOT NULL,
  tool_call_id VARCHAR(255) NOT NULL,
  connection_name VARCHAR(64) NOT NULL,
  statement_type VARCHAR(64) NOT NULL,
  result MEDIUMTEXT,
  created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP
) ENGINE=InnoDB`,
};

/** The record key of a tool call: the same for every attempt, different for every call and run. */
export function writeKey(workflowId: string, toolCallId: string): string {
  return createHash('sha256').update(`${workflowId}\n${toolCallId}`).digest('hex');
}

const ready = new WeakSet<SqlEngine>();

/**
 * Creates the record table once per engine, outside any transaction (MySQL DDL would commit one).
 * A role without CREATE is fine when an administrator created the table; otherwise this is a final
 * configuration error that says what to run.
 */
export async function ensureWriteRecordTable(
  engine: SqlEngine,
  connection: string,
  timeoutMs: number,
): Promise<void> {
  if (ready.has(engine)) return;
  await engine.session(
    async (s) => {
      try {
        await s.command(WRITE_RECORD_DDL[engine.dialect]);
      } catch (createErr) {
        // Someone else created it first, or we may not create tables but may use an existing one.
        try {
          await s.query(`SELECT write_key FROM ${WRITE_RECORD_TABLE} WHERE 1 = 0`);
        } catch {
          throw sqlFailure(
            'SqlConfigError',
            `Database connection "${connection}" is writable, but the table ${WRITE_RECORD_TABLE} (the record that makes writes idempotent under retry) does not exist and could not be created: ${(createErr as Error).message}. ` +
              `Create it as an administrator (see the README, "SQL") and grant the connection's role SELECT, INSERT and UPDATE on it.`,
          );
        }
      }
    },
    { timeoutMs },
  );
  ready.add(engine);
}

const placeholders = (dialect: SqlDialect, n: number): string[] =>
  Array.from({ length: n }, (_, i) => (dialect === 'postgres' ? `$${i + 1}` : '?'));

/**
 * Claims the record for a tool call inside the caller's write transaction. Returns false when an
 * earlier attempt already committed it. A concurrent attempt still in flight holds the key's lock,
 * so this waits for it and then sees its row: two attempts can never both write.
 */
export async function claimWrite(
  s: SqlSession,
  dialect: SqlDialect,
  key: {
    writeKey: string;
    workflowId: string;
    toolCallId: string;
    connection: string;
    statementType: string;
  },
): Promise<boolean> {
  const [a, b, c, d, e] = placeholders(dialect, 5);
  const values = `(${a}, ${b}, ${c}, ${d}, ${e})`;
  const columns = '(write_key, workflow_id, tool_call_id, connection_name, statement_type)';
  const sql =
    dialect === 'postgres'
      ? `INSERT INTO ${WRITE_RECORD_TABLE} ${columns} VALUES ${values} ON CONFLICT (write_key) DO NOTHING`
      : `INSERT IGNORE INTO ${WRITE_RECORD_TABLE} ${columns} VALUES ${values}`;
  const res = await s.query(sql, [
    key.writeKey,
    key.workflowId,
    key.toolCallId,
    key.connection,
    key.statementType,
  ]);
  return (res.affectedRows ?? 0) > 0;
}

/** Stores the result of the write with its record, in the same transaction. */
export async function recordWriteResult(
  s: SqlSession,
  dialect: SqlDialect,
  writeKeyValue: string,
  result: ToolResult,
): Promise<void> {
  const [a, b] = placeholders(dialect, 2);
  await s.query(`UPDATE ${WRITE_RECORD_TABLE} SET result = ${a} WHERE write_key = ${b}`, [
    JSON.stringify(result),
    writeKeyValue,
  ]);
}

/** The result an earlier attempt committed, read after the claim found its record. */
export async function earlierWriteResult(
  s: SqlSession,
  dialect: SqlDialect,
  writeKeyValue: string,
): Promise<ToolResult | undefined> {
  const [a] = placeholders(dialect, 1);
  const res = await s.query(`SELECT result FROM ${WRITE_RECORD_TABLE} WHERE write_key = ${a}`, [
    writeKeyValue,
  ]);
  const text = res.rows[0]?.[0];
  return typeof text === 'string' ? (JSON.parse(text) as ToolResult) : undefined;
}
