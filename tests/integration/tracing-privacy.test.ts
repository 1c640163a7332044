/**
 * Private text never reaches a span or a log line. One run calls every tool with marker text in
 * the task, the system prompt, the arguments, the results and the notifications, including
 * failures whose messages echo their argument (quoted and unquoted). It runs twice on a worker
 * process: spans by OTLP to a receiver on 127.0.0.1 with JSON logs, then spans on the console with
 * text logs. The CLI that starts the run traces too. No marker may appear in anything exported or
 * logged, while the run's history shows the markers really went through the tools.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { History } from '../../client/debug/history';
import { REDACTED } from '../../shared/private-text';
import { SPAN_ATTR } from '../../workers/observability/agent-spans';
import {
  agentAccount,
  requireMailServer,
  sendDirect,
  subjectsContaining,
  AGENT,
  USER,
} from '../../testkit/mail';
import type { OtlpReceiver } from '../../testkit/otlp-receiver';
import { startOtlpReceiver } from '../../testkit/otlp-receiver';
import { runCli, startWorkerProcess } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { tempDir, uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

/** Every marker starts with this; letters and digits only, so no encoding can disguise it. */
const PREFIX = 'zqpriv';
const SUFFIX = randomUUID().replace(/-/g, '').slice(0, 10);
const mark = (what: string) => `${PREFIX}${what}${SUFFIX}`;
const ANY_MARKER = new RegExp(PREFIX, 'i');

const TOOLS = [
  'get_time',
  'calculator',
  'wait',
  'notify_user',
  'sql_schema',
  'sql_query',
  'send_email',
  'fetch_email',
  'knowledge_base_search',
  'web_search',
];

/** The scripted run: every tool, with markers everywhere and failures that echo them. */
function runInput(notifyUser: string) {
  return {
    task: `Plan the ${mark('task')} trip`,
    system: `You help with ${mark('system')}.`,
    tools: TOOLS,
    // Every tool runs: this test is about what the traces carry, not about asking the user.
    policy: { approvals: { tools: { send_email: 'never' as const } } },
    notify: { user: notifyUser },
    model: {
      provider: 'scripted',
      turns: [
        callTurn(
          ['get_time', { timezone: `Mars/${mark('zone')}` }, 'time'],
          ['calculator', { expression: `2 +* ${mark('calc')}` }, 'calc_bad'],
          ['calculator', { expression: '6 * 7' }, 'calc_ok'],
          ['wait', { seconds: 1 }, 'pause'],
        ),
        callTurn(
          [
            'notify_user',
            {
              message: mark('note'),
              title: mark('title'),
              detail: `<p>${mark('detail')}</p>`,
              type: 'progress',
              priority: 10,
              group: mark('group'),
            },
            'note',
          ],
          ['notify_user', { message: mark('badnote'), type: mark('badtype') }, 'note_bad'],
          ['sql_schema', {}, 'schema'],
          ['sql_schema', { tables: [mark('schematable')] }, 'schema_bad'],
          ['sql_query', { sql: 'SELECT $1::text AS note', params: [mark('sqlparam')] }, 'sql'],
          ['sql_query', { sql: `SELECT * FROM ${mark('sqltable')}` }, 'sql_bad'],
        ),
        callTurn(
          ['send_email', { to: USER.address, subject: mark('mailsubject'), text: mark('mailbody') }, 'send'],
          ['send_email', { to: `${mark('badaddr')}@@bad`, subject: 'x', text: 'y' }, 'send_bad'],
          ['fetch_email', { subjectContains: mark('inbound'), limit: 5 }, 'fetch'],
          ['fetch_email', { folder: mark('folder') }, 'fetch_bad'],
          ['knowledge_base_search', { query: mark('kbword') }, 'kb'],
          ['web_search', { query: mark('webquery') }, 'web'],
          ['web_search', { query: `${mark('webfail')} tonight` }, 'web_bad'],
        ),
        answerTurn(`Done: ${mark('answer')}`),
      ],
    },
  };
}

