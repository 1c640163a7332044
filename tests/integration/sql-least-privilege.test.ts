/**
 * Least privilege enforced on the real Postgres and MariaDB servers: a privileged role is refused
 * (per call and at worker start) with a recipe for a least-privilege one unless the configuration
 * allows it; a least-privilege role works; a write over the affected-rows cap is rolled back and
 * the model told how many rows it would have touched; a huge value is stopped while it arrives.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { DatabaseConnectionConfig } from '../../activities/sql/config';
import { DatabaseConnectionSchema } from '../../activities/sql/config';
import { checkConnectionRoles } from '../../activities/sql/startup-check';
import { SIZE_BUDGETS } from '../../shared/temporal-limits';
import type { SqlFixture } from '../../testkit/sql-fixtures';
import {
  fixtureName,
  mysqlFixture,
  postgresFixture,
  runActivity,
  sqlActivities,
} from '../../testkit/sql-fixtures';

type RealEngine = 'postgres' | 'mysql';

/** A fixture plus a least-privilege role that may read and write only the fixture's tables. */
async function withAgentRole(engine: RealEngine): Promise<{
  fx: SqlFixture;
  admin: (o?: Record<string, unknown>) => DatabaseConnectionConfig;
  agent: (o?: Record<string, unknown>) => DatabaseConnectionConfig;
  dropRole(): Promise<void>;
}> {
  const fx = engine === 'postgres' ? await postgresFixture() : await mysqlFixture();
  const role = fixtureName('agent');
  const base = fx.connection();
  const admin = (o: Record<string, unknown> = {}) => fx.connection({ allowPrivilegedRole: false, ...o });
  if (base.engine === 'postgres') {
    const schema = base.schema as string;
    await fx.admin(`CREATE ROLE ${role} LOGIN PASSWORD 'agent-pw'`);
    // CREATE on the schema: a writable connection keeps its exactly-once record table there.
    await fx.admin(`GRANT USAGE, CREATE ON SCHEMA ${schema} TO ${role}`);
    await fx.admin(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
    const url = new URL(base.url);
    url.username = role;
    url.password = 'agent-pw';
    return {
      fx,
      admin,
      agent: (o = {}) =>
        DatabaseConnectionSchema.parse({ engine: 'postgres', url: url.toString(), schema, ...o }),
      dropRole: async () => {
        await fx.admin(`DROP OWNED BY ${role}`);
        await fx.admin(`DROP ROLE ${role}`);
      },
    };
  }
  const url = new URL((base as { url: string }).url);
  const db = url.pathname.slice(1);
  await fx.admin(`CREATE USER '${role}'@'%' IDENTIFIED BY 'agent-pw'`);
  await fx.admin(`GRANT SELECT, INSERT, UPDATE, DELETE, CREATE ON ${db}.* TO '${role}'@'%'`);
  url.username = role;
  url.password = 'agent-pw';
  return {
    fx,
    admin,
    agent: (o = {}) => DatabaseConnectionSchema.parse({ engine: 'mysql', url: url.toString(), ...o }),
    dropRole: async () => {
      await fx.admin(`DROP USER '${role}'@'%'`);
    },
  };
}

async function failure(p: Promise<unknown>): Promise<ApplicationFailure> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ApplicationFailure);
    return err as ApplicationFailure;
  }
  throw new Error('expected the activity to fail');
}

