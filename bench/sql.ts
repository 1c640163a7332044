/**
 * What the SQL tool costs over a bare driver query, per engine, for the same parameterised SELECT
 * (a three-table join with GROUP BY on the shipped sample database). Run: `npx tsx bench/sql.ts [N]`
 * (default 200). Needs the local Postgres and MariaDB (see testkit/sql-fixtures.ts for URLs).
 *
 * - tool: the sql_query activity body in an activity context — guard parse, pooled connection,
 *   READ ONLY transaction with a time limit, cursor, row/size caps, formatting.
 * - raw: the driver alone — pg `query`, mysql2 `execute` (pooled), PGlite `query` on the main thread.
 */
import { PGlite } from '@electric-sql/pglite';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { createSqlActivities, SqlConnections } from '../activities/sql';
import type { DatabasesConfig } from '../activities/sql/config';
import { DatabaseConnectionSchema } from '../activities/sql/config';
import { sampleStatements } from '../activities/sql/sample-db/seed';
import { MYSQL_URL, PG_URL, fixtureName } from '../testkit/sql-fixtures';
import type { ToolResult } from '../shared/tools/define';
import { percentile } from './stats';

const N = Number(process.argv[2] ?? 200);
const WARMUP = 20;

const JOIN = (p: string) =>
  `SELECT c.name, count(DISTINCT o.id) AS orders, sum(oi.quantity * oi.unit_price) AS revenue FROM customers c JOIN orders o ON o.customer_id = c.id JOIN order_items oi ON oi.order_id = o.id WHERE c.country = ${p} GROUP BY c.name ORDER BY revenue DESC LIMIT 20`;

async function sample(fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < WARMUP; i += 1) await fn();
  const out: number[] = [];
  for (let i = 0; i < N; i += 1) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

function report(engine: string, tool: number[], raw: number[]): void {
  const [t50, t95, r50, r95] = [
    percentile(tool, 50),
    percentile(tool, 95),
    percentile(raw, 50),
    percentile(raw, 95),
  ];
  console.log(
    `${engine.padEnd(9)} tool p50 ${t50.toFixed(2).padStart(7)} ms  p95 ${t95.toFixed(2).padStart(7)} ms | ` +
      `raw p50 ${r50.toFixed(2).padStart(7)} ms  p95 ${r95.toFixed(2).padStart(7)} ms | ratio p50 ${(t50 / r50).toFixed(2)}×  p95 ${(t95 / r95).toFixed(2)}×`,
  );
}

async function toolTimes(config: DatabasesConfig, connection: string, sql: string): Promise<number[]> {
  const connections = new SqlConnections(config);
  const { sql_query } = createSqlActivities({ config, connections });
  const env = new MockActivityEnvironment(
    { workflowExecution: { workflowId: 'bench', runId: 'bench' } },
    { logger: new DefaultLogger('ERROR') },
  );
  try {
    const first: ToolResult = await env.run(sql_query, {
      toolCallId: 'b',
      args: { connection, sql, params: ['FR'] },
    });
    if (first.isError) throw new Error(first.content);
    return await sample(() =>
      env.run(sql_query, { toolCallId: 'b', args: { connection, sql, params: ['FR'] } }),
    );
  } finally {
    await connections.close();
  }
}

async function postgres(): Promise<void> {
  const schema = fixtureName('bench');
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(`SET search_path TO ${schema}`);
  for (const s of sampleStatements()) await admin.query(s);
  await admin.query('ANALYZE');
  const pool = new pg.Pool({ connectionString: PG_URL, max: 4, options: `-c search_path=${schema}` });
  try {
    const sql = JOIN('$1');
    const raw = await sample(() => pool.query(sql, ['FR']));
    const conn = DatabaseConnectionSchema.parse({
      engine: 'postgres',
      url: PG_URL,
      schema,
      allowPrivilegedRole: true,
    });
    report('postgres', await toolTimes({ db: conn }, 'db', sql), raw);
  } finally {
    await pool.end();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

async function mariadb(): Promise<void> {
  const database = fixtureName('bench');
  const admin = await mysql.createConnection({ uri: MYSQL_URL });
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.query(`USE ${database}`);
  for (const s of sampleStatements()) await admin.query(s);
  const url = new URL(MYSQL_URL);
  url.pathname = `/${database}`;
  const pool = mysql.createPool({ uri: url.toString(), connectionLimit: 4 });
  try {
    const sql = JOIN('?');
    const raw = await sample(() => pool.execute(sql, ['FR']));
    const conn = DatabaseConnectionSchema.parse({
      engine: 'mysql',
      url: url.toString(),
      allowPrivilegedRole: true,
    });
    report('mariadb', await toolTimes({ db: conn }, 'db', sql), raw);
  } finally {
    await pool.end();
    await admin.query(`DROP DATABASE ${database}`);
    await admin.end();
  }
}

async function pglite(): Promise<void> {
  const db = await PGlite.create();
  try {
    await db.exec(`${sampleStatements().join(';\n')};\nANALYZE;`);
    const sql = JOIN('$1');
    const raw = await sample(() => db.query(sql, ['FR']));
    report(
      'pglite',
      await toolTimes({ sample: DatabaseConnectionSchema.parse({ engine: 'pglite' }) }, 'sample', sql),
      raw,
    );
  } finally {
    await db.close();
  }
}

async function main(): Promise<void> {
  console.log(`sql_query activity body vs raw driver, same SELECT, N=${N} after ${WARMUP} warm-up runs`);
  await postgres();
  await mariadb();
  await pglite();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
