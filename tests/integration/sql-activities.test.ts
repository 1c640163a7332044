/**
 * sql_query and sql_schema as activities against the real Postgres and MariaDB on this machine and
 * against embedded PGlite: the hostile corpus through the whole tool (nothing runs, each refusal
 * says why, the database checksum is unchanged), the legitimate corpus, the layers behind the guard,
 * time limits, row and size caps, idempotent writes, and connection failures.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { DatabaseConnectionConfig } from '../../activities/sql/config';
import { createSqlActivities, SqlConnections } from '../../activities/sql';
import { DatabaseConnectionSchema } from '../../activities/sql/config';
import { createEngine } from '../../activities/sql/connections';
import type { SqlDialect } from '../../activities/sql/guard';
import type { SqlQueryData } from '../../activities/sql/results';
import type { SqlSchemaData } from '../../activities/sql/schema';
import { WRITE_RECORD_TABLE } from '../../activities/sql/write-record';
import { SQL_CORPUS } from '../../testkit/sql-corpus';
import { uid } from '../../testkit/temporal';
import type { SqlFixture } from '../../testkit/sql-fixtures';
import {
  MYSQL_URL,
  PG_URL,
  mysqlFixture,
  postgresFixture,
  runActivity,
  sqlActivities,
} from '../../testkit/sql-fixtures';

type RealEngine = 'postgres' | 'mysql';
const REAL: RealEngine[] = ['postgres', 'mysql'];
const dialectOf = (e: RealEngine): SqlDialect => (e === 'postgres' ? 'postgres' : 'mysql');
const fixtureFor = (e: RealEngine): Promise<SqlFixture> =>
  e === 'postgres' ? postgresFixture() : mysqlFixture();

/** Slow but allowed statements (the guard refuses pg_sleep/SLEEP): each runs for minutes unbounded. */
const SLOW: Record<SqlDialect, string> = {
  postgres: 'SELECT count(*) FROM generate_series(1, 100000) a CROSS JOIN generate_series(1, 100000) b',
  // MariaDB's sequence engine; recursive CTEs stop at max_recursive_iterations (1,000) instead.
  mysql: 'SELECT count(*) FROM seq_1_to_100000 a CROSS JOIN seq_1_to_100000 b',
};
/** 5,000 rows, far over the row cap. */
const MANY: Record<SqlDialect, string> = {
  postgres: 'SELECT g, md5(g::text) FROM generate_series(1, 5000) g',
  mysql: 'SELECT seq, MD5(seq) FROM seq_1_to_5000',
};

async function failure(p: Promise<unknown>): Promise<ApplicationFailure> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ApplicationFailure);
    return err as ApplicationFailure;
  }
  throw new Error('expected the activity to fail');
}

