/**
 * send_email on the real dev server with worker child processes and the real Postfix + Dovecot:
 * a worker SIGKILLed right after the SMTP server accepted a message never causes a second copy,
 * and no password reaches the exported workflow history.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { NativeConnection } from '@temporalio/worker';
import { closeEmailConnections } from '../../activities/email';
import { deterministicMessageId } from '../../activities/email/send';
import { temporalBinary } from '../../workers/binaries';
import type { AgentInput, AgentResult, Policy } from '../../shared/agent';
import { createAgentWorker } from '../../workers/worker';
import {
  AGENT,
  USER,
  agentAccount,
  emailConfig,
  requireMailServer,
  settledCount,
  token,
  waitForMessage,
} from '../../testkit/mail';
import { startWorkerProcess, waitForLogLine } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { tempDir, testConfig, uid, workflowBundle } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const configDir = tempDir('email-config');

beforeAll(() => requireMailServer());
const dev = useDevServer();
afterAll(() => closeEmailConnections());

/** A worker config file; the password stays in the environment (`${env:…}`), as in production. */
function configFile(name: string, extra: Record<string, unknown>): string {
  const file = path.join(configDir, `${name}.json`);
  const account = { ...agentAccount(), password: '${env:DA_TEST_MAIL_PASSWORD}' };
  fs.writeFileSync(file, JSON.stringify({ email: { accounts: { default: account }, ...extra } }));
  return file;
}

function sendInput(subject: string, localActivities: Policy['localActivities'] = 'never'): AgentInput {
  return {
    task: 'send one mail',
    model: {
      provider: 'scripted',
      turns: [
        callTurn(['send_email', { to: USER.address, subject, text: `body of ${subject}` }, 's1']),
        answerTurn('{{result:s1}}'),
      ],
    },
    tools: ['send_email'],
    // The killed worker's send is noticed after 5 s rather than the tool's 15 s.
    policy: {
      approvals: { tools: { send_email: 'never' } },
      localActivities,
      toolTimeouts: { send_email: { heartbeatTimeout: '5 seconds' } },
    },
  };
}

// The four cases run at once (each its own task queue, workers, message and config files): most of a
// case is waiting for the killed worker's heartbeat timeout and sticky queue.
const CASES = [
  [
    'smtp-accepted',
    'before the Sent copy is marked sent: the retry refuses to resend (EmailDeliveryUnknown)',
    'NOT sent again',
  ],
  [
    'record-confirmed',
    'after the Sent copy is marked sent: the retry returns the earlier result',
    'not sent again',
  ],
] as const;

