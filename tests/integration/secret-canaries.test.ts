/**
 * No secret reaches a log line, a message or workflow history. A worker process is configured with
 * canary secrets (database passwords, an email password, a search API key, a model API key) and a
 * scripted run makes every tool fail in the ways that carry credentials: a refused login, an
 * unreachable server, a provider that echoes the request's key in its error body. The run goes
 * once with JSON logs and once with text logs; the worker's output, the CLI's output and every
 * history are searched for the canaries, while the histories show the failures really happened.
 * A malformed URL stops the worker at start, naming the connection and never the URL.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { agentAccount, requireMailServer, USER } from '../../testkit/mail';
import { runCli, startWorkerProcess } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { MYSQL_URL } from '../../testkit/sql-fixtures';
import { CLI, tempDir, uid } from '../../testkit/temporal';
import { spawn } from 'node:child_process';
import { useDevServer } from '../support/environments';

const SUFFIX = randomUUID().replace(/-/g, '').slice(0, 10);
/** Letters and digits only, so no encoding (URL, JSON, base64 of history aside) disguises them. */
const canary = (what: string) => `Canary${what}${SUFFIX}`;
const CANARIES = ['PgDown', 'MyAuth', 'Mail', 'Search', 'Model', 'BadUrl'].map(canary);
const ANY_CANARY = new RegExp(`Canary[A-Za-z]+${SUFFIX}`);

