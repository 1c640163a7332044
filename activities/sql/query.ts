import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import { heartbeatEvery } from '../heartbeats';
import { formatZodIssues } from '../../shared/zod-issues';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';
import { SqlQueryArgs } from '../../shared/tools/sql';
import type { SqlStallPoint } from './config';
import type { ResolvedConnection, SqlConnections } from './connections';
import type { SqlEngine, SqlSession, StatementResult } from './engines/types';
import type { DbErrorClass } from './errors';
import {
  SqlConnectError,
  SqlResultTooLargeError,
  classifyDbError,
  connectionFailure,
  describeDbError,
  redact,
  sqlFailure,
} from './errors';
import type { CheckSqlInput, GuardVerdict } from './guard';
import { checkSql } from './guard';
import type { SqlQueryData } from './results';
import { capRows, formatQueryResult } from './results';
import {
  claimWrite,
  earlierWriteResult,
  ensureWriteRecordTable,
  recordWriteResult,
  writeKey,
} from './write-record';

/** Arguments of `sql_query` after validation. */
export type SqlQueryInput = ToolActivityInput<z.input<typeof SqlQueryArgs>>;

/** Test-only pause inside sql_query, so a test can kill the worker at an exact point. */
export interface SqlStallHook {
  stallAt: SqlStallPoint;
  stallMs: number;
}

/** What the sql_query activity runs with. */
export interface SqlQueryDeps {
  connections: SqlConnections;
  /** The statement guard; replaceable so tests can prove the later layers hold on their own. */
  guard?: (input: CheckSqlInput) => Promise<GuardVerdict>;
  /** Test-only pause; defaults to the connection's `testHooks`. */
  stall?: SqlStallHook;
}

/** Statement types a Postgres cursor can hold, so the server stops after the rows we keep. */
const CURSOR_TYPES = new Set(['SELECT', 'VALUES']);
const CURSOR = 'durable_agent_rows';

/** How often a running call heartbeats unless its heartbeat timeout is short (the tool's is 15 s). */
const HEARTBEAT_MS = 3000;

/** A statement error the session survived (it rolled back): returned to the model, not thrown. */
/** A write that changed more rows than the connection's `maxAffectedRows`; thrown to roll it back. */
class TooManyRowsChanged extends Error {
  override readonly name = 'TooManyRowsChanged';
  constructor(readonly affectedRows: number) {
    super(`the statement changed ${affectedRows} rows`);
  }
}

class StatementFailed {
  constructor(
    readonly error: unknown,
    readonly cls: DbErrorClass,
  ) {}
}

/** What one run of the statement produced, before formatting. */
interface Outcome {
  result: StatementResult;
  /** A write an earlier attempt already committed: its stored result. */
  earlier?: ToolResult;
}

const mysqlFlavour = new WeakMap<SqlEngine, 'mariadb' | 'mysql'>();

/**
 * Sets the server-side time limit of a MySQL-family session. MariaDB has max_statement_time
 * (seconds, every statement); MySQL only max_execution_time (milliseconds, SELECT only).
 */
async function mysqlLimits(
  s: SqlSession,
  engine: SqlEngine,
  timeoutMs: number,
  selectLimit: string,
): Promise<void> {
  const flavour = mysqlFlavour.get(engine) ?? 'mariadb';
  const limit =
    flavour === 'mariadb' ? `max_statement_time = ${timeoutMs / 1000}` : `max_execution_time = ${timeoutMs}`;
  try {
    await s.command(`SET SESSION ${limit}, sql_select_limit = ${selectLimit}`);
    mysqlFlavour.set(engine, flavour);
  } catch (err) {
    // ER_UNKNOWN_SYSTEM_VARIABLE: this is MySQL, not MariaDB.
    if ((err as { errno?: number }).errno !== 1193 || flavour === 'mysql') throw err;
    mysqlFlavour.set(engine, 'mysql');
    await mysqlLimits(s, engine, timeoutMs, selectLimit);
  }
}

