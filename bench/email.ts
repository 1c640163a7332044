/**
 * What the email activities cost over the bare libraries, against the local Postfix + Dovecot
 * (`bash scripts/mail-server.sh start` first). Run: `npx tsx bench/email.ts [N]` (default 30).
 *
 * - send: N × send_email activity (write-ahead Sent record + pooled SMTP) vs N × nodemailer
 *   sendMail on a pooled transport.
 * - fetch: N messages through fetch_email (cursor pages of ≤50, parsed, html→text) vs one imapflow
 *   session fetching the same messages' envelope and source.
 */
import { ImapFlow } from 'imapflow';
import nodemailer from 'nodemailer';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createEmailActivities, EmailConnections } from '../activities/email';
import type { FetchEmailData } from '../activities/email/fetch';
import type { ToolResult } from '../shared/tools/define';
import type { EmailCursor } from '../shared/tools/email';
import { FetchEmailArgs, SendEmailArgs } from '../shared/tools/email';
import {
  AGENT,
  USER,
  agentAccount,
  emailConfig,
  mailEnv,
  requireMailServer,
  subjectsContaining,
  token,
} from '../testkit/mail';

const N = Number(process.argv[2] ?? 30);

async function timed(label: string, fn: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await fn();
  const ms = performance.now() - t0;
  console.log(`${label.padEnd(44)} ${ms.toFixed(0).padStart(7)} ms  (${(ms / N).toFixed(1)} ms/message)`);
  return ms;
}

async function main(): Promise<void> {
  await requireMailServer();
  const e = mailEnv();
  const config = emailConfig({
    default: agentAccount(),
    inbox: agentAccount({ from: USER.address, user: USER.address, password: USER.password }),
  });
  const connections = new EmailConnections(config);
  const activities = createEmailActivities({ config, connections });
  const env = new MockActivityEnvironment(
    { workflowExecution: { workflowId: token('bench'), runId: 'r' } },
    { logger: new DefaultLogger('ERROR') },
  );
  const t = token('bench');
  console.log(`email bench: N=${N}, Postfix ${e.host}:${e.smtpPort}, Dovecot ${e.host}:${e.imapPort}`);

  const viaActivity = await timed('send: send_email activity', async () => {
    for (let i = 0; i < N; i++) {
      const args = SendEmailArgs.parse({
        to: USER.address,
        subject: `${t} activity ${i}`,
        text: `message ${i}`,
      });
      await env.run(activities.send_email, { toolCallId: `send-${i}`, args });
    }
  });
  const transport = nodemailer.createTransport({
    pool: true,
    host: e.host,
    port: e.smtpPort,
    secure: false,
    auth: { user: AGENT.address, pass: AGENT.password },
  });
  const viaNodemailer = await timed('send: nodemailer pooled transport', async () => {
    for (let i = 0; i < N; i++) {
      await transport.sendMail({
        from: AGENT.address,
        to: USER.address,
        subject: `${t} direct ${i}`,
        text: `message ${i}`,
      });
    }
  });
  transport.close();
  console.log(`send overhead ratio (activity / nodemailer):    ${(viaActivity / viaNodemailer).toFixed(2)}×`);

  const needle = `${t} direct`;
  while ((await subjectsContaining(USER, 'INBOX', needle)).length < N)
    await new Promise((r) => setTimeout(r, 100));

  let fetched = 0;
  const fetchActivity = await timed('fetch: fetch_email activity', async () => {
    let cursor: EmailCursor | undefined;
    for (;;) {
      const args = FetchEmailArgs.parse({
        account: 'inbox',
        subjectContains: needle,
        order: 'oldest',
        limit: 50,
        ...(cursor ? { cursor } : {}),
      });
      const res: ToolResult = await env.run(activities.fetch_email, { toolCallId: 'f', args });
      const data = res.data as FetchEmailData;
      fetched += data.messages.length;
      cursor = data.cursor;
      if (data.remaining === 0) break;
    }
  });
  let direct = 0;
  const fetchImapflow = await timed('fetch: imapflow (envelope + source)', async () => {
    const c = new ImapFlow({
      host: e.host,
      port: e.imapPort,
      secure: false,
      auth: { user: USER.address, pass: USER.password },
      logger: false,
    });
    await c.connect();
    const lock = await c.getMailboxLock('INBOX', { readOnly: true });
    try {
      const uids = (await c.search({ subject: needle }, { uid: true })) || [];
      for await (const m of c.fetch(
        uids,
        { uid: true, envelope: true, flags: true, source: true },
        { uid: true },
      )) {
        if (m.source) direct += 1;
      }
    } finally {
      lock.release();
      await c.logout();
    }
  });
  if (fetched !== N || direct !== N)
    throw new Error(`expected ${N} messages each, got ${fetched} (activity) and ${direct} (imapflow)`);
  console.log(
    `fetch overhead ratio (activity / imapflow):     ${(fetchActivity / fetchImapflow).toFixed(2)}×`,
  );
  connections.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
