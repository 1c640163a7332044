/**
 * The agent jobs of the chaos script and the real systems their side effects land in: a fresh
 * PostgreSQL schema (rows written by `sql_query` with its exactly-once write record), the test
 * Postfix/Dovecot (mail from `send_email`, found again by Message-ID), and notifications
 * (`notify_user` to the run itself and to a user's inbox).
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { AgentInput } from '../../shared/agent';
import { SIZE_BUDGETS, jsonBytes } from '../../shared/temporal-limits';
import { AGENT, USER, agentAccount } from '../../testkit/mail';
import { callTurn, answerTurn } from '../../testkit/scripts';
import { PG_URL, fixtureName } from '../../testkit/sql-fixtures';
import { maxSizeNotification } from './flood';

/** Name of the database connection in the workers' config. */
const CONNECTION = 'chaos';
/** Bytes of the large tool result each job reads (inside the SQL tool's own result cap). */
export const LARGE_RESULT_CHARS = 60_000;
/** Tool calls of a job that write a row. */
export const WRITE_CALLS = ['w1', 'w2'] as const;
/** Tool calls of a job that notify the user. */
export const NOTIFY_CALLS = ['n1', 'n2'] as const;
/** Tool call of a job that sends mail. */
export const MAIL_CALL = 'm1';
/** Tool call a gated job waits on for approval. */
export const GATE_CALL = 'g1';

/** The database and mail settings the workers use, and the schema to drop afterwards. */
export interface JobSystems {
  schema: string;
  /** Worker environment: config file and the secrets it references. */
  workerEnv: Record<string, string>;
  /** Admin connection to the schema (checks only). */
  db: pg.Client;
  drop(): Promise<void>;
}

/** Creates the schema and table the jobs write to and the worker config that points at them. */
export async function prepareJobSystems(dir: string): Promise<JobSystems> {
  const schema = fixtureName('chaos');
  const db = new pg.Client({ connectionString: PG_URL });
  await db.connect();
  await db.query(`CREATE SCHEMA ${schema}`);
  await db.query(
    `CREATE TABLE ${schema}.effects (run_id text NOT NULL, call_id text NOT NULL, written_at timestamptz NOT NULL DEFAULT now())`,
  );
  const configFile = path.join(dir, 'worker-config.json');
  // Secrets stay in the environment (`${env:…}`), as in production.
  fs.writeFileSync(
    configFile,
    JSON.stringify({
      databases: {
        // The local test server's trust-auth superuser, knowingly, as the SQL test fixtures do.
        [CONNECTION]: {
          engine: 'postgres',
          url: '${env:DA_CHAOS_PG_URL}',
          schema,
          writable: true,
          allowPrivilegedRole: true,
        },
      },
      email: { accounts: { default: { ...agentAccount(), password: '${env:DA_CHAOS_MAIL_PASSWORD}' } } },
    }),
  );
  return {
    schema,
    db,
    workerEnv: {
      DURABLE_AGENT_CONFIG: configFile,
      DURABLE_AGENT_CONTENT_STORE: path.join(dir, 'content'),
      DA_CHAOS_PG_URL: PG_URL,
      DA_CHAOS_MAIL_PASSWORD: AGENT.password,
    },
    async drop() {
      await db.query(`DROP SCHEMA ${schema} CASCADE`);
      await db.end();
    },
  };
}

/** One job of the chaos script. */
export interface JobSpec {
  index: number;
  workflowId: string;
  /** Seconds the `wait` tool waits (ungated jobs). */
  waitSeconds: number;
  /** A gated job waits for approval of a tool call until the flood is over, so it is surely open. */
  gated: boolean;
}

/** Mail subject of a job: unique per script run (`token`) and job. */
export function mailSubject(token: string, index: number): string {
  return `chaos ${token} job ${index}`;
}

/**
 * The biggest notification the notify_user door takes: the largest notification there is, its
 * detail shortened until the tool call's arguments fit their budget. No id: the tool derives one
 * from the run and the tool call, which the checks recompute.
 */
function largestToolNotification(index: number): Record<string, unknown> {
  const n = maxSizeNotification('unused', index);
  const args: Record<string, unknown> & { detail?: string } = {
    type: n.type,
    title: n.title,
    message: n.message,
    detail: n.detail,
    group: n.group,
  };
  while (jsonBytes(args) > SIZE_BUDGETS.toolArgumentsBytes - 1024)
    args.detail = (args.detail ?? '').slice(0, -1024);
  return args;
}

/**
 * A job: writes a row, sends a mail and notifies (one step, in parallel); waits (a `wait` tool call,
 * or a `get_time` call held for approval); writes a second row, reads a 60 KB result and sends the
 * largest notification the tool takes; answers with what the tools returned.
 */
export function jobInput(job: JobSpec, token: string, agentsInbox: string): AgentInput {
  const write = (call: string) =>
    [
      'sql_query',
      {
        connection: CONNECTION,
        sql: 'INSERT INTO effects (run_id, call_id) VALUES ($1, $2)',
        params: [job.workflowId, call],
      },
      call,
    ] as [string, unknown, string];
  return {
    task: `chaos job ${job.index}`,
    model: {
      provider: 'scripted',
      turns: [
        callTurn(
          write('w1'),
          [
            'send_email',
            { to: USER.address, subject: mailSubject(token, job.index), text: `job ${job.index}` },
            MAIL_CALL,
          ],
          ['notify_user', { message: `job ${job.index} started`, type: 'progress', priority: 10 }, 'n1'],
        ),
        job.gated
          ? callTurn(['get_time', { timezone: 'UTC' }, GATE_CALL])
          : callTurn(['wait', { seconds: job.waitSeconds }, 'z1']),
        callTurn(
          write('w2'),
          [
            'sql_query',
            { connection: CONNECTION, sql: `SELECT repeat(chr(65), ${LARGE_RESULT_CHARS}) AS big` },
            'b1',
          ],
          ['notify_user', largestToolNotification(job.index), 'n2'],
        ),
        answerTurn('«w1»{{result:w1}}«m1»{{result:m1}}«w2»{{result:w2}}«b1»{{result:b1}}«end»'),
      ],
    },
    tools: ['sql_query', 'send_email', 'notify_user', 'wait', 'get_time'],
    policy: {
      maxSteps: 10,
      // Unattended jobs: their writes and mail need no approval; a gated job's get_time always does.
      approvals: {
        tools: { sql_query: 'never', send_email: 'never', ...(job.gated ? { get_time: 'always' } : {}) },
      },
      ...(job.gated ? { approvalTimeout: '30 minutes' } : {}),
    },
    notify: { user: agentsInbox },
  };
}

/** What a job's answer says each tool returned. */
export function answerParts(answer: string): Record<'w1' | 'm1' | 'w2' | 'b1', string> {
  const part = (name: string) => new RegExp(`«${name}»([\\s\\S]*?)«`).exec(answer)?.[1] ?? '';
  return { w1: part('w1'), m1: part('m1'), w2: part('w2'), b1: part('b1') };
}