/**
 * Runs `body` in a transaction. On a statement error it rolls back and returns the error as a
 * {@link StatementFailed} value: the connection is healthy and goes back to the pool. Anything else
 * (the rollback failed, the connection dropped) is thrown, and the engine discards the connection.
 */
async function transaction<T>(
  s: SqlSession,
  begin: string,
  end: 'COMMIT' | 'ROLLBACK',
  body: () => Promise<T>,
): Promise<T | StatementFailed> {
  await s.command(begin);
  try {
    const value = await body();
    await s.command(end);
    return value;
  } catch (err) {
    const cls = classifyDbError(err);
    if (err instanceof ApplicationFailure || (cls !== 'statement' && cls !== 'timeout')) throw err;
    await s.command('ROLLBACK');
    return new StatementFailed(err, cls);
  }
}

async function runRead(
  conn: ResolvedConnection,
  sql: string,
  params: readonly unknown[],
  statementType: string,
  keep: number,
  signal: AbortSignal,
): Promise<Outcome | StatementFailed> {
  const { engine, config } = conn;
  const timeoutMs = config.statementTimeoutMs;
  return engine.session(
    async (s) => {
      if (engine.dialect === 'mysql') {
        // sql_select_limit makes the server stop after the rows we keep (a LIMIT in the statement wins).
        await mysqlLimits(s, engine, timeoutMs, String(keep));
        return transaction(s, 'START TRANSACTION READ ONLY', 'ROLLBACK', async () => ({
          result: await s.query(sql, params, keep),
        }));
      }
      return transaction(s, 'BEGIN TRANSACTION READ ONLY', 'ROLLBACK', async () => {
        // PGlite ignores statement_timeout; its engine enforces the limit itself.
        if (engine.kind === 'postgres') await s.command(`SET LOCAL statement_timeout = ${timeoutMs}`);
        if (!CURSOR_TYPES.has(statementType)) return { result: await s.query(sql, params, keep) };
        // A cursor makes the server produce only the rows we keep, however many the query would return.
        const prefix = `DECLARE ${CURSOR} NO SCROLL CURSOR FOR `;
        await s.query(`${prefix}${sql}`, params).catch((err: unknown) => {
          // Error positions must point into the model's statement, not into our wrapper.
          const e = err as { position?: string };
          if (e.position && Number(e.position) > prefix.length)
            e.position = String(Number(e.position) - prefix.length);
          throw err;
        });
        return { result: await s.query(`FETCH FORWARD ${keep} FROM ${CURSOR}`) };
      });
    },
    { timeoutMs, signal },
  );
}

async function runWrite(
  conn: ResolvedConnection,
  sql: string,
  params: readonly unknown[],
  statementType: string,
  keep: number,
  key: { workflowId: string; toolCallId: string },
  finish: (result: StatementResult) => ToolResult,
  signal: AbortSignal,
): Promise<Outcome | StatementFailed> {
  const { engine, config } = conn;
  const timeoutMs = config.statementTimeoutMs;
  await ensureWriteRecordTable(engine, conn.name, timeoutMs);
  const record = {
    ...key,
    writeKey: writeKey(key.workflowId, key.toolCallId),
    connection: conn.name,
    statementType,
  };
  return engine.session(
    async (s) => {
      if (engine.dialect === 'mysql') await mysqlLimits(s, engine, timeoutMs, 'DEFAULT');
      const begin =
        engine.dialect === 'mysql' ? 'START TRANSACTION READ WRITE' : 'BEGIN TRANSACTION READ WRITE';
      let earlier = false;
      const outcome = await transaction(s, begin, 'COMMIT', async (): Promise<Outcome | undefined> => {
        if (engine.kind === 'postgres') await s.command(`SET LOCAL statement_timeout = ${timeoutMs}`);
        if (!(await claimWrite(s, engine.dialect, record))) {
          earlier = true;
          return undefined;
        }
        const result = await s.query(sql, params, keep);
        // Inside the transaction: over the cap, throwing rolls the change (and the claim) back.
        if ((result.affectedRows ?? 0) > config.maxAffectedRows)
          throw new TooManyRowsChanged(result.affectedRows ?? 0);
        await recordWriteResult(s, engine.dialect, record.writeKey, finish(result));
        return { result };
      });
      if (outcome instanceof StatementFailed) return outcome;
      if (!earlier && outcome) return outcome;
      // The claim found a committed record: this attempt wrote nothing (its transaction committed an
      // empty claim), so return what the earlier attempt did.
      const stored = await earlierWriteResult(s, engine.dialect, record.writeKey);
      if (!stored)
        throw sqlFailure('SqlTransientError', 'the write record of an earlier attempt has no result yet');
      return { result: { columns: [], rows: [], rowCount: 0 }, earlier: stored };
    },
    { timeoutMs, signal },
  );
}