describe.each<RealEngine>(['postgres', 'mysql'])('on the real %s server', (engine) => {
  let setup: Awaited<ReturnType<typeof withAgentRole>>;

  beforeAll(async () => {
    setup = await withAgentRole(engine);
  }, 60_000);

  afterAll(async () => {
    await setup?.dropRole();
    await setup?.fx.drop();
  });

  test('a privileged role is refused with a least-privilege recipe, unless allowed', async () => {
    const { activities, connections } = sqlActivities({ admin: setup.admin() });
    try {
      for (const tool of ['sql_query', 'sql_schema'] as const) {
        const args =
          tool === 'sql_query' ? { connection: 'admin', sql: 'SELECT 1' } : { connection: 'admin' };
        const err = await failure(runActivity(activities[tool], args));
        expect([err.type, err.nonRetryable]).toEqual(['SqlConfigError', true]);
        expect(err.message).toMatch(
          engine === 'postgres'
            ? /logs in with a role that is a superuser/
            : /has global privileges \(GRANT ALL PRIVILEGES/,
        );
        expect(err.message).toContain(
          engine === 'postgres' ? 'CREATE ROLE agent LOGIN' : "CREATE USER 'agent'@'%'",
        );
        expect(err.message).toContain('databases.admin.allowPrivilegedRole: true');
      }
    } finally {
      await connections.close();
    }
    const allowed = sqlActivities({ admin: setup.admin({ allowPrivilegedRole: true }) });
    try {
      const ok = await runActivity(allowed.activities.sql_query, {
        connection: 'admin',
        sql: 'SELECT 1 AS one',
      });
      expect(ok.isError).toBeFalsy();
    } finally {
      await allowed.connections.close();
    }
  });

  test('the worker-start check refuses the privileged role and passes the least-privilege one', async () => {
    const report = await checkConnectionRoles({ admin: setup.admin(), agent: setup.agent() });
    expect(report.refused).toHaveLength(1);
    expect(report.refused[0]).toMatch(/^Database connection "admin" logs in with a role that/);
    expect(report.unchecked).toEqual([]);
    const down = await checkConnectionRoles({
      down: DatabaseConnectionSchema.parse({ engine, url: `${engine}://u:p@127.0.0.1:1/x` }),
    });
    expect(down).toEqual({ refused: [], unchecked: ['down'] });
  });

  test('a least-privilege role reads, and is still refused the privileged catalogs', async () => {
    const { activities, connections } = sqlActivities({ agent: setup.agent() });
    try {
      const rows = await runActivity(activities.sql_query, {
        connection: 'agent',
        sql: 'SELECT id FROM orders ORDER BY id',
      });
      expect(rows.isError).toBeFalsy();
      expect(rows.data).toMatchObject({ rows: [[1], [2], [3]] });
      const hashes = await runActivity(activities.sql_query, {
        connection: 'agent',
        sql:
          engine === 'postgres'
            ? 'SELECT rolpassword FROM pg_authid'
            : 'SELECT authentication_string FROM mysql.user',
      });
      expect(hashes).toMatchObject({ isError: true, data: { refused: true, code: 'privileged_catalog' } });
      expect(hashes.content).toMatch(/password hash/);
    } finally {
      await connections.close();
    }
  });

  test('a write over the affected-rows cap is rolled back, telling the model how many rows', async () => {
    const { activities, connections } = sqlActivities({
      rw: setup.agent({ writable: true, maxAffectedRows: 2 }),
    });
    const orders = () => setup.fx.admin('SELECT id, status FROM orders ORDER BY id');
    const before = JSON.stringify(await orders());
    try {
      const wide = await runActivity(activities.sql_query, {
        connection: 'rw',
        sql: "UPDATE orders SET status = 'void' WHERE id > 0",
      });
      expect(wide.isError).toBe(true);
      expect(wide.content).toMatch(
        /would have changed 3 rows, more than the 2 allowed .* rolled back and nothing changed/,
      );
      expect(wide.data).toMatchObject({ error: 'too_many_rows', affectedRows: 3 });
      // The claim of the exactly-once record was rolled back with it: nothing in the table changed.
      expect(JSON.stringify(await orders())).toBe(before);

      const narrow = await runActivity(activities.sql_query, {
        connection: 'rw',
        sql: "UPDATE orders SET status = 'void' WHERE id <= 2",
      });
      expect(narrow.isError).toBeFalsy();
      expect(narrow.data).toMatchObject({ affectedRows: 2 });
      expect(JSON.stringify(await orders())).not.toBe(before);
    } finally {
      await connections.close();
    }
  });

  test('a value larger than the wire budget is stopped while it arrives', async () => {
    const { activities, connections } = sqlActivities({ agent: setup.agent() });
    const size = SIZE_BUDGETS.sqlWireBytes + 4 * 1024 * 1024;
    try {
      const huge = await runActivity(activities.sql_query, {
        connection: 'agent',
        sql: engine === 'postgres' ? `SELECT repeat('x', ${size}) AS v` : `SELECT REPEAT('x', ${size}) AS v`,
      });
      expect(huge).toMatchObject({ isError: true, data: { error: 'result_too_large' } });
      expect(huge.content).toContain(`larger than ${SIZE_BUDGETS.sqlWireBytes} bytes while it arrived`);
      // The connection pool is still usable afterwards.
      const ok = await runActivity(activities.sql_query, { connection: 'agent', sql: 'SELECT 1 AS one' });
      expect(ok.isError).toBeFalsy();
    } finally {
      await connections.close();
    }
  });
});
