/**
 * The agent, on Temporal (time-skipping server, in-process worker) with the scripted offline model,
 * questions a database through sql_schema and sql_query: on the real Postgres and MariaDB (the corpus
 * fixture in its own schema/database) and on the zero-setup PGlite sample (no databases configured).
 */
import { closeSqlConnections } from '../../activities/sql';
import type { DatabasesConfig } from '../../activities/sql/config';
import type { AgentInput, AgentResult } from '../../shared/agent';
import { eventsQuery } from '../../shared/agent';
import { createAgentWorker } from '../../workers/worker';
import { answerTurn, callTurn } from '../../testkit/scripts';
import type { SqlFixture } from '../../testkit/sql-fixtures';
import { mysqlFixture, postgresFixture } from '../../testkit/sql-fixtures';
import { testConfig, uid, workflowBundle } from '../../testkit/temporal';
import { scheduledActivityTypes } from '../../testkit/history';
import { useTimeSkippingEnv } from '../support/environments';

const fixtures: SqlFixture[] = [];
const temporal = useTimeSkippingEnv();

afterAll(async () => {
  await closeSqlConnections();
  await Promise.all(fixtures.map((f) => f.drop()));
});

/** Runs one scripted agent on an in-process worker with the given databases; returns the result and tool events. */
async function runAgent(databases: DatabasesConfig, input: AgentInput) {
  const taskQueue = uid('sql-tq');
  const worker = await createAgentWorker({
    connection: temporal.env.nativeConnection,
    namespace: temporal.env.namespace ?? 'default',
    config: testConfig({ databases }),
    taskQueue,
    workflowBundle: await workflowBundle(),
  });
  return worker.runUntil(async () => {
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('sql-agent'),
      args: [input],
    });
    const result = (await handle.result()) as AgentResult;
    const events = await handle.query(eventsQuery, {});
    const history = await handle.fetchHistory();
    const scheduled = scheduledActivityTypes(history);
    return { result, events, scheduled };
  });
}

/** Schema first, then a parameterised join, then an answer quoting both results. */
function questionInput(sql: string, params: unknown[], connection?: string): AgentInput {
  const where = connection ? { connection } : {};
  return {
    task: 'Which customers from the given country spent the most?',
    model: {
      provider: 'scripted',
      turns: [
        callTurn(['sql_schema', { ...where }, 's1']),
        callTurn(['sql_query', { ...where, sql, params }, 'q1']),
        answerTurn('From the database:\n{{result:q1}}\n\nSchema used:\n{{result:s1}}'),
      ],
    },
    tools: ['sql_schema', 'sql_query'],
  };
}

const FIXTURE_JOIN = {
  postgres:
    'SELECT c.name, count(*) AS orders, sum(o.total) AS spent FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.country = $1 GROUP BY c.name ORDER BY c.name',
  mysql:
    'SELECT c.name, COUNT(*) AS orders, SUM(o.total) AS spent FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.country = ? GROUP BY c.name ORDER BY c.name',
};

test.each([
  ['postgres', postgresFixture, '["Ada","2","48.75"]'],
  ['mysql', mysqlFixture, '["Ada",2,"48.75"]'],
] as const)(
  'on %s: inspects the schema, runs a join with a parameter, answers from the result',
  async (engine, make, row) => {
    const fx = await make();
    fixtures.push(fx);
    const { result, scheduled } = await runAgent(
      { shop: fx.connection() },
      questionInput(FIXTURE_JOIN[engine], ['GB'], 'shop'),
    );
    expect(result.stopReason).toBe('final_answer');
    expect(scheduled).toEqual(['callModel', 'sql_schema', 'callModel', 'sql_query', 'callModel']);
    expect(result.answer).toContain('SELECT: 1 row.');
    expect(result.answer).toContain('columns: ["name","orders","spent"]');
    expect(result.answer).toContain(row);
    expect(result.answer).toMatch(/customers — 3 rows/);
    expect(result.answer).toMatch(/FOREIGN KEY customer_id → customers\(id\)/);
  },
  120_000,
);

test('with no databases configured, the PGlite sample answers the same kind of question', async () => {
  const sql =
    "SELECT c.name, count(DISTINCT o.id) AS orders, sum(oi.quantity * oi.unit_price) AS revenue FROM customers c JOIN orders o ON o.customer_id = c.id JOIN order_items oi ON oi.order_id = o.id WHERE c.country = $1 AND o.status = 'delivered' GROUP BY c.name ORDER BY revenue DESC LIMIT 3";
  const { result, events } = await runAgent({}, questionInput(sql, ['FR']));
  expect(result.stopReason).toBe('final_answer');
  expect(result.answer).toContain('Connection "sample" (PostgreSQL dialect, read-only): 4 tables.');
  expect(result.answer).toMatch(/order_items — 6284 rows/);
  expect(result.answer).toContain('SELECT: 3 rows.');
  expect(result.answer).toContain('columns: ["name","orders","revenue"]');
  // The sample is generated deterministically, so the answer is too.
  expect(result.answer).toContain(
    '["Omar Novak","9","1543.68"]\n["Omar Silva","5","1393.31"]\n["Ada Silva","6","1347.32"]',
  );
  const finished = events.filter((e) => e.kind === 'tool_finished');
  expect(finished.map((e) => [e.tool, e.isError ?? false])).toEqual([
    ['sql_schema', false],
    ['sql_query', false],
  ]);
}, 180_000);

test('a refused statement goes back to the model, which corrects itself; the run goes on', async () => {
  const { result } = await runAgent(
    {},
    {
      task: 'count customers',
      model: {
        provider: 'scripted',
        turns: [
          callTurn(['sql_query', { sql: 'SELECT count(*) FROM customers; DROP TABLE customers' }, 'bad']),
          callTurn(['sql_query', { sql: 'SELECT count(*) AS n FROM customers' }, 'good']),
          answerTurn('first: {{result:bad}}\nthen: {{result:good}}'),
        ],
      },
      tools: ['sql_query'],
      // The guard, not a person, is what this test is about: no call waits for approval.
      policy: { approvals: { tools: { sql_query: 'never' } } },
    },
  );
  expect(result.stopReason).toBe('final_answer');
  expect(result.answer).toMatch(/^first: Refused \(multiple_statements\): Found 2 statements/);
  expect(result.answer).toContain('then: SELECT: 1 row.\ncolumns: ["n"]\n["400"]');
}, 120_000);