async function stall(hook: SqlStallHook | undefined, at: SqlStallPoint): Promise<void> {
  if (!hook || hook.stallAt !== at) return;
  const ctx = Context.current();
  ctx.log.warn('sql_query test hook: stalling', { stallAt: at, stallMs: hook.stallMs });
  await ctx.sleep(hook.stallMs);
}

/** The tool error for a statement the database rejected or stopped: what happened and what to change. */
function statementError(failed: StatementFailed, conn: ResolvedConnection): ToolResult {
  if (failed.error instanceof TooManyRowsChanged) {
    return {
      content:
        `The statement would have changed ${failed.error.affectedRows} rows, more than the ${conn.config.maxAffectedRows} ` +
        `allowed per statement on connection "${conn.name}", so it was rolled back and nothing changed. ` +
        'Narrow the WHERE clause (e.g. by id), or split the change into smaller statements.',
      isError: true,
      data: { connection: conn.name, error: 'too_many_rows', affectedRows: failed.error.affectedRows },
    };
  }
  if (failed.cls === 'timeout') {
    return {
      content:
        `The statement was stopped after ${conn.config.statementTimeoutMs} ms, the time limit of connection "${conn.name}". ` +
        'Make it cheaper: filter with WHERE on indexed columns, aggregate, or add a LIMIT.',
      isError: true,
      data: { connection: conn.name, error: 'timeout' },
    };
  }
  return {
    content: `The database rejected the statement: ${redact(describeDbError(failed.error), conn.secrets)}. Fix the statement and try again (sql_schema lists the tables and columns).`,
    isError: true,
    data: { connection: conn.name, error: 'statement' },
  };
}

/** Turns an error thrown out of a session into the activity's failure (connection, auth, transient). */
function sessionFailure(err: unknown, conn: ResolvedConnection): unknown {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof SqlConnectError)
    return connectionFailure(conn.name, conn.engine.kind, err.cause, conn.secrets);
  const cls = classifyDbError(err);
  if (cls === 'auth' || cls === 'connection')
    return connectionFailure(conn.name, conn.engine.kind, err, conn.secrets);
  if (Context.current().cancellationSignal.aborted) return err;
  return sqlFailure(
    'SqlTransientError',
    `Database connection "${conn.name}" failed during the statement: ${redact(describeDbError(err), conn.secrets)}; will retry`,
  );
}

/**
 * The `sql_query` activity: guard → one statement in a transaction → capped, formatted rows.
 *
 * Reads run in a READ ONLY transaction (plus, on MySQL, a read-only session for read-only
 * connections) under the connection's time limit. Writes run, on writable connections only, in one
 * transaction with a record keyed by workflow id + tool call id, so a retried attempt returns the
 * earlier result instead of writing twice. Refusals and statement errors are tool errors the model
 * can act on; connection and login failures are final activity failures naming the connection.
 */
