import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { Context } from '@temporalio/activity';
import type { ApplicationFailure } from '@temporalio/common';
import { CancelledFailure } from '@temporalio/common';
import addressparser from 'nodemailer/lib/addressparser';
import MailComposer from 'nodemailer/lib/mail-composer';
import type { z } from 'zod';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';
import type { EmailErrorType } from '../../shared/tools/email';
import { SendEmailArgs } from '../../shared/tools/email';
import { formatZodIssues } from '../../shared/zod-issues';
import { heartbeatEvery } from '../heartbeats';
import type { EmailStallPoint, ResolvedAccount } from './config';
import type { EmailConnections } from './connections';
import { scopeOf } from './connections';
import { emailFailure, mapSmtpError } from './errors';
import { PENDING_KEYWORD, SentRecord } from './sent-record';

/** Arguments of `send_email` after validation. */
export type SendEmailInput = ToolActivityInput<z.output<typeof SendEmailArgs>>;

/** The full record of a send, returned as `data` for UIs. */
export interface SendEmailData {
  account: string;
  messageId: string;
  accepted: string[];
  rejected: string[];
  response?: string;
  sentFolder?: string;
  /** True when an earlier attempt of this tool call had already sent it (nothing was sent now). */
  alreadySent: boolean;
}

/** Test-only pause inside send_email, so a test can kill the worker at an exact point. */
export interface SendStallHook {
  stallAt: EmailStallPoint;
  stallMs: number;
}

/**
 * The Message-ID of a tool call: the same for every attempt and every worker, different for every
 * call. `<32 hex of sha256(workflowId, toolCallId)@sender-domain>`.
 */
export function deterministicMessageId(workflowId: string, toolCallId: string, fromAddress: string): string {
  const hash = createHash('sha256').update(`${workflowId}\n${toolCallId}`).digest('hex').slice(0, 32);
  const domain = fromAddress.split('@')[1] || 'durable-agent.invalid';
  return `<${hash}@${domain}>`;
}

const ADDRESS = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:".]+(\.[^\s@<>()[\]\\,;:".]+)*$/;

/** Parses address fields ("Ann <a@x>, b@y" or a list); malformed ones are a final error. */
export function parseAddresses(
  field: string,
  values: string | string[] | undefined,
  account: string,
): string[] {
  const out: string[] = [];
  for (const value of values === undefined ? [] : Array.isArray(values) ? values : [values]) {
    const parsed = addressparser(value, { flatten: true });
    if (parsed.length === 0) {
      throw emailFailure(
        'EmailInvalidAddress',
        `Malformed ${field} address "${value}" (account "${account}")`,
      );
    }
    for (const a of parsed) {
      if (!ADDRESS.test(a.address)) {
        throw emailFailure(
          'EmailInvalidAddress',
          `Malformed ${field} address "${a.address || value}" (account "${account}"): use name@domain or "Name <name@domain>"`,
        );
      }
      out.push(a.address);
    }
  }
  return out;
}

function addressList(list: unknown[] | undefined): string[] {
  return (list ?? []).map((a) => (typeof a === 'string' ? a : ((a as { address?: string }).address ?? '')));
}

/** A failure made final: used where no record exists to make a retry safe. */
function finalFailure(f: ApplicationFailure, why: string): ApplicationFailure {
  if (f.nonRetryable) return f;
  return emailFailure(f.type as EmailErrorType, `${f.message.replace(/; will retry$/, '')}; ${why}`, {
    nonRetryable: true,
  });
}

function deliveryUnknown(
  account: ResolvedAccount,
  messageId: string,
  subject: string,
  where: string,
): ApplicationFailure {
  return emailFailure(
    'EmailDeliveryUnknown',
    `Delivery of ${messageId} ("${subject}") from account "${account.name}" is unknown: an earlier attempt of ` +
      `this call handed it to the SMTP server but stopped before recording the answer. It was NOT sent again. ` +
      `${where} To send it anyway, call send_email again (a new call gets a new Message-ID).`,
  );
}

/**
 * The `send_email` activity. Idempotent per tool call: the Message-ID is derived from the workflow
 * id and tool call id, and a write-ahead copy in the account's Sent folder records each send
 * (pending before SMTP, sent after the server's 250, removed when the server refused).
 *
 * Guarantee: for one (workflow id, tool call id), across retries, workers and crashes, the SMTP
 * server is handed the message at most once; when it is known accepted, every retry returns the
 * earlier result; when an attempt died between handing it over and recording the answer, later
 * attempts fail with the final `EmailDeliveryUnknown` instead of risking a second copy.
 * Accounts with `sentFolder: false` (or no IMAP) keep no record: the first attempt may send, every
 * failure is final, and any retry attempt fails with `EmailDeliveryUnknown` (at most once).
 */
