/**
 * sql_query writes on the real dev server with worker child processes: a worker SIGKILLed after the
 * write committed but before the activity completed is replaced, the activity retries on the new
 * worker, and the write is applied exactly once — on Postgres, MariaDB and a PGlite data folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AgentInput, AgentResult, Policy } from '../../shared/agent';
import type { ScriptedTurn } from '../../shared/model';
import { startWorkerProcess, waitForLogLine } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import type { SqlFixture } from '../../testkit/sql-fixtures';
import { mysqlFixture, postgresFixture } from '../../testkit/sql-fixtures';
import { tempDir, uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const configDir = tempDir('sql-config');
const fixtures: SqlFixture[] = [];

const dev = useDevServer();
afterAll(() => Promise.all(fixtures.map((f) => f.drop())));

/** A worker config file; the URL (which would hold a password) stays in the environment. */
function configFile(name: string, connection: Record<string, unknown>): string {
  const file = path.join(configDir, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify({ databases: { shop: connection } }));
  return file;
}

function run(turns: ScriptedTurn[], localActivities: Policy['localActivities']): AgentInput {
  return {
    task: 'update stock',
    model: { provider: 'scripted', turns },
    tools: ['sql_query'],
    // These runs test the tool: the user lets writes run without asking. The killed worker's call is
    // noticed after 5 s rather than the tool's 15 s (see STICKY below).
    policy: {
      approvals: { tools: { sql_query: 'never' } },
      localActivities,
      toolTimeouts: { sql_query: { heartbeatTimeout: '5 seconds' } },
    },
  };
}

type Engine = 'postgres' | 'mysql' | 'pglite';

/**
 * The workers' sticky queue timeout: once the retried call finished, the run's next task waits this
 * long (not the SDK's 10 s) for the killed worker that kept the run in memory.
 */
const STICKY = { DURABLE_AGENT_STICKY_QUEUE_TIMEOUT: '2s' };

/** The connection settings (minus testHooks) and the env the worker needs, per engine. */
async function target(
  engine: Engine,
): Promise<{ connection: Record<string, unknown>; env: Record<string, string> }> {
  if (engine === 'pglite') {
    return {
      connection: {
        engine,
        dataDir: path.join(tempDir('sql-pglite'), 'db'),
        loadSample: true,
        writable: true,
      },
      env: {},
    };
  }
  const fx = engine === 'postgres' ? await postgresFixture() : await mysqlFixture();
  fixtures.push(fx);
  const { url, ...rest } = fx.connection({ writable: true }) as { url: string } & Record<string, unknown>;
  return { connection: { ...rest, url: '${env:DA_TEST_SQL_URL}' }, env: { DA_TEST_SQL_URL: url } };
}