export async function sqlQuery(deps: SqlQueryDeps, input: SqlQueryInput): Promise<ToolResult> {
  const ctx = Context.current();
  const parsed = SqlQueryArgs.safeParse(input.args);
  if (!parsed.success) {
    throw sqlFailure('SqlInvalidArguments', `Invalid sql_query arguments: ${formatZodIssues(parsed.error)}`);
  }
  const args = parsed.data;
  const conn = deps.connections.resolve(args.connection);
  if ('error' in conn) return { content: conn.error, isError: true, data: { error: 'unknown_connection' } };
  const { engine, config } = conn;

  const verdict = await (deps.guard ?? checkSql)({
    dialect: engine.dialect,
    sql: args.sql,
    allowWrites: config.writable,
  });
  if (!verdict.allowed) {
    return {
      content: `Refused (${verdict.code}): ${verdict.reason}`,
      isError: true,
      data: { connection: conn.name, refused: true, code: verdict.code },
    };
  }

  let roleProblem: string | null;
  try {
    roleProblem = await deps.connections.checkRole(conn);
  } catch (err) {
    throw sessionFailure(err, conn);
  }
  if (roleProblem) throw sqlFailure('SqlConfigError', roleProblem);

  const maxRows = Math.min(args.maxRows ?? config.maxRows, config.maxRows);
  const keep = maxRows + 1;
  const started = Date.now();
  const toData = (result: StatementResult): SqlQueryData => {
    const capped = capRows(result.rows, result.rowCount > maxRows, maxRows, config.maxResultBytes);
    const isWrite = verdict.kind === 'write' && /^(INSERT|UPDATE|DELETE)$/.test(verdict.statementType);
    return {
      connection: conn.name,
      engine: engine.kind,
      statementType: verdict.statementType,
      kind: verdict.kind,
      columns: result.columns,
      rows: capped.rows,
      rowCount: capped.rows.length,
      truncated: capped.truncated,
      ...(isWrite && result.affectedRows !== undefined ? { affectedRows: result.affectedRows } : {}),
      durationMs: Date.now() - started,
    };
  };
  const limits = { maxRows, maxBytes: config.maxResultBytes };
  const finish = (result: StatementResult) => formatQueryResult(toData(result), limits);

  const beat = setInterval(() => ctx.heartbeat(), heartbeatEvery(HEARTBEAT_MS, ctx.info));
  try {
    let outcome: Outcome | StatementFailed;
    try {
      outcome =
        verdict.kind === 'read'
          ? await runRead(conn, args.sql, args.params, verdict.statementType, keep, ctx.cancellationSignal)
          : await runWrite(
              conn,
              args.sql,
              args.params,
              verdict.statementType,
              keep,
              {
                // A standalone activity (no workflow) is keyed by its own activity id instead.
                workflowId: ctx.info.workflowExecution?.workflowId ?? `activity:${ctx.info.activityId}`,
                toolCallId: input.toolCallId,
              },
              finish,
              ctx.cancellationSignal,
            );
    } catch (err) {
      if (err instanceof SqlResultTooLargeError) {
        return {
          content:
            `The result was larger than ${err.budgetBytes} bytes while it arrived, so the statement was stopped. ` +
            'Select fewer or narrower columns (e.g. left(col, 200) or length(col)), or fewer rows.',
          isError: true,
          data: { connection: conn.name, error: 'result_too_large' },
        };
      }
      if (classifyDbError(err) === 'timeout' && !(err instanceof ApplicationFailure)) {
        return statementError(new StatementFailed(err, 'timeout'), conn);
      }
      throw sessionFailure(err, conn);
    }
    if (outcome instanceof StatementFailed) return statementError(outcome, conn);
    if (outcome.earlier) {
      const data = { ...(outcome.earlier.data as SqlQueryData), alreadyApplied: true };
      return {
        content: `Already applied by an earlier attempt of this tool call; not run again. ${outcome.earlier.content}`,
        data,
      };
    }
    const result = finish(outcome.result);
    if (verdict.kind === 'write') await stall(deps.stall ?? config.testHooks, 'write-committed');
    return result;
  } finally {
    clearInterval(beat);
  }
}