export async function sendEmail(
  connections: EmailConnections,
  input: SendEmailInput,
  hook?: SendStallHook,
): Promise<ToolResult> {
  const ctx = Context.current();
  const parsed = SendEmailArgs.safeParse(input.args);
  if (!parsed.success)
    throw emailFailure(
      'EmailInvalidArguments',
      `Invalid send_email arguments: ${formatZodIssues(parsed.error)}`,
    );
  const args = parsed.data;
  const account = connections.account(args.account);

  const to = parseAddresses('to', args.to, account.name);
  const cc = parseAddresses('cc', args.cc, account.name);
  const bcc = parseAddresses('bcc', args.bcc, account.name);
  parseAddresses('replyTo', args.replyTo, account.name);
  const recipients = [...new Set([...to, ...cc, ...bcc])];
  // A standalone activity (no workflow) is keyed by its own activity id instead.
  const scopeId = ctx.info.workflowExecution?.workflowId ?? `activity:${ctx.info.activityId}`;
  const messageId = deterministicMessageId(scopeId, input.toolCallId, account.fromAddress);
  const mail = {
    from: account.from,
    to: args.to,
    cc: args.cc,
    bcc: args.bcc,
    replyTo: args.replyTo,
    subject: args.subject,
    text: args.text,
    html: args.html,
    inReplyTo: args.inReplyTo,
    references: args.references ?? (args.inReplyTo ? [args.inReplyTo] : undefined),
    messageId,
    date: new Date(),
  };
  const raw = await new MailComposer(mail).compile().build();
  if (raw.length > account.maxMessageBytes) {
    throw emailFailure(
      'EmailMessageTooLarge',
      `The message is ${raw.length} bytes; account "${account.name}" allows ${account.maxMessageBytes} (maxMessageBytes). Nothing was sent`,
    );
  }
  // The Sent copy keeps Bcc (it is the sender's record); the transmitted message never does.
  const copyNode = new MailComposer(mail).compile();
  copyNode.keepBcc = true;
  const copy = await copyNode.build();

  let phase = 'checking the Sent folder';
  const beat = setInterval(() => ctx.heartbeat({ phase }), heartbeatEvery(2000, ctx.info));
  ctx.heartbeat({ phase });
  let record: SentRecord | undefined;
  try {
    record = account.sentFolder === false ? undefined : await SentRecord.open(connections, account);
    let pendingUid: number | undefined;
    if (record) {
      const earlier = await record.find(messageId);
      if (earlier.state === 'sent') {
        return result(account, messageId, earlier.recipients, [], undefined, record.folder, true);
      }
      if (earlier.state === 'pending') {
        throw deliveryUnknown(
          account,
          messageId,
          args.subject,
          `Check the recipients' mailboxes, or the copy marked ${PENDING_KEYWORD} in folder "${record.folder}".`,
        );
      }
      pendingUid = await record.appendPending(copy, messageId, mail.date);
    } else if (ctx.info.attempt > 1) {
      throw deliveryUnknown(
        account,
        messageId,
        args.subject,
        `Account "${account.name}" keeps no Sent-folder record to check.`,
      );
    }
    if (ctx.cancellationSignal.aborted) {
      if (record && pendingUid !== undefined) await record.remove(pendingUid);
      throw new CancelledFailure('send_email was cancelled before sending');
    }

    phase = 'sending';
    ctx.heartbeat({ phase });
    let fullyHandedOver = false;
    const stream = Readable.from([raw]);
    stream.once('end', () => (fullyHandedOver = true));
    let info;
    try {
      info = await connections
        .transport(account)
        .sendMail({ envelope: { from: account.fromAddress, to: recipients }, raw: stream });
    } catch (err) {
      const failure = mapSmtpError(err, scopeOf(account, 'SMTP'));
      const e = err as { responseCode?: number; code?: string; originalCode?: string; timeoutType?: string };
      // Definitely not accepted: the server answered with a refusal, or the message never finished
      // leaving us, or we never got a connection. Anything else may have been accepted.
      const definite =
        e.responseCode !== undefined ||
        !fullyHandedOver ||
        e.timeoutType === 'CONNECT_TIMEOUT' ||
        e.timeoutType === 'GREETING_TIMEOUT' ||
        ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH'].includes(e.originalCode ?? '');
      if (!definite) {
        throw deliveryUnknown(
          account,
          messageId,
          args.subject,
          `The connection ended after the whole message was transmitted (${failure.message}).`,
        );
      }
      if (record && pendingUid !== undefined) await record.remove(pendingUid);
      throw record
        ? failure
        : finalFailure(
            failure,
            `not retried automatically: account "${account.name}" keeps no Sent-folder record`,
          );
    }
    phase = 'accepted';
    await stall(hook, 'smtp-accepted', messageId);
    if (record && pendingUid !== undefined) {
      // The message is out; failing now would only turn a success into "unknown" on retry.
      await record.confirm(pendingUid).catch((err: unknown) => {
        ctx.log.warn('send_email: could not mark the Sent copy as sent', {
          messageId,
          error: (err as Error).message,
        });
      });
    }
    await stall(hook, 'record-confirmed', messageId);
    return result(
      account,
      messageId,
      addressList(info.accepted),
      addressList(info.rejected),
      info.response,
      record?.folder,
      false,
    );
  } finally {
    clearInterval(beat);
    await record?.close();
  }
}

async function stall(hook: SendStallHook | undefined, at: EmailStallPoint, messageId: string): Promise<void> {
  if (!hook || hook.stallAt !== at) return;
  const ctx = Context.current();
  ctx.log.warn('send_email test hook: stalling', { stallAt: at, messageId, stallMs: hook.stallMs });
  await ctx.sleep(hook.stallMs);
}

function result(
  account: ResolvedAccount,
  messageId: string,
  accepted: string[],
  rejected: string[],
  response: string | undefined,
  sentFolder: string | undefined,
  alreadySent: boolean,
): ToolResult {
  const data: SendEmailData = {
    account: account.name,
    messageId,
    accepted,
    rejected,
    response,
    sentFolder,
    alreadySent,
  };
  const parts = [
    alreadySent
      ? `Email already sent by an earlier attempt of this call to ${accepted.join(', ')} (Message-ID ${messageId}); not sent again.`
      : `Email sent to ${accepted.join(', ')} (Message-ID ${messageId}).`,
  ];
  if (rejected.length) parts.push(`The server refused: ${rejected.join(', ')}.`);
  if (sentFolder && !alreadySent) parts.push(`A copy is in "${sentFolder}".`);
  return { content: parts.join(' '), data };
}
