/**
 * fetch_email and send_email against the real Postfix + Dovecot of scripts/mail-server.sh:
 * reading without side effects, cursors, idempotent sending, and each failure class (typed,
 * correctly retryable or final, naming the account, never the password, nothing half-sent).
 */
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { EmailConfig } from '../../activities/email/config';
import { EmailConnections } from '../../activities/email/connections';
import { mapImapError, mapSmtpError, redact } from '../../activities/email/errors';
import type { FetchEmailData } from '../../activities/email/fetch';
import { createEmailActivities } from '../../activities/email';
import type { SendEmailData } from '../../activities/email/send';
import { deterministicMessageId } from '../../activities/email/send';
import { PENDING_KEYWORD, SENT_KEYWORD } from '../../activities/email/sent-record';
import { FetchEmailArgs, SendEmailArgs } from '../../shared/tools/email';
import type { ToolResult } from '../../shared/tools/define';
import { freePort } from '../../testkit/processes';
import {
  AGENT,
  USER,
  agentAccount,
  emailConfig,
  findByMessageId,
  imapAs,
  mailEnv,
  requireMailServer,
  sendDirect,
  settledCount,
  token,
  waitForMessage,
} from '../../testkit/mail';

const open: EmailConnections[] = [];

beforeAll(async () => {
  await requireMailServer();
});

afterAll(() => {
  for (const c of open) c.close();
});