/** A SearXNG stand-in: results that carry a marker, and a 400 that echoes the query unquoted. */
async function startSearxng(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams.get('q') ?? '';
    if (q.includes('webfail')) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`no results for ${q}`);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        results: [{ url: 'https://example.test/a', title: mark('webtitle'), content: mark('webtext') }],
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Every payload of a history decoded, so markers in arguments and results can be found. */
function historyText(history: History): string {
  return JSON.stringify(history, (k, v: unknown) => {
    if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
    return k === 'data' && typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : v;
  });
}

describe('private text stays out of spans and logs', () => {
  beforeAll(() => requireMailServer());
  const dev = useDevServer();
  let searxng: Awaited<ReturnType<typeof startSearxng>>;
  let configFile: string;

  beforeAll(async () => {
    searxng = await startSearxng();
    dev.defer(() => searxng.close());
    const dir = tempDir('privacy');
    const seed = path.join(dir, 'kb-seed');
    fs.mkdirSync(seed);
    fs.writeFileSync(
      path.join(seed, 'trip.md'),
      `# Trip notes\n\nThe booking code is ${mark('kbword')} and the hotel is ${mark('kbresult')}.\n`,
    );
    configFile = path.join(dir, 'config.json');
    fs.writeFileSync(
      configFile,
      JSON.stringify({
        email: { accounts: { default: agentAccount() } },
        search: {
          knowledgeBase: { dataDir: path.join(dir, 'kb'), seed: [seed] },
          web: { providers: { searxng: { url: searxng.url } } },
        },
      }),
    );
    // Mail for fetch_email to find: its subject and body are results the model reads.
    await sendDirect({ to: AGENT.address, subject: mark('inbound'), text: mark('inboundbody') });
    const deadline = Date.now() + 30_000;
    while ((await subjectsContaining(AGENT, 'INBOX', mark('inbound'))).length === 0) {
      if (Date.now() > deadline) throw new Error('the test message never reached the agent’s inbox');
      await new Promise((r) => setTimeout(r, 200));
    }
  }, 120_000);

  /** Runs the scripted job on a worker process with `env`; returns everything the run wrote out. */
  async function privateRun(env: Record<string, string>) {
    const all = {
      TEMPORAL_ADDRESS: dev.fx.address,
      DURABLE_AGENT_TASK_QUEUE: uid('tq'),
      DURABLE_AGENT_CONFIG: configFile,
      DURABLE_AGENT_LOG_LEVEL: 'DEBUG',
      ...env,
    };
    const inputFile = path.join(tempDir('privacy-input'), 'run.json');
    fs.writeFileSync(inputFile, JSON.stringify(runInput(uid('privacy-user'))));
    const workflowId = uid('privacy');
    const worker = await startWorkerProcess(all);
    try {
      const run = await runCli(['run', '--json', '--id', workflowId, '--input', inputFile], all);
      expect(run.stderr.split('\n').filter((l) => l && !l.startsWith('{"span"'))).toEqual([]);
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({
        outcome: 'completed',
        result: { stopReason: 'final_answer', answer: `Done: ${mark('answer')}` },
      });
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
      const history = historyText(await dev.fx.client.workflow.getHandle(workflowId).fetchHistory());
      return {
        cli: run,
        workerStdout: worker.lines.map((l) => JSON.stringify(l)).join('\n'),
        workerStderr: worker.stderr.join(''),
        history,
      };
    } finally {
      if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
    }
  }

  /** The markers went through the tools: arguments, results and echoes are in the run's own history. */
  function expectMarkersInHistory(history: string) {
    const expected = [
      ...['task', 'system', 'zone', 'calc', 'note', 'title', 'detail', 'badtype', 'schematable', 'sqlparam'],
      ...['sqltable', 'mailsubject', 'badaddr', 'inbound', 'inboundbody', 'folder', 'kbresult', 'webtitle'],
      ...['webtext', 'webfail', 'answer'],
    ];
    expect(expected.filter((m) => !history.includes(mark(m)))).toEqual([]);
  }

  test('OTLP export and JSON logs carry no private text; failures show their type and a sanitized message', async () => {
    const receiver: OtlpReceiver = await startOtlpReceiver();
    try {
      const out = await privateRun({
        DURABLE_AGENT_TRACING: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        DURABLE_AGENT_LOG_FORMAT: 'json',
      });
      expectMarkersInHistory(out.history);

      const names = new Set(receiver.spans.map((s) => s.name));
      for (const tool of TOOLS) expect(names).toContain(`execute_tool ${tool}`);
      expect(names).toContain('durable-agent run');
      expect(names).toContain('HandleUpdate:notify');
      expect(names).toContain('UpdateWithStartWorkflow:notify');

      const failed = (tool: string, callId: string) =>
        receiver.spans.find((s) => s.name === `execute_tool ${tool}` && s[SPAN_ATTR.toolCallId] === callId)
          ?.statusMessage;
      expect(failed('calculator', 'calc_bad')).toBe(
        'InvalidExpression: Cannot evaluate "…": unexpected "…" at position 3. Use numbers, + - * / % ^ and parentheses.',
      );
      expect(failed('web_search', 'web_bad')).toBe(
        `SearchBadRequest: SearXNG at ${searxng.url} answered 400: no results for ${REDACTED} ${REDACTED}`,
      );
      expect(failed('send_email', 'send_bad')).toMatch(/^EmailInvalidAddress: Malformed to address "…"/);
      expect(failed('fetch_email', 'fetch_bad')).toMatch(/^EmailFolderNotFound: /);
      // Temporal's own activity span says the same, with the exception event's type and frames.
      const runActivity = receiver.spans.find(
        (s) => s.name === 'RunActivity:web_search' && s.statusMessage !== undefined,
      );
      expect(runActivity?.statusMessage).toBe(
        `ApplicationFailure: SearXNG at ${searxng.url} answered 400: no results for ${REDACTED} ${REDACTED}`,
      );
      expect(runActivity?.events[0]?.attributes['exception.type']).toBe('ApplicationFailure');

      // The JSON log line of the failed attempt says the same.
      const logged = out.workerStdout
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.msg === 'activity failed' && l.toolCallId === 'web_bad');
      expect(logged).toMatchObject({
        errorType: 'SearchBadRequest',
        error: `SearchBadRequest: SearXNG at ${searxng.url} answered 400: no results for ${REDACTED} ${REDACTED}`,
      });

      expect(receiver.bodies.join('\n')).not.toMatch(ANY_MARKER);
      expect(out.workerStdout).not.toMatch(ANY_MARKER);
      expect(out.workerStderr).not.toMatch(ANY_MARKER);
      expect(out.cli.stderr).not.toMatch(ANY_MARKER);
    } finally {
      await receiver.close();
    }
  }, 240_000);

  test('console export and text logs carry no private text', async () => {
    const out = await privateRun({ DURABLE_AGENT_TRACING: 'console', DURABLE_AGENT_LOG_FORMAT: 'text' });
    expectMarkersInHistory(out.history);

    const spanLines = (text: string) =>
      text
        .split('\n')
        .filter((l) => l.startsWith('{"span"'))
        .map((l) => JSON.parse(l) as { span: string; error?: string; attributes: Record<string, unknown> });
    const spans = [...spanLines(out.workerStderr), ...spanLines(out.cli.stderr)];
    for (const tool of TOOLS) expect(spans.map((s) => s.span)).toContain(`execute_tool ${tool}`);
    expect(spans.find((s) => s.attributes[SPAN_ATTR.toolCallId] === 'calc_bad')?.error).toMatch(
      /^InvalidExpression: Cannot evaluate "…"/,
    );

    const logLines = out.workerStderr
      .split('\n')
      .filter((l) => /^\S+Z (TRACE|DEBUG|INFO|WARN|ERROR) /.test(l));
    expect(logLines.find((l) => l.includes('toolCallId=web_bad'))).toContain(
      `error="SearchBadRequest: SearXNG at ${searxng.url} answered 400: no results for ${REDACTED} ${REDACTED}"`,
    );
    expect(out.workerStderr.split('\n').filter((l) => /^\s/.test(l))).toEqual([]);

    expect(out.workerStderr).not.toMatch(ANY_MARKER);
    expect(out.workerStdout).not.toMatch(ANY_MARKER);
    expect(out.cli.stderr).not.toMatch(ANY_MARKER);
  }, 240_000);
});