/** A provider that answers 401 and echoes what it was sent, key included (a careless server does). */
async function startEchoServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const sent = JSON.stringify({ url: req.url, headers: req.headers });
    res
      .writeHead(401, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { message: `invalid credentials: ${sent}` } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Every payload of a history decoded (base64 data fields), so a canary cannot hide in encoding. */
function historyText(history: unknown): string {
  return JSON.stringify(history, (k, v: unknown) => {
    if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
    return k === 'data' && typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : v;
  });
}

const TOOLS = ['sql_query', 'sql_schema', 'send_email', 'fetch_email', 'web_search'];

const SCRIPT = {
  provider: 'scripted',
  turns: [
    callTurn(
      ['sql_query', { connection: 'pgdown', sql: 'SELECT 1' }, 'sql_down'],
      ['sql_query', { connection: 'myauth', sql: 'SELECT 1' }, 'sql_auth'],
      ['sql_schema', { connection: 'myauth' }, 'schema_auth'],
      ['send_email', { to: USER.address, subject: 'x', text: 'y' }, 'send_auth'],
      ['fetch_email', { limit: 1 }, 'fetch_auth'],
      ['web_search', { query: 'weather', provider: 'brave' }, 'web_echo'],
    ),
    answerTurn('done'),
  ],
};

describe('canary secrets stay out of logs, messages and history', () => {
  beforeAll(() => requireMailServer());
  const dev = useDevServer();
  let echo: Awaited<ReturnType<typeof startEchoServer>>;
  let configFile: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    echo = await startEchoServer();
    dev.defer(() => echo.close());
    const dir = tempDir('canaries');
    const mysqlAuth = new URL(MYSQL_URL);
    mysqlAuth.password = canary('MyAuth');
    configFile = path.join(dir, 'config.json');
    fs.writeFileSync(
      configFile,
      JSON.stringify({
        databases: {
          pgdown: { engine: 'postgres', url: `postgres://agent:${canary('PgDown')}@127.0.0.1:1/test` },
          myauth: { engine: 'mysql', url: mysqlAuth.toString() },
        },
        email: { accounts: { default: agentAccount({ password: canary('Mail') }) } },
        search: { web: { providers: { brave: { apiKey: canary('Search'), baseUrl: echo.url } } } },
      }),
    );
    env = {
      TEMPORAL_ADDRESS: dev.fx.address,
      DURABLE_AGENT_CONFIG: configFile,
      DURABLE_AGENT_LOG_LEVEL: 'DEBUG',
      OPENAI_API_KEY: canary('Model'),
      OPENAI_BASE_URL: `${echo.url}/v1`,
    };
  }, 120_000);

  /** The scripted run and a run on the (refusing) OpenAI-compatible model; all they wrote out. */
  async function canaryRuns(format: 'json' | 'text') {
    const all = { ...env, DURABLE_AGENT_TASK_QUEUE: uid('tq'), DURABLE_AGENT_LOG_FORMAT: format };
    const inputFile = path.join(tempDir('canary-input'), 'run.json');
    // Every failure mode must run unattended: no call waits for approval.
    const policy = { approvals: { tools: { send_email: 'never', sql_query: 'never' } } };
    fs.writeFileSync(
      inputFile,
      JSON.stringify({ task: 'try everything', tools: TOOLS, model: SCRIPT, policy }),
    );
    const tools = uid('canary-tools');
    const model = uid('canary-model');
    const worker = await startWorkerProcess(all);
    try {
      const run = await runCli(['run', '--json', '--id', tools, '--input', inputFile], all);
      expect(JSON.parse(run.stdout)).toMatchObject({ outcome: 'completed' });
      const modelRun = await runCli(['run', '--id', model, '--model', 'openai:gpt-test', 'hello'], all);
      expect(modelRun.code).toBe(1);
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
      const histories = await Promise.all(
        [tools, model].map(async (id) =>
          historyText(await dev.fx.client.workflow.getHandle(id).fetchHistory()),
        ),
      );
      return {
        output: [
          run.stdout,
          run.stderr,
          modelRun.stdout,
          modelRun.stderr,
          worker.lines.map((l) => JSON.stringify(l)).join('\n'),
          worker.stderr.join(''),
        ].join('\n'),
        toolsHistory: histories[0] as string,
        modelHistory: histories[1] as string,
        modelRun,
      };
    } finally {
      if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
    }
  }

  function expectFailuresHappened(out: Awaited<ReturnType<typeof canaryRuns>>) {
    // Each failure mode really ran (so the absence of canaries means something).
    expect(out.toolsHistory).toContain('Could not connect to database connection \\"pgdown\\"');
    expect(out.toolsHistory).toContain('Database connection \\"myauth\\" (mysql) refused the login');
    expect(out.toolsHistory).toMatch(/EmailAuthFailed|authentication failed|Invalid login/i);
    expect(out.toolsHistory).toMatch(/Brave[^"]*401/);
    expect(out.toolsHistory).toContain('invalid credentials');
    expect(out.modelHistory).toMatch(/401/);
    expect(out.modelRun.stderr).toMatch(/401/);
  }

  test('JSON logs, CLI output and histories hold no canary', async () => {
    const out = await canaryRuns('json');
    expectFailuresHappened(out);
    expect(out.output).not.toMatch(ANY_CANARY);
    expect(out.toolsHistory).not.toMatch(ANY_CANARY);
    expect(out.modelHistory).not.toMatch(ANY_CANARY);
  }, 240_000);

  test('text logs hold no canary either', async () => {
    const out = await canaryRuns('text');
    expectFailuresHappened(out);
    expect(out.output).not.toMatch(ANY_CANARY);
    expect(out.toolsHistory).not.toMatch(ANY_CANARY);
    expect(out.modelHistory).not.toMatch(ANY_CANARY);
  }, 240_000);

  test('a malformed URL stops the worker at start, naming the connection and never the URL', async () => {
    const bad = path.join(tempDir('canary-bad'), 'config.json');
    fs.writeFileSync(
      bad,
      JSON.stringify({
        databases: {
          reports: { engine: 'mysql', url: `mysql://user:${canary('BadUrl')}@127.0.0.1:notaport/db` },
        },
      }),
    );
    const child = spawn(CLI[0] as string, [CLI[1] as string, 'worker'], {
      env: { ...process.env, ...env, DURABLE_AGENT_CONFIG: bad, DURABLE_AGENT_TASK_QUEUE: uid('tq') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code).toBe(1);
    expect(output).toContain('databases.reports.url: the URL is malformed');
    expect(output).not.toMatch(ANY_CANARY);
    expect(CANARIES.every((c) => !output.includes(c))).toBe(true);
  }, 60_000);
});