// sql_query is never local; with localActivities 'auto' the model calls around it are. The four
// cases run at once (each its own task queue, workers, schema or data folder, config files): most of
// a case is waiting for the killed worker's heartbeat timeout and sticky queue.
describe('a worker SIGKILLed after the write committed', () => {
  test.concurrent.each([
    ['postgres', 'never'],
    ['postgres', 'auto'],
    ['mysql', 'auto'],
    ['pglite', 'never'],
  ] as const)(
    'on %s, localActivities %s: the retry returns the earlier result, the write is applied once',
    async (engine, mode) => {
      const p = engine === 'mysql' ? '?' : '$1';
      const { connection, env } = await target(engine);
      const taskQueue = uid('sql-crash');
      const base = {
        TEMPORAL_ADDRESS: dev.fx.address,
        DURABLE_AGENT_TASK_QUEUE: taskQueue,
        ...STICKY,
        ...env,
      };
      const first = await startWorkerProcess({
        ...base,
        DURABLE_AGENT_CONFIG: configFile(`stall-${engine}-${mode}`, {
          ...connection,
          testHooks: { stallAt: 'write-committed', stallMs: 120_000 },
        }),
      });
      const workflowId = uid(`sql-crash-${engine}-${mode}`);
      const read = { connection: 'shop', sql: `SELECT stock FROM products WHERE id = ${p}`, params: [1] };
      const handle = await dev.fx.client.workflow.start('agentWorkflow', {
        taskQueue,
        workflowId,
        args: [
          run(
            [
              callTurn(['sql_query', read, 'r0']),
              callTurn([
                'sql_query',
                { ...read, sql: `UPDATE products SET stock = stock - 1 WHERE id = ${p}` },
                'w1',
              ]),
              answerTurn('before: {{result:r0}}\nwrite: {{result:w1}}'),
            ],
            mode,
          ),
        ],
      });

      // The first worker committed the write and now sits at the hook: kill it there.
      await waitForLogLine(
        first,
        (l) => l.msg === 'sql_query test hook: stalling' && l.workflowId === workflowId,
        'the worker reaching the hook',
        120_000,
      );
      first.child.kill('SIGKILL');
      await first.exited;

      const second = await startWorkerProcess({
        ...base,
        DURABLE_AGENT_CONFIG: configFile(`plain-${engine}-${mode}`, connection),
      });
      try {
        // Fail with the workers' own words rather than a bare jest timeout.
        const result = (await Promise.race([
          handle.result(),
          new Promise((_, reject) =>
            setTimeout(() => {
              const logs = [...first.lines, ...second.lines].filter(
                (l) => l.level !== 'INFO' || /sql|fail/i.test(String(l.msg)),
              );
              reject(
                new Error(
                  `no result after 120 s: ${JSON.stringify(logs).slice(0, 4000)} ${second.stderr.join('')}`,
                ),
              );
            }, 120_000),
          ),
        ])) as AgentResult;
        expect(result.stopReason).toBe('final_answer');
        expect(result.answer).toContain(
          'write: Already applied by an earlier attempt of this tool call; not run again. UPDATE: 1 row affected (committed).',
        );
        const history = await handle.fetchHistory();
        const attempts = (history.events ?? [])
          .map((e) => e.activityTaskStartedEventAttributes?.attempt)
          .filter((a): a is number => typeof a === 'number');
        expect(Math.max(...attempts)).toBeGreaterThanOrEqual(2);
        // Both calls were scheduled with the run's heartbeat timeout, not the tool's own.
        const heartbeats = (history.events ?? [])
          .map((e) => e.activityTaskScheduledEventAttributes)
          .filter((a) => a?.activityType?.name === 'sql_query')
          .map((a) => String(a?.heartbeatTimeout?.seconds));
        expect(heartbeats).toEqual(['5', '5']);

        // A second run reads the stock and the write records through the tool: one decrement, one record.
        const before = Number(
          /before: SELECT: 1 row\.\ncolumns: \["stock"\]\n\["?(\d+)"?\]/.exec(result.answer ?? '')?.[1],
        );
        const check = (await dev.fx.client.workflow.execute('agentWorkflow', {
          taskQueue,
          workflowId: uid('sql-check'),
          args: [
            run(
              [
                callTurn(
                  ['sql_query', read, 'r1'],
                  [
                    'sql_query',
                    { connection: 'shop', sql: 'SELECT count(*) AS n FROM durable_agent_tool_writes' },
                    'n',
                  ],
                ),
                answerTurn('{{result:r1}}\n{{result:n}}'),
              ],
              mode,
            ),
          ],
        })) as AgentResult;
        expect(check.answer).toMatch(new RegExp(`\\["stock"\\]\\n\\["?${before - 1}"?\\]`));
        expect(check.answer).toMatch(/\["n"\]\n\["?1"?\]/);
      } finally {
        // SIGKILL, not SIGTERM: graceful exit depends on the worker command closing the SQL pools,
        // which is not what this test is about (a MariaDB pool would keep the process alive).
        second.child.kill('SIGKILL');
        await second.exited;
      }
    },
    240_000,
  );
});