describe.each(REAL)('on the real %s server', (engine) => {
  const dialect = dialectOf(engine);
  const corpus = SQL_CORPUS[dialect];
  let fx: SqlFixture;
  let tools: ReturnType<typeof sqlActivities>;

  beforeAll(async () => {
    fx = await fixtureFor(engine);
    tools = sqlActivities({
      ro: fx.connection(),
      rw: fx.connection({ writable: true }),
      small: fx.connection({ maxRows: 100, maxResultBytes: 2048 }),
      slow: fx.connection({ statementTimeoutMs: 500 }),
    });
  }, 60_000);

  afterAll(async () => {
    await tools?.connections.close();
    await fx?.drop();
  });

  test(`the hostile corpus (${corpus.hostile.length} statements) runs through the activity: all refused with a reason, the database unchanged`, async () => {
    const before = await fx.checksum();
    for (const c of corpus.hostile) {
      const result = await runActivity(tools.activities.sql_query, {
        connection: c.allowWrites ? 'rw' : 'ro',
        sql: c.sql,
        params: c.params ?? [],
      });
      expect({
        name: c.name,
        isError: result.isError,
        code: (result.data as { code?: string }).code,
      }).toEqual({
        name: c.name,
        isError: true,
        code: c.code,
      });
      expect(result.content).toMatch(new RegExp(`^Refused \\(${c.code}\\): .{30,}`, 's'));
    }
    expect(await fx.checksum()).toBe(before);
    // Nothing reached the write path either: the idempotency record was never even needed.
    const records = await fx.admin(
      dialect === 'postgres'
        ? `SELECT count(*)::int AS n FROM pg_tables WHERE tablename = '${WRITE_RECORD_TABLE}' AND schemaname = current_schema()`
        : `SELECT count(*) AS n FROM information_schema.TABLES WHERE TABLE_NAME = '${WRITE_RECORD_TABLE}' AND TABLE_SCHEMA = DATABASE()`,
    );
    expect(Number((records[0] as { n: number }).n)).toBe(0);
  }, 120_000);

  test('every legitimate read runs and returns rows, leaving the database unchanged', async () => {
    const before = await fx.checksum();
    for (const c of corpus.reads) {
      const result = await runActivity(tools.activities.sql_query, {
        connection: 'ro',
        sql: c.sql,
        params: c.params ?? [],
      });
      expect({ name: c.name, content: result.isError ? result.content : 'ok' }).toEqual({
        name: c.name,
        content: 'ok',
      });
      expect((result.data as SqlQueryData).statementType).toBe(c.statementType);
    }
    expect(await fx.checksum()).toBe(before);
  }, 120_000);

  test('behind the guard, the READ ONLY transaction and the one-statement protocol still hold', async () => {
    // A guard that approves everything as a read: only the later layers stand in the way.
    const permissive = sqlActivities(
      { ro: fx.connection() },
      { guard: async () => ({ allowed: true, kind: 'read', statementType: 'DELETE' }) },
    );
    try {
      const before = await fx.checksum();
      const del = await runActivity(permissive.activities.sql_query, {
        connection: 'ro',
        sql: 'DELETE FROM order_items WHERE qty > 0',
      });
      expect(del.isError).toBe(true);
      expect(del.content).toMatch(/read-only transaction|READ ONLY transaction/i);
      const stacked = await runActivity(permissive.activities.sql_query, {
        connection: 'ro',
        sql: 'SELECT 1; DELETE FROM order_items WHERE qty > 0',
      });
      expect(stacked.isError).toBe(true);
      expect(stacked.content).toMatch(/cannot insert multiple commands|SQL syntax/i);
      expect(await fx.checksum()).toBe(before);
    } finally {
      await permissive.connections.close();
    }
  }, 60_000);

  test('parameters are bound, never interpolated: a value that looks like SQL is only a value', async () => {
    const p = dialect === 'postgres' ? '$1' : '?';
    const evil = "x' OR '1'='1";
    const result = await runActivity(tools.activities.sql_query, {
      connection: 'ro',
      sql: `SELECT count(*) AS n FROM customers WHERE name = ${p}`,
      params: [evil],
    });
    expect(result.isError).toBeUndefined();
    expect(Number((result.data as SqlQueryData).rows[0]?.[0])).toBe(0);
  });

  test('the time limit stops a runaway statement and the connection keeps working', async () => {
    const started = Date.now();
    const result = await runActivity(tools.activities.sql_query, { connection: 'slow', sql: SLOW[dialect] });
    const elapsed = Date.now() - started;
    expect(result.isError).toBe(true);
    expect(result.content).toContain('stopped after 500 ms');
    expect(elapsed).toBeLessThan(4000);
    const after = await runActivity(tools.activities.sql_query, {
      connection: 'slow',
      sql: 'SELECT 1 AS one',
    });
    expect(after.content).toContain('[1]');
  });

  test("the row cap keeps 100 rows (or the call's maxRows) and says the result was truncated", async () => {
    const capped = await runActivity(tools.activities.sql_query, { connection: 'ro', sql: MANY[dialect] });
    const data = capped.data as SqlQueryData;
    expect(data.rowCount).toBe(100);
    expect(data.truncated).toBe('rows');
    expect(capped.content).toContain('Truncated: showing the first 100 rows');
    const ten = await runActivity(tools.activities.sql_query, {
      connection: 'ro',
      sql: MANY[dialect],
      maxRows: 10,
    });
    expect((ten.data as SqlQueryData).rows).toHaveLength(10);
    // A call cannot raise the connection's cap.
    const more = await runActivity(tools.activities.sql_query, {
      connection: 'small',
      sql: MANY[dialect],
      maxRows: 1000,
    });
    expect((more.data as SqlQueryData).truncated).not.toBe(false);
    expect((more.data as SqlQueryData).rowCount).toBeLessThanOrEqual(100);
  });

  test('the result-size cap truncates wide results with a notice', async () => {
    const result = await runActivity(tools.activities.sql_query, { connection: 'small', sql: MANY[dialect] });
    const data = result.data as SqlQueryData;
    expect(data.truncated).toBe('bytes');
    expect(JSON.stringify(data.rows).length).toBeLessThanOrEqual(2048);
    expect(result.content).toContain('result limit of 2048 bytes');
  });

  test('database errors come back as tool errors the model can act on', async () => {
    const unknown = await runActivity(tools.activities.sql_query, {
      connection: 'ro',
      sql: 'SELECT nope FROM customers',
    });
    expect(unknown.isError).toBe(true);
    expect(unknown.content).toMatch(/nope/);
    expect(unknown.content).toContain('sql_schema');
    const none = await runActivity(tools.activities.sql_query, { connection: 'nosuch', sql: 'SELECT 1' });
    expect(none).toMatchObject({ isError: true });
    expect(none.content).toContain('ro, rw, small, slow');
  });

  test('a write on a writable connection is applied once, however often the activity is retried', async () => {
    const p = dialect === 'postgres' ? '$1' : '?';
    const args = {
      connection: 'rw',
      sql: `UPDATE products SET stock = stock - 1 WHERE id = ${p}`,
      params: [3],
    };
    const stock = async () =>
      Number(((await fx.admin('SELECT stock FROM products WHERE id = 3'))[0] as { stock: number }).stock);
    const start = await stock();
    const first = await runActivity(tools.activities.sql_query, args, {
      workflowId: 'wf-retry',
      toolCallId: 'w1',
    });
    expect(first.content).toContain('UPDATE: 1 row affected (committed).');
    const retry = await runActivity(tools.activities.sql_query, args, {
      workflowId: 'wf-retry',
      toolCallId: 'w1',
      attempt: 2,
    });
    expect(retry.content).toMatch(/^Already applied by an earlier attempt/);
    expect((retry.data as SqlQueryData).alreadyApplied).toBe(true);
    expect(await stock()).toBe(start - 1);
    // Another tool call (or another run) is another write.
    await runActivity(tools.activities.sql_query, args, { workflowId: 'wf-retry', toolCallId: 'w2' });
    expect(await stock()).toBe(start - 2);
    // A write that fails leaves no record, so a corrected retry can still run.
    const bad = await runActivity(
      tools.activities.sql_query,
      { ...args, sql: `UPDATE products SET nope = 1 WHERE id = ${p}` },
      { workflowId: 'wf-retry', toolCallId: 'w3' },
    );
    expect(bad.isError).toBe(true);
    const records = await fx.admin(`SELECT tool_call_id FROM ${WRITE_RECORD_TABLE} ORDER BY tool_call_id`);
    expect(records.map((r) => (r as { tool_call_id: string }).tool_call_id)).toEqual(['w1', 'w2']);
  });

  test('sql_schema lists tables, typed columns, keys and exact small row counts, cached per run', async () => {
    const first = await runActivity(
      tools.activities.sql_schema,
      { connection: 'ro' },
      { runId: 'run-schema' },
    );
    expect(first.content).toMatch(/customers — 3 rows/);
    expect(first.content).toMatch(/PRIMARY KEY \(order_id, product_id\)/);
    expect(first.content).toMatch(/FOREIGN KEY customer_id → customers\(id\)/);
    expect(first.content).toMatch(/total (numeric|decimal)\(10,2\) NOT NULL/);
    expect(first.content).not.toContain(WRITE_RECORD_TABLE);
    // Same run: served from the cache, so a new table is not seen; a new run sees it.
    await fx.admin('CREATE TABLE late_table (id integer PRIMARY KEY)');
    try {
      const cached = await runActivity(
        tools.activities.sql_schema,
        { connection: 'ro' },
        { runId: 'run-schema' },
      );
      expect(cached.content).not.toContain('late_table');
      const fresh = await runActivity(
        tools.activities.sql_schema,
        { connection: 'ro' },
        { runId: 'run-other' },
      );
      expect(fresh.content).toContain('late_table');
      const one = await runActivity(
        tools.activities.sql_schema,
        { connection: 'ro', tables: ['ORDERS', 'nope'] },
        { runId: 'run-other' },
      );
      expect(one.content).toContain('orders — 3 rows');
      expect(one.content).not.toContain('customers —');
      expect(one.content).toContain('No such table: nope.');
    } finally {
      await fx.admin('DROP TABLE late_table');
    }
  });

  test('sql_schema lists the values of text columns that hold few, repeated ones, and no others', async () => {
    const text = dialect === 'mysql' ? 'VARCHAR(60)' : 'varchar(60)';
    await fx.admin(
      `CREATE TABLE tickets (id integer PRIMARY KEY, state ${text} NOT NULL, owner ${text} NOT NULL, note ${text}, code ${text} NOT NULL)`,
    );
    try {
      const long = 'a label far longer than forty characters, so free text';
      const rows = Array.from({ length: 30 }, (_, i) => {
        const state = ['open', 'closed', "won't fix"][i % 3] as string;
        const note = i % 2 ? 'NULL' : `'${i % 4 ? 'short' : long}'`;
        return `(${i}, '${state.replace(/'/g, "''")}', 'owner-${i % 15}', ${note}, 'T-${i}')`;
      });
      await fx.admin(`INSERT INTO tickets VALUES ${rows.join(', ')}`);
      const res = await runActivity(
        tools.activities.sql_schema,
        { connection: 'ro', tables: ['tickets'] },
        { runId: uid('run-values') },
      );
      // 3 states in 30 rows: listed as SQL literals, sorted, quote escaped.
      expect(res.content).toMatch(
        / {2}state [a-z ]+\(60\) NOT NULL — values: 'closed', 'open', 'won''t fix'$/m,
      );
      const columns = (res.data as SqlSchemaData).tables[0]?.columns ?? [];
      expect(columns.find((c) => c.name === 'state')?.values).toEqual(['closed', 'open', "won't fix"]);
      // 15 owners: more than 12. A note longer than 40 characters: free text. Codes: all different.
      // The primary key is never read.
      for (const name of ['owner', 'note', 'code', 'id'])
        expect(columns.find((c) => c.name === name)?.values).toBeUndefined();
      expect(res.content).toMatch(/ {2}owner [a-z ]+\(60\) NOT NULL$/m);
    } finally {
      await fx.admin('DROP TABLE tickets');
    }
  });
});