describe('worker SIGKILLed', () => {
  // send_email is never local; with localActivities 'auto' the model calls around it are.
  test.concurrent.each(
    CASES.flatMap(([stallAt, what, expected]) =>
      (['never', 'auto'] as const).map((mode) => [stallAt, what, mode, expected] as const),
    ),
  )(
    'at %s, %s (localActivities %s); the recipient has exactly one copy',
    async (stallAt, _what, mode, expected) => {
      const taskQueue = uid('email-crash');
      const base = {
        TEMPORAL_ADDRESS: dev.fx.address,
        DURABLE_AGENT_TASK_QUEUE: taskQueue,
        DA_TEST_MAIL_PASSWORD: AGENT.password,
        // Once the retried send finished, the run's next task waits 2 s (not the SDK's 10 s) for the
        // killed worker that kept the run in memory.
        DURABLE_AGENT_STICKY_QUEUE_TIMEOUT: '2s',
      };
      const first = await startWorkerProcess({
        ...base,
        DURABLE_AGENT_CONFIG: configFile(`stall-${stallAt}-${mode}`, {
          testHooks: { stallAt, stallMs: 120_000 },
        }),
      });
      const workflowId = uid(`email-crash-${stallAt}-${mode}`);
      const subject = `Crash ${token()}`;
      const handle = await dev.fx.client.workflow.start('agentWorkflow', {
        taskQueue,
        workflowId,
        args: [sendInput(subject, mode)],
      });
      const messageId = deterministicMessageId(workflowId, 's1', AGENT.address);

      // The first worker handed the message to Postfix and now sits at the hook: kill it there.
      await waitForLogLine(
        first,
        (l) => l.msg === 'send_email test hook: stalling' && l.workflowId === workflowId,
        'the worker reaching the hook',
      );
      first.child.kill('SIGKILL');
      await first.exited;
      await waitForMessage(USER, 'INBOX', messageId);

      const second = await startWorkerProcess({
        ...base,
        DURABLE_AGENT_CONFIG: configFile(`plain-${stallAt}-${mode}`, {}),
      });
      try {
        const result = (await handle.result()) as AgentResult;
        expect(result.stopReason).toBe('final_answer');
        expect(result.answer ?? '').toContain(messageId);
        expect(result.answer ?? '').toContain(expected);
        // The retry really ran on the second worker.
        const history = await handle.fetchHistory();
        const attempts = (history.events ?? [])
          .map((e) => e.activityTaskStartedEventAttributes?.attempt)
          .filter((a): a is number => typeof a === 'number');
        expect(Math.max(...attempts)).toBeGreaterThanOrEqual(2);
        expect(await settledCount(USER, 'INBOX', messageId)).toBe(1);
      } finally {
        second.child.kill('SIGTERM');
        await second.exited;
      }
    },
    180_000,
  );
});

test('the exported history (temporal workflow show --output json) contains no password', async () => {
  const wrongSecret = `Wr0ng-${token()}`;
  const config = testConfig({
    email: emailConfig({
      default: agentAccount(),
      broken: agentAccount({ smtp: { ...(agentAccount().smtp as object), password: wrongSecret } }),
    }),
  });
  const taskQueue = uid('email-history');
  const connection = await NativeConnection.connect({ address: dev.fx.address });
  const worker = await createAgentWorker({
    connection,
    namespace: 'default',
    config,
    taskQueue,
    workflowBundle: await workflowBundle(),
  });
  const workflowId = uid('email-history');
  try {
    await worker.runUntil(async () => {
      const input: AgentInput = {
        task: 'mail',
        model: {
          provider: 'scripted',
          turns: [
            callTurn(
              ['fetch_email', { subjectContains: token('none') }, 'f1'],
              ['send_email', { account: 'broken', to: USER.address, subject: 'x', text: 'x' }, 's1'],
              ['send_email', { to: USER.address, subject: `History ${token()}`, text: 'x' }, 's2'],
            ),
            answerTurn('{{last_tool_results}}'),
          ],
        },
        tools: ['fetch_email', 'send_email'],
        policy: { approvals: { tools: { send_email: 'never' } } },
      };
      await dev.fx.client.workflow.execute('agentWorkflow', { taskQueue, workflowId, args: [input] });
    });
  } finally {
    await connection.close();
  }
  const { stdout } = await promisify(execFile)(
    temporalBinary('temporal'),
    ['workflow', 'show', '--workflow-id', workflowId, '--output', 'json', '--address', dev.fx.address],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  // Payloads are base64 in the JSON: search the decoded text of every string as well as the raw output.
  const strings: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') {
      strings.push(v);
      if (/^[A-Za-z0-9+/]{8,}={0,2}$/.test(v)) strings.push(Buffer.from(v, 'base64').toString('utf8'));
    } else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(JSON.parse(stdout));
  const corpus = [stdout, ...strings].join('\n');
  // The history holds the calls, the results and the authentication failure…
  expect(corpus).toContain('EmailAuthFailed');
  expect(corpus).toContain('Login to email account "broken" (SMTP');
  expect(corpus).toContain('Email sent to user@example.test');
  // …but neither the right nor the wrong password.
  expect(corpus).not.toContain(AGENT.password);
  expect(corpus).not.toContain(wrongSecret);
}, 180_000);
