/**
 * Agent runs (offline scripted model, time-skipping server) that use the email tools against the
 * real Postfix + Dovecot: answering a message in its thread, and polling a mailbox across runs.
 */
import { closeEmailConnections } from '../../activities/email';
import type { AgentInput, AgentResult } from '../../shared/agent';
import type { ScriptedTurn } from '../../shared/model';
import { createAgentWorker } from '../../workers/worker';
import {
  AGENT,
  USER,
  emailConfig,
  findByMessageId,
  requireMailServer,
  sendDirect,
  token,
  waitForMessage,
} from '../../testkit/mail';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { testConfig, uid, workflowBundle } from '../../testkit/temporal';
import { scheduledActivityTypes } from '../../testkit/history';
import { useTimeSkippingEnv } from '../support/environments';

beforeAll(() => requireMailServer());
const temporal = useTimeSkippingEnv();
afterAll(async () => {
  closeEmailConnections();
});

async function runAgent(
  turns: ScriptedTurn[],
): Promise<{ result: AgentResult; answer: string; scheduled: string[] }> {
  const taskQueue = uid('email-tq');
  const worker = await createAgentWorker({
    connection: temporal.env.nativeConnection,
    namespace: temporal.env.namespace ?? 'default',
    config: testConfig({ email: emailConfig() }),
    taskQueue,
    workflowBundle: await workflowBundle(),
  });
  return worker.runUntil(async () => {
    const input: AgentInput = {
      task: 'handle the mailbox',
      model: { provider: 'scripted', turns },
      tools: ['fetch_email', 'send_email'],
      // These runs test the tools: the user lets mail go out without asking.
      policy: { approvals: { tools: { send_email: 'never' } } },
    };
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('email-run'),
      args: [input],
    });
    const result = (await handle.result()) as AgentResult;
    const history = await handle.fetchHistory();
    const scheduled = scheduledActivityTypes(history);
    return { result, answer: result.answer ?? '', scheduled };
  });
}

test('an agent fetches unseen mail and replies in-thread; the reply arrives, the original stays unseen', async () => {
  const t = token('thread');
  const parentId = `<${t}@example.test>`;
  await sendDirect({
    to: AGENT.address,
    subject: `Question ${t}`,
    messageId: parentId,
    text: 'When does the shop open?',
  });
  await waitForMessage(AGENT, 'INBOX', parentId);

  const { result, answer, scheduled } = await runAgent([
    callTurn(['fetch_email', { unseenOnly: true, subjectContains: t }, 'f1']),
    callTurn([
      'send_email',
      { to: USER.address, subject: `Re: Question ${t}`, text: 'We open at nine.', inReplyTo: parentId },
      's1',
    ]),
    answerTurn('{{result:f1}}\n---\n{{result:s1}}'),
  ]);

  expect(result.stopReason).toBe('final_answer');
  expect(scheduled).toEqual(['callModel', 'fetch_email', 'callModel', 'send_email', 'callModel']);
  // What the model read: the unread message with its Message-ID and body.
  expect(answer).toContain(`Message-ID: ${parentId}`);
  expect(answer).toContain('(unread)');
  expect(answer).toContain('When does the shop open?');
  const sent = /Email sent to user@example\.test \(Message-ID (<[^>]+>)\)/.exec(answer);
  expect(sent).not.toBeNull();

  const [reply] = await waitForMessage(USER, 'INBOX', sent![1]!);
  expect(reply!.headers).toMatch(new RegExp(`^Subject: Re: Question ${t}`, 'm'));
  expect(reply!.headers).toMatch(new RegExp(`^In-Reply-To: ${parentId}`, 'm'));
  expect(reply!.headers).toMatch(new RegExp(`^References: ${parentId}`, 'm'));
  expect(reply!.source).toContain('We open at nine.');

  const [original] = await findByMessageId(AGENT, 'INBOX', parentId);
  expect(original!.flags.has('\\Seen')).toBe(false);
}, 120_000);

test('polling over 3 runs with mail arriving in between sees every message exactly once', async () => {
  const t = token('poll');
  let n = 0;
  const deliver = async (count: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      n += 1;
      const id = `<${t}-${n}@example.test>`;
      await sendDirect({
        to: AGENT.address,
        subject: `Poll ${t} #${n}`,
        messageId: id,
        text: `message ${n}`,
      });
      ids.push(id);
      // Postfix may deliver two queued messages in either order; waiting for each one keeps
      // arrival order (what `order: 'oldest'` sorts by) the same as sending order.
      await waitForMessage(AGENT, 'INBOX', id);
    }
    return ids;
  };
  const poll = async (cursor: unknown): Promise<{ ids: string[]; cursor: unknown }> => {
    const args = { subjectContains: t, order: 'oldest', ...(cursor ? { cursor } : {}) };
    const { answer } = await runAgent([callTurn(['fetch_email', args, 'p']), answerTurn('{{result:p}}')]);
    const next = /^cursor: (\{.*\})$/m.exec(answer);
    expect(next).not.toBeNull();
    return {
      ids: [...answer.matchAll(/^Message-ID: (<[^>]+>)$/gm)].map((m) => m[1]!),
      cursor: JSON.parse(next![1]!),
    };
  };

  const batch1 = await deliver(2);
  const run1 = await poll(undefined);
  const batch2 = await deliver(3);
  const run2 = await poll(run1.cursor);
  const batch3 = await deliver(1);
  const run3 = await poll(run2.cursor);

  expect(run1.ids).toEqual(batch1);
  expect(run2.ids).toEqual(batch2);
  expect(run3.ids).toEqual(batch3);
  const all = [...run1.ids, ...run2.ids, ...run3.ids];
  expect(new Set(all).size).toBe(6);
}, 180_000);