/** Runs one activity the way a worker would: in an activity context with a workflow id and attempt. */
async function run(
  config: EmailConfig,
  tool: 'fetch_email' | 'send_email',
  args: unknown,
  opts: { workflowId?: string; toolCallId?: string; attempt?: number } = {},
): Promise<ToolResult> {
  const connections = new EmailConnections(config);
  open.push(connections);
  const activities = createEmailActivities({ config, connections });
  const schema = tool === 'fetch_email' ? FetchEmailArgs : SendEmailArgs;
  const env = new MockActivityEnvironment(
    {
      workflowExecution: { workflowId: opts.workflowId ?? token('wf'), runId: 'run' },
      attempt: opts.attempt ?? 1,
    },
    { logger: new DefaultLogger('ERROR') },
  );
  return env.run(activities[tool], { toolCallId: opts.toolCallId ?? 'call-1', args: schema.parse(args) });
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

/** Neither a Sent-folder copy nor a delivered copy of this message exists. */
async function expectNothingSent(workflowId: string, toolCallId: string, recipient = USER): Promise<void> {
  const id = deterministicMessageId(workflowId, toolCallId, AGENT.address);
  expect(await findByMessageId(AGENT, 'Sent', id)).toHaveLength(0);
  expect(await settledCount(recipient, 'INBOX', id)).toBe(0);
}

describe('fetch_email', () => {
  test('reads html-only mail as text, lists attachments, caps the body, and leaves it unseen', async () => {
    const t = token('fetch');
    const messageId = `<${t}@example.test>`;
    await sendDirect({
      to: AGENT.address,
      subject: `Invoice ${t}`,
      messageId,
      html: `<h1>Hello</h1><p>Your invoice <b>${t}</b> is attached.</p><p>${'long line '.repeat(100)}</p>`,
      attachments: [
        { filename: 'invoice.pdf', content: Buffer.alloc(3000, 7), contentType: 'application/pdf' },
      ],
    });
    await waitForMessage(AGENT, 'INBOX', messageId);

    const res = await run(emailConfig(), 'fetch_email', {
      subjectContains: t,
      unseenOnly: true,
      maxBodyChars: 200,
    });
    const data = res.data as FetchEmailData;
    expect(data.messages).toHaveLength(1);
    const m = data.messages[0]!;
    expect(m).toMatchObject({ messageId, subject: `Invoice ${t}`, seen: false, textTruncated: true });
    expect(m.from).toEqual([USER.address]);
    expect(m.to).toEqual([AGENT.address]);
    expect(m.text).toContain(`HELLO`);
    expect(m.text).toContain(`Your invoice ${t} is attached.`);
    expect(m.text).not.toContain('<p>');
    expect(m.text.length).toBe(200);
    expect(m.attachments).toEqual([{ filename: 'invoice.pdf', contentType: 'application/pdf', size: 3000 }]);
    expect(res.content).toContain(`Message-ID: ${messageId}`);
    expect(res.content).toContain('invoice.pdf (application/pdf, 3000 bytes)');
    expect(res.content).toContain('body cut at 200 characters');
    expect(res.content).toMatch(/cursor: \{"uidValidity":"\d+","lastUid":\d+\}/);

    // Reading changed nothing on the server.
    const [after] = await findByMessageId(AGENT, 'INBOX', messageId);
    expect(after!.flags.has('\\Seen')).toBe(false);

    // markSeen is the only way to change that.
    const marked = await run(emailConfig(), 'fetch_email', { subjectContains: t, markSeen: true });
    expect((marked.data as FetchEmailData).messages[0]!.seen).toBe(true);
    const [seen] = await findByMessageId(AGENT, 'INBOX', messageId);
    expect(seen!.flags.has('\\Seen')).toBe(true);
    const unseen = await run(emailConfig(), 'fetch_email', { subjectContains: t, unseenOnly: true });
    expect((unseen.data as FetchEmailData).messages).toHaveLength(0);
  });

  test('cursor: returns only newer messages, oldest first, and continues past the limit', async () => {
    const t = token('cursor');
    const ids = [1, 2, 3].map((i) => `<${t}-${i}@example.test>`);
    for (const [i, id] of ids.entries())
      await sendDirect({ to: AGENT.address, subject: `${t} #${i + 1}`, messageId: id, text: 'x' });
    for (const id of ids) await waitForMessage(AGENT, 'INBOX', id);

    const first = (await run(emailConfig(), 'fetch_email', { subjectContains: t, order: 'oldest', limit: 2 }))
      .data as FetchEmailData;
    expect(first.messages.map((m) => m.messageId)).toEqual(ids.slice(0, 2));
    expect(first.remaining).toBe(1);
    const second = (
      await run(emailConfig(), 'fetch_email', { subjectContains: t, cursor: first.cursor, limit: 2 })
    ).data as FetchEmailData;
    expect(second.messages.map((m) => m.messageId)).toEqual([ids[2]]);
    const third = (await run(emailConfig(), 'fetch_email', { subjectContains: t, cursor: second.cursor }))
      .data as FetchEmailData;
    expect(third.messages).toHaveLength(0);
    expect(third.cursor.lastUid).toBeGreaterThanOrEqual(second.cursor.lastUid);

    // A cursor from another incarnation of the folder is reset, with a notice.
    const reset = await run(emailConfig(), 'fetch_email', {
      subjectContains: t,
      cursor: { uidValidity: '1', lastUid: 999_999 },
    });
    expect((reset.data as FetchEmailData).messages).toHaveLength(3);
    expect(reset.content).toContain('UIDVALIDITY 1 →');
  });

  test('a folder that does not exist is a final EmailFolderNotFound', async () => {
    const f = await failure(run(emailConfig(), 'fetch_email', { folder: `Nope-${token()}` }));
    expect(f).toMatchObject({ type: 'EmailFolderNotFound', nonRetryable: true });
    expect(f.message).toContain('email account "default"');
  });

  test('IMAPS with the configured CA works; without it the certificate is refused (final EmailTlsError)', async () => {
    const e = mailEnv();
    const imaps = (tls: Record<string, unknown>) =>
      emailConfig({
        default: agentAccount({
          imap: { host: e.host, port: e.imapsPort, secure: true, tls, connectionTimeoutMs: 3000 },
        }),
      });
    const ok = await run(imaps({ ca: e.caFile }), 'fetch_email', { subjectContains: token('none') });
    expect((ok.data as FetchEmailData).messages).toEqual([]);
    const f = await failure(run(imaps({}), 'fetch_email', {}));
    expect(f).toMatchObject({ type: 'EmailTlsError', nonRetryable: true });
    expect(f.message).toContain('tls.ca');
  });
});

describe('send_email', () => {
  test('sends once with a deterministic Message-ID; a retry returns the earlier result and sends nothing', async () => {
    const t = token('send');
    const workflowId = token('wf-send');
    const args = {
      to: USER.address,
      cc: [],
      bcc: ['Hidden <user@example.test>'],
      subject: `Hello ${t}`,
      text: `body ${t}`,
    };
    const res = await run(emailConfig(), 'send_email', args, { workflowId, toolCallId: 'c1' });
    const data = res.data as SendEmailData;
    const id = deterministicMessageId(workflowId, 'c1', AGENT.address);
    expect(data).toMatchObject({
      messageId: id,
      accepted: [USER.address],
      alreadySent: false,
      sentFolder: 'Sent',
    });
    expect(res.content).toBe(`Email sent to ${USER.address} (Message-ID ${id}). A copy is in "Sent".`);

    const [delivered] = await waitForMessage(USER, 'INBOX', id);
    expect(delivered!.headers).not.toMatch(/^Bcc:/im);
    const [copy] = await findByMessageId(AGENT, 'Sent', id);
    expect([...copy!.flags]).toEqual(expect.arrayContaining([SENT_KEYWORD, '\\Seen']));
    expect(copy!.flags.has(PENDING_KEYWORD)).toBe(false);
    expect(copy!.headers).toMatch(/^Bcc: Hidden <user@example.test>/im);

    const retry = await run(emailConfig(), 'send_email', args, { workflowId, toolCallId: 'c1', attempt: 2 });
    expect(retry.data).toMatchObject({ messageId: id, alreadySent: true });
    expect(retry.content).toContain('not sent again');
    expect(await settledCount(USER, 'INBOX', id)).toBe(1);
    expect(await findByMessageId(AGENT, 'Sent', id)).toHaveLength(1);
  });

  test('a pending record (an attempt died mid-send) is a final EmailDeliveryUnknown, and nothing is resent', async () => {
    const workflowId = token('wf-pending');
    const id = deterministicMessageId(workflowId, 'c1', AGENT.address);
    const c = imapAs(AGENT);
    await c.connect();
    await c.append('Sent', `Message-ID: ${id}\r\nSubject: pending\r\nTo: ${USER.address}\r\n\r\nx\r\n`, [
      PENDING_KEYWORD,
    ]);
    await c.logout();

    const f = await failure(
      run(
        emailConfig(),
        'send_email',
        { to: USER.address, subject: 'pending', text: 'x' },
        { workflowId, toolCallId: 'c1', attempt: 2 },
      ),
    );
    expect(f).toMatchObject({ type: 'EmailDeliveryUnknown', nonRetryable: true });
    expect(f.message).toContain(id);
    expect(f.message).toContain('NOT sent again');
    expect(f.message).toContain(PENDING_KEYWORD);
    expect(await settledCount(USER, 'INBOX', id)).toBe(0);
  });

  test('replying in a thread sets In-Reply-To and References', async () => {
    const workflowId = token('wf-reply');
    const parent = `<${token('parent')}@example.test>`;
    await run(
      emailConfig(),
      'send_email',
      { to: [USER.address], subject: 'Re: question', text: 'answer', inReplyTo: parent },
      { workflowId },
    );
    const [m] = await waitForMessage(
      USER,
      'INBOX',
      deterministicMessageId(workflowId, 'call-1', AGENT.address),
    );
    expect(m!.headers).toMatch(new RegExp(`^In-Reply-To: ${parent}`, 'm'));
    expect(m!.headers).toMatch(new RegExp(`^References: ${parent}`, 'm'));
  });

  test('wrong password: final EmailAuthFailed naming the account, without the password', async () => {
    const secret = `Wr0ng-${token()}`;
    const f = await failure(
      run(emailConfig({ support: agentAccount({ password: secret }) }), 'send_email', {
        to: USER.address,
        subject: 's',
        text: 'x',
      }),
    );
    expect(f).toMatchObject({ type: 'EmailAuthFailed', nonRetryable: true });
    expect(f.message).toContain('email account "support"');
    expect(f.message).not.toContain(secret);

    // Only the SMTP password wrong: the Sent record was written first, and is removed on refusal.
    const workflowId = token('wf-auth');
    const smtpOnly = agentAccount({ smtp: { ...(agentAccount().smtp as object), password: secret } });
    const g = await failure(
      run(
        emailConfig({ default: smtpOnly }),
        'send_email',
        { to: USER.address, subject: 's', text: 'x' },
        { workflowId },
      ),
    );
    expect(g).toMatchObject({ type: 'EmailAuthFailed', nonRetryable: true });
    expect(g.message).toContain('SMTP');
    expect(g.message).not.toContain(secret);
    expect(JSON.stringify(g)).not.toContain(secret);
    await expectNothingSent(workflowId, 'call-1');
  });

  test('unknown account and missing configuration are final and say what to do', async () => {
    const f = await failure(
      run(emailConfig({ support: agentAccount(), sales: agentAccount() }), 'send_email', {
        account: 'billing',
        to: USER.address,
        subject: 's',
        text: 'x',
      }),
    );
    expect(f).toMatchObject({ type: 'EmailUnknownAccount', nonRetryable: true });
    expect(f.message).toBe('Unknown email account "billing"; configured accounts: support, sales');

    const g = await failure(run(emailConfig({}), 'fetch_email', {}));
    expect(g).toMatchObject({ type: 'EmailNotConfigured', nonRetryable: true });
    expect(g.message).toMatch(
      /^email is not configured: add an email.accounts section to DURABLE_AGENT_CONFIG/,
    );
  });

  test('unreachable server: retryable EmailConnectionFailed, and the Sent record is removed', async () => {
    const port = await freePort();
    const workflowId = token('wf-down');
    const down = agentAccount({
      smtp: { host: '127.0.0.1', port, secure: false, connectionTimeoutMs: 2000 },
    });
    const f = await failure(
      run(
        emailConfig({ default: down }),
        'send_email',
        { to: USER.address, subject: 's', text: 'x' },
        { workflowId },
      ),
    );
    expect(f).toMatchObject({ type: 'EmailConnectionFailed', nonRetryable: false });
    expect(f.message).toContain(`SMTP 127.0.0.1:${port}`);
    await expectNothingSent(workflowId, 'call-1');

    const imapDown = agentAccount({
      imap: { host: '127.0.0.1', port, secure: false, connectionTimeoutMs: 2000 },
    });
    const g = await failure(run(emailConfig({ default: imapDown }), 'fetch_email', {}));
    expect(g).toMatchObject({ type: 'EmailConnectionFailed', nonRetryable: false });
  });

  test('refused recipients (unknown user, relay denied): final EmailRecipientRefused with the server words', async () => {
    for (const to of ['nobody@example.test', 'someone@example.com']) {
      const workflowId = token('wf-rcpt');
      const f = await failure(
        run(emailConfig(), 'send_email', { to, subject: 's', text: 'x' }, { workflowId }),
      );
      expect(f).toMatchObject({ type: 'EmailRecipientRefused', nonRetryable: true });
      expect(f.message).toMatch(/55\d 5\.\d\.\d/);
      expect(
        await findByMessageId(AGENT, 'Sent', deterministicMessageId(workflowId, 'call-1', AGENT.address)),
      ).toHaveLength(0);
    }
  });

  test('malformed address: final EmailInvalidAddress before anything is written or sent', async () => {
    const workflowId = token('wf-bad');
    for (const to of ['not-an-address', 'a@@example.test', 'Ann <ann@>']) {
      const f = await failure(
        run(emailConfig(), 'send_email', { to, subject: 's', text: 'x' }, { workflowId }),
      );
      expect(f).toMatchObject({ type: 'EmailInvalidAddress', nonRetryable: true });
      expect(f.message).toContain('Malformed to address');
    }
    await expectNothingSent(workflowId, 'call-1');
  });

  test('oversized message: final EmailMessageTooLarge from the server (552) or from the account cap', async () => {
    // Text and HTML bodies are each capped at 1,000,000 characters; together they exceed Postfix's limit.
    const half = Math.ceil(mailEnv().messageSizeLimit * 0.7);
    expect(half).toBeLessThanOrEqual(1_000_000);
    const workflowId = token('wf-big');
    const args = {
      to: USER.address,
      subject: 'big',
      text: 'x'.repeat(half),
      html: `<p>${'y'.repeat(half)}</p>`,
    };
    const f = await failure(run(emailConfig(), 'send_email', args, { workflowId }));
    expect(f).toMatchObject({ type: 'EmailMessageTooLarge', nonRetryable: true });
    expect(f.message).toMatch(/552/);
    await expectNothingSent(workflowId, 'call-1');

    const capped = emailConfig({ default: agentAccount({ maxMessageBytes: 2048 }) });
    const g = await failure(
      run(capped, 'send_email', { to: USER.address, subject: 'big', text: 'y'.repeat(5000) }, { workflowId }),
    );
    expect(g).toMatchObject({ type: 'EmailMessageTooLarge', nonRetryable: true });
    expect(g.message).toContain('allows 2048 (maxMessageBytes)');
  });

  test('without a Sent folder: failures are final and a retry attempt refuses to send (at most once)', async () => {
    const noRecord = emailConfig({ default: agentAccount({ sentFolder: false }) });
    const workflowId = token('wf-norecord');
    const f = await failure(
      run(noRecord, 'send_email', { to: USER.address, subject: 's', text: 'x' }, { workflowId, attempt: 2 }),
    );
    expect(f).toMatchObject({ type: 'EmailDeliveryUnknown', nonRetryable: true });
    expect(
      await settledCount(USER, 'INBOX', deterministicMessageId(workflowId, 'call-1', AGENT.address)),
    ).toBe(0);

    const port = await freePort();
    const down = emailConfig({
      default: agentAccount({
        sentFolder: false,
        smtp: { host: '127.0.0.1', port, connectionTimeoutMs: 2000 },
      }),
    });
    const g = await failure(run(down, 'send_email', { to: USER.address, subject: 's', text: 'x' }));
    expect(g).toMatchObject({ type: 'EmailConnectionFailed', nonRetryable: true });
    expect(g.message).toContain('keeps no Sent-folder record');
  });
});

describe('error mapping (pure)', () => {
  const scope = {
    account: 'support',
    protocol: 'IMAP' as const,
    host: 'imap.example.com',
    port: 993,
    secrets: ['hunter2'],
    user: 'me',
  };

  test('IMAP throttling retries after the server-suggested delay', () => {
    const f = mapImapError(
      Object.assign(new Error('Request is throttled'), { code: 'ETHROTTLE', throttleReset: 92_000 }),
      scope,
    );
    expect(f).toMatchObject({ type: 'EmailThrottled', nonRetryable: false });
    expect(f.nextRetryDelay).toBe(92_000);
    const g = mapImapError(
      Object.assign(new Error('x'), { serverResponseCode: 'LIMIT', responseStatus: 'NO' }),
      scope,
    );
    expect(g).toMatchObject({ type: 'EmailThrottled', nextRetryDelay: 30_000 });
  });

  test('4xx SMTP replies retry; 5xx are final; secrets never survive', () => {
    const smtp = { ...scope, protocol: 'SMTP' as const };
    const temp = mapSmtpError(
      Object.assign(new Error('x'), {
        responseCode: 451,
        response: '451 4.3.0 try later',
        command: 'RCPT TO',
      }),
      smtp,
    );
    expect(temp).toMatchObject({ type: 'EmailTemporaryFailure', nonRetryable: false });
    const auth = mapSmtpError(
      Object.assign(new Error('Invalid login'), {
        code: 'EAUTH',
        responseCode: 535,
        response: `535 bad AUTH ${Buffer.from('\0me\0hunter2').toString('base64')} hunter2`,
      }),
      smtp,
    );
    expect(auth).toMatchObject({ type: 'EmailAuthFailed', nonRetryable: true });
    expect(auth.message).not.toContain('hunter2');
    expect(auth.message).not.toContain(Buffer.from('\0me\0hunter2').toString('base64'));
    expect(redact('pw hunter2 aHVudGVyMg==', ['hunter2'])).toBe('pw *** ***');
  });
});