describe('connection failures are final and never show the password', () => {
  const cases: [string, DatabaseConnectionConfig, string][] = [
    [
      'postgres, unknown role',
      DatabaseConnectionSchema.parse({
        engine: 'postgres',
        url: 'postgres://nobody:S3cret-pw@127.0.0.1:5432/test',
      }),
      'SqlAuthFailed',
    ],
    [
      'mariadb, wrong password',
      DatabaseConnectionSchema.parse({ engine: 'mysql', url: MYSQL_URL.replace('root@', 'root:S3cret-pw@') }),
      'SqlAuthFailed',
    ],
    [
      'postgres, nothing listening',
      DatabaseConnectionSchema.parse({ engine: 'postgres', url: 'postgres://u:S3cret-pw@127.0.0.1:1/test' }),
      'SqlConnectionFailed',
    ],
  ];
  test.each(cases)('%s', async (_name, connection, type) => {
    const { activities, connections } = sqlActivities({ broken: connection });
    try {
      for (const tool of ['sql_query', 'sql_schema'] as const) {
        const args =
          tool === 'sql_query' ? { connection: 'broken', sql: 'SELECT 1' } : { connection: 'broken' };
        const err = await failure(runActivity(activities[tool], args));
        expect(err.type).toBe(type);
        expect(err.nonRetryable).toBe(true);
        expect(err.message).toMatch(/database connection "broken"/i);
        expect(err.message).not.toContain('S3cret-pw');
        expect(err.message).not.toContain(PG_URL.split('@')[0]);
      }
    } finally {
      await connections.close();
    }
  });
});

