import { randomUUID } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { DatabaseConnectionConfig, DatabasesConfig } from '../activities/sql/config';
import { DatabaseConnectionSchema } from '../activities/sql/config';
import type { SqlActivityDeps } from '../activities/sql';
import { createSqlActivities, SqlConnections } from '../activities/sql';
import type { ToolResult } from '../shared/tools/define';
import { SQL_CORPUS } from './sql-corpus';

/** The servers that run on this machine (trust auth / empty root password); override for others. */
export const PG_URL = process.env.DA_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** MariaDB admin URL; fixtures get their own database on this server. */
export const MYSQL_URL = process.env.DA_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

/** A unique lower-case name for a fixture schema or database, so parallel runs never clash. */
export function fixtureName(prefix = 'sqlt'): string {
  return `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
}

/**
 * Whether a server-wide name (schema, database, role, user) is another fixture's, made by a test
 * file running at the same time ({@link fixtureName}). A checksum leaves those out, so it sees only
 * what the statements under test could have created.
 */
function belongsToOthers(name: string, own: string): boolean {
  return name !== own && /^[a-z]+_[0-9a-f]{12}$/.test(name);
}

/** A database holding the corpus fixture, on a real server, in its own schema (Postgres) or database (MariaDB). */
export interface SqlFixture {
  /** Connection settings for the tool (`writable` as asked), pointing at the fixture. */
  connection(overrides?: Partial<DatabaseConnectionConfig>): DatabaseConnectionConfig;
  /** A fingerprint of everything the corpus could touch: rows, tables, schemas, roles, databases. */
  checksum(): Promise<string>;
  /** Runs admin SQL inside the fixture (test setup and assertions only). */
  admin(sql: string, params?: unknown[]): Promise<unknown[]>;
  drop(): Promise<void>;
}

/** The corpus fixture in a fresh Postgres schema. */
export async function postgresFixture(): Promise<SqlFixture> {
  const schema = fixtureName();
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.query(`SET search_path TO ${schema}`);
  for (const sql of SQL_CORPUS.postgres.schema) await client.query(sql);
  return {
    connection: (overrides = {}) =>
      // The fixture logs in as the test server's admin; least privilege has its own test.
      DatabaseConnectionSchema.parse({
        engine: 'postgres',
        url: PG_URL,
        schema,
        allowPrivilegedRole: true,
        ...overrides,
      }),
    async checksum() {
      const parts: unknown[] = [];
      const tables = await client.query(
        `SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 ORDER BY 1`,
        [schema],
      );
      parts.push(tables.rows);
      for (const { relname, relkind } of tables.rows as { relname: string; relkind: string }[]) {
        if (relkind === 'r') {
          const r = await client.query(
            `SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS h FROM ${schema}.${relname} t`,
          );
          parts.push(relname, r.rows[0]);
        }
        if (relkind === 'S')
          parts.push(
            relname,
            (await client.query(`SELECT last_value, is_called FROM ${schema}.${relname}`)).rows,
          );
      }
      const mine = <T extends Record<string, unknown>>(rows: T[], key: keyof T) =>
        rows.filter((r) => !belongsToOthers(String(r[key]), schema));
      parts.push(mine((await client.query('SELECT nspname FROM pg_namespace ORDER BY 1')).rows, 'nspname'));
      parts.push(
        mine((await client.query('SELECT rolname, rolsuper FROM pg_roles ORDER BY 1')).rows, 'rolname'),
      );
      parts.push(mine((await client.query('SELECT datname FROM pg_database ORDER BY 1')).rows, 'datname'));
      parts.push(
        (
          await client.query(
            `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position`,
            [schema],
          )
        ).rows,
      );
      return JSON.stringify(parts);
    },
    async admin(sql, params = []) {
      return (await client.query(sql, params)).rows as unknown[];
    },
    async drop() {
      await client.query(`DROP SCHEMA ${schema} CASCADE`);
      await client.end();
    },
  };
}

/** The corpus fixture in a fresh MariaDB database. */
export async function mysqlFixture(): Promise<SqlFixture> {
  const database = fixtureName();
  const conn = await mysql.createConnection({ uri: MYSQL_URL });
  await conn.query(`CREATE DATABASE ${database}`);
  await conn.query(`USE ${database}`);
  for (const sql of SQL_CORPUS.mysql.schema) await conn.query(sql);
  const url = new URL(MYSQL_URL);
  url.pathname = `/${database}`;
  return {
    connection: (overrides = {}) =>
      DatabaseConnectionSchema.parse({
        engine: 'mysql',
        url: url.toString(),
        allowPrivilegedRole: true,
        ...overrides,
      }),
    async checksum() {
      const parts: unknown[] = [];
      const [tables] = await conn.query(`SHOW FULL TABLES FROM ${database}`);
      parts.push(tables);
      for (const row of tables as Record<string, string>[]) {
        const name = Object.values(row)[0] as string;
        parts.push((await conn.query(`CHECKSUM TABLE ${database}.${name} EXTENDED`))[0]);
        parts.push((await conn.query(`SHOW CREATE TABLE ${database}.${name}`))[0]);
      }
      const mine = (rows: unknown, key: string) =>
        (rows as Record<string, unknown>[]).filter((r) => !belongsToOthers(String(r[key]), database));
      parts.push(mine((await conn.query('SHOW DATABASES'))[0], 'Database'));
      parts.push(mine((await conn.query('SELECT User, Host FROM mysql.user ORDER BY 1, 2'))[0], 'User'));
      parts.push(
        (
          await conn.query(`SELECT EVENT_NAME FROM information_schema.EVENTS WHERE EVENT_SCHEMA = ?`, [
            database,
          ])
        )[0],
      );
      parts.push(
        (
          await conn.query(`SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ?`, [
            database,
          ])
        )[0],
      );
      return JSON.stringify(parts);
    },
    async admin(sql, params = []) {
      return (await conn.query(sql, params))[0] as unknown[];
    },
    async drop() {
      await conn.query(`DROP DATABASE ${database}`);
      await conn.end();
    },
  };
}

/** The activities over a given config, with the connections to close afterwards. */
export function sqlActivities(
  config: DatabasesConfig,
  extra: Omit<SqlActivityDeps, 'config' | 'connections'> = {},
): { activities: ReturnType<typeof createSqlActivities>; connections: SqlConnections } {
  const connections = new SqlConnections(config);
  return { activities: createSqlActivities({ config, connections, ...extra }), connections };
}

/** Runs one activity the way a worker would: in an activity context with a workflow and run id. */
export function runActivity(
  fn: ReturnType<typeof createSqlActivities>[keyof ReturnType<typeof createSqlActivities>],
  args: unknown,
  opts: { workflowId?: string; runId?: string; toolCallId?: string; attempt?: number } = {},
): Promise<ToolResult> {
  const env = new MockActivityEnvironment(
    {
      workflowExecution: {
        workflowId: opts.workflowId ?? fixtureName('wf'),
        runId: opts.runId ?? fixtureName('run'),
      },
      attempt: opts.attempt ?? 1,
    },
    { logger: new DefaultLogger('ERROR') },
  );
  return env.run(fn, { toolCallId: opts.toolCallId ?? 'call-1', args });
}