describe('on PGlite (in a worker thread)', () => {
  let tools: ReturnType<typeof sqlActivities>;
  beforeAll(() => {
    tools = sqlActivities({
      sample: DatabaseConnectionSchema.parse({ engine: 'pglite', statementTimeoutMs: 1000 }),
    });
  });
  afterAll(async () => {
    await tools?.connections.close();
  });

  test('the shipped sample answers a parameterised join', async () => {
    const result = await runActivity(tools.activities.sql_query, {
      sql: 'SELECT c.country, count(DISTINCT o.id) AS orders FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.country = $1 GROUP BY c.country',
      params: ['FR'],
    });
    expect(result.isError).toBeUndefined();
    expect((result.data as SqlQueryData).rows[0]?.[0]).toBe('FR');
    expect(Number((result.data as SqlQueryData).rows[0]?.[1])).toBeGreaterThan(100);
  }, 120_000);

  test('the time limit terminates the PGlite thread (statement_timeout is not enforced there) and the next call works', async () => {
    const started = Date.now();
    const result = await runActivity(tools.activities.sql_query, { sql: SLOW.postgres });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('stopped after 1000 ms');
    expect(Date.now() - started).toBeLessThan(5000);
    const after = await runActivity(tools.activities.sql_query, { sql: 'SELECT count(*) FROM customers' });
    expect((after.data as SqlQueryData).rows).toEqual([['400']]);
  }, 120_000);

  test('the row cap holds with a notice', async () => {
    const result = await runActivity(tools.activities.sql_query, { sql: MANY.postgres });
    expect((result.data as SqlQueryData).rowCount).toBe(100);
    expect(result.content).toContain('Truncated: showing the first 100 rows');
  }, 120_000);

  test('the hostile corpus is refused and the fixture is unchanged; writes are applied once', async () => {
    // One embedded database behind a read-only and a writable connection, as the corpus needs both.
    const fixture = createEngine(DatabaseConnectionSchema.parse({ engine: 'pglite', loadSample: false }));
    const config = {
      ro: DatabaseConnectionSchema.parse({ engine: 'pglite', loadSample: false }),
      rw: DatabaseConnectionSchema.parse({ engine: 'pglite', loadSample: false, writable: true }),
    };
    const connections = new SqlConnections(config, () => fixture);
    const { sql_query } = createSqlActivities({ config, connections });
    try {
      await fixture.session(
        async (s) => {
          for (const sql of SQL_CORPUS.postgres.schema) await s.command(sql);
        },
        { timeoutMs: 30_000 },
      );
      const checksum = () =>
        fixture.session(
          async (s) => {
            const parts: unknown[] = [];
            for (const t of ['customers', 'products', 'orders', 'order_items']) {
              parts.push(
                (await s.query(`SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM ${t} t`)).rows,
              );
            }
            parts.push(
              (
                await s.query(
                  "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace ORDER BY 1",
                )
              ).rows,
            );
            parts.push((await s.query('SELECT last_value, is_called FROM order_seq')).rows);
            return JSON.stringify(parts);
          },
          { timeoutMs: 30_000 },
        );
      const before = await checksum();
      for (const c of SQL_CORPUS.postgres.hostile) {
        const result = await runActivity(sql_query, {
          connection: c.allowWrites ? 'rw' : 'ro',
          sql: c.sql,
          params: c.params ?? [],
        });
        expect({ name: c.name, code: (result.data as { code?: string }).code }).toEqual({
          name: c.name,
          code: c.code,
        });
      }
      expect(await checksum()).toBe(before);
      const args = {
        connection: 'rw',
        sql: 'UPDATE products SET stock = stock - 1 WHERE id = $1',
        params: [1],
      };
      await runActivity(sql_query, args, { workflowId: 'wf-lite', toolCallId: 'w1' });
      const again = await runActivity(sql_query, args, {
        workflowId: 'wf-lite',
        toolCallId: 'w1',
        attempt: 2,
      });
      expect(again.content).toMatch(/^Already applied/);
      const stock = await runActivity(sql_query, {
        connection: 'ro',
        sql: 'SELECT stock FROM products WHERE id = 1',
      });
      expect((stock.data as SqlQueryData).rows).toEqual([[11]]);
    } finally {
      await connections.close();
    }
  }, 180_000);
});
