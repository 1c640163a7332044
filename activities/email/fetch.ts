import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import { convert as htmlToText } from 'html-to-text';
import type {
  FetchMessageObject,
  ImapFlow,
  MessageAddressObject,
  MessageStructureObject,
  SearchObject,
} from 'imapflow';
import { simpleParser } from 'mailparser';
import type { z } from 'zod';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';
import { formatZodIssues } from '../../shared/zod-issues';
import type { EmailCursor } from '../../shared/tools/email';
import { FetchEmailArgs } from '../../shared/tools/email';
import type { EmailConnections } from './connections';
import { scopeOf } from './connections';
import { emailFailure, mapImapError } from './errors';

/** Arguments of `fetch_email` after validation. */
export type FetchEmailInput = ToolActivityInput<z.output<typeof FetchEmailArgs>>;

/** Messages fetched per IMAP round trip; the activity heartbeats after each. */
const BATCH = 10;
/** Most bytes of a message downloaded to extract its text (attachments are listed from BODYSTRUCTURE). */
const SOURCE_LIMIT = 2 * 1024 * 1024;

/** Attachment metadata (content is never downloaded into results). */
export interface EmailAttachment {
  filename: string;
  contentType: string;
  /** Decoded size in bytes (estimated from the transfer encoding). */
  size: number;
}

/** One message as `fetch_email` returns it in `data`. */
export interface FetchedEmail {
  uid: number;
  messageId?: string;
  inReplyTo?: string;
  references: string[];
  date?: string;
  from: string[];
  to: string[];
  cc: string[];
  replyTo: string[];
  subject: string;
  seen: boolean;
  flags: string[];
  size?: number;
  text: string;
  textTruncated: boolean;
  attachments: EmailAttachment[];
}

/** The full result of `fetch_email`, returned as `data` for UIs. */
export interface FetchEmailData {
  account: string;
  folder: string;
  cursor: EmailCursor;
  /** Matching messages not returned because of `limit`. */
  remaining: number;
  notices: string[];
  messages: FetchedEmail[];
}

function formatAddresses(list: MessageAddressObject[] | undefined): string[] {
  return (list ?? [])
    .map((a) => (a.name ? `${a.name} <${a.address ?? ''}>` : (a.address ?? '')))
    .filter(Boolean);
}

/** Attachments from BODYSTRUCTURE: parts with a file name or an attachment disposition. */
export function attachmentsOf(node: MessageStructureObject | undefined): EmailAttachment[] {
  if (!node) return [];
  if (node.childNodes?.length) return node.childNodes.flatMap(attachmentsOf);
  const filename = node.dispositionParameters?.filename ?? node.parameters?.name;
  if (!filename && node.disposition !== 'attachment') return [];
  const encoded = node.size ?? 0;
  // Base64 bodies come in lines of 76 characters plus CRLF; 4 characters carry 3 bytes.
  const base64 = node.encoding?.toLowerCase() === 'base64';
  return [
    {
      filename: filename ?? '(unnamed)',
      contentType: node.type,
      size: base64 ? Math.floor(((encoded - 2 * Math.floor(encoded / 78)) * 3) / 4) : encoded,
    },
  ];
}

/** The readable text of a message: its text part, else its HTML converted to text. */
async function bodyText(source: Buffer | undefined): Promise<{ text: string; references: string[] }> {
  if (!source) return { text: '', references: [] };
  const parsed = await simpleParser(source, {
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipImageLinks: true,
  });
  const refs =
    parsed.references === undefined
      ? []
      : Array.isArray(parsed.references)
        ? parsed.references
        : [parsed.references];
  let text = parsed.text?.trim() ?? '';
  if (!text && typeof parsed.html === 'string') {
    text = htmlToText(parsed.html, {
      wordwrap: false,
      selectors: [
        { selector: 'img', format: 'skip' },
        { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
      ],
    }).trim();
  }
  return { text, references: refs };
}

async function toEmail(msg: FetchMessageObject, maxBodyChars: number): Promise<FetchedEmail> {
  const env = msg.envelope;
  const { text, references } = maxBodyChars > 0 ? await bodyText(msg.source) : { text: '', references: [] };
  const flags = [...(msg.flags ?? [])];
  return {
    uid: msg.uid,
    messageId: env?.messageId,
    inReplyTo: env?.inReplyTo,
    references,
    date: env?.date ? new Date(env.date).toISOString() : undefined,
    from: formatAddresses(env?.from),
    to: formatAddresses(env?.to),
    cc: formatAddresses(env?.cc),
    replyTo: formatAddresses(env?.replyTo),
    subject: env?.subject ?? '',
    seen: flags.includes('\\Seen'),
    flags,
    size: msg.size,
    text: text.slice(0, maxBodyChars),
    textTruncated: text.length > maxBodyChars,
    attachments: attachmentsOf(msg.bodyStructure),
  };
}

function searchOf(args: z.output<typeof FetchEmailArgs>, afterUid: number): SearchObject {
  const q: SearchObject = {};
  if (args.unseenOnly) q.seen = false;
  if (args.since) q.since = new Date(`${args.since}T00:00:00Z`);
  if (args.before) q.before = new Date(`${args.before}T00:00:00Z`);
  if (args.from) q.from = args.from;
  if (args.to) q.to = args.to;
  if (args.subjectContains) q.subject = args.subjectContains;
  if (args.uids) q.uid = args.uids.join(',');
  else if (afterUid > 0) q.uid = `${afterUid + 1}:*`;
  if (Object.keys(q).length === 0) q.all = true;
  return q;
}

/**
 * The `fetch_email` activity. Opens the folder read-only (EXAMINE) and reads with BODY.PEEK, so it
 * never changes flags unless `markSeen` is set. With a cursor it returns only messages above the
 * cursor's UID, oldest first, and a new cursor: polling with it sees each message exactly once
 * (a changed UIDVALIDITY resets the cursor, with a notice). Heartbeats after each batch and stops
 * on cancellation.
 */
export async function fetchEmail(connections: EmailConnections, input: FetchEmailInput): Promise<ToolResult> {
  const ctx = Context.current();
  const parsed = FetchEmailArgs.safeParse(input.args);
  if (!parsed.success)
    throw emailFailure(
      'EmailInvalidArguments',
      `Invalid fetch_email arguments: ${formatZodIssues(parsed.error)}`,
    );
  const args = parsed.data;
  const account = connections.account(args.account);
  const scope = scopeOf(account, 'IMAP');
  const client = await connections.imap(account);
  // Cancelling closes the connection, which ends any command in flight at once.
  const onCancel = () => client.close();
  ctx.cancellationSignal.addEventListener('abort', onCancel);
  try {
    return await fetchFrom(client, args, account.name);
  } catch (err) {
    if (ctx.cancellationSignal.aborted) throw new CancelledFailure('fetch_email was cancelled');
    throw mapImapError(err, scope, args.folder);
  } finally {
    ctx.cancellationSignal.removeEventListener('abort', onCancel);
    await client.logout().catch(() => client.close());
  }
}

async function fetchFrom(
  client: ImapFlow,
  args: z.output<typeof FetchEmailArgs>,
  accountName: string,
): Promise<ToolResult> {
  const ctx = Context.current();
  const notices: string[] = [];
  const messages: FetchedEmail[] = [];
  let cursor: EmailCursor;
  let remaining: number;
  {
    const lock = await client.getMailboxLock(args.folder, { readOnly: true });
    try {
      const box = client.mailbox;
      if (!box) throw emailFailure('EmailFolderNotFound', `Folder "${args.folder}" could not be opened`);
      const uidValidity = box.uidValidity.toString();
      // Read before searching: anything delivered later gets a UID >= this and is seen next time.
      const uidNext = box.uidNext;
      let after = 0;
      if (args.cursor) {
        if (args.cursor.uidValidity === uidValidity) after = args.cursor.lastUid;
        else {
          notices.push(
            `Folder "${args.folder}" was recreated (UIDVALIDITY ${args.cursor.uidValidity} → ${uidValidity}); ` +
              'the cursor was reset, so messages seen before may be returned again.',
          );
        }
      }
      const found = await client.search(searchOf(args, after), { uid: true });
      // "N:*" always matches the highest UID, even below N: filter again.
      const matched = (found || []).filter((u) => u > after).sort((a, b) => a - b);
      const newestFirst = !args.cursor && args.order === 'newest';
      const picked = newestFirst ? matched.slice(-args.limit).reverse() : matched.slice(0, args.limit);
      remaining = matched.length - picked.length;
      const highest = Math.max(after, 0, ...picked);
      // Ascending with more left: continue right after the last one returned. Otherwise everything
      // up to uidNext-1 has been considered (newest-first deliberately starts the poll from now).
      cursor = {
        uidValidity,
        lastUid: remaining > 0 && !newestFirst ? highest : Math.max(highest, uidNext - 1),
      };
      if (remaining > 0) {
        notices.push(
          newestFirst
            ? `${remaining} older matching messages were not returned (limit ${args.limit}).`
            : `${remaining} more matching messages: call again with the cursor to continue.`,
        );
      }

      const query = {
        uid: true,
        envelope: true,
        flags: true,
        size: true,
        bodyStructure: true,
        ...(args.maxBodyChars > 0 ? { source: { maxLength: SOURCE_LIMIT } } : {}),
      };
      for (let i = 0; i < picked.length; i += BATCH) {
        const batch = picked.slice(i, i + BATCH);
        const byUid = new Map<number, FetchMessageObject>();
        for await (const msg of client.fetch(batch.join(','), query, { uid: true })) byUid.set(msg.uid, msg);
        for (const uid of batch) {
          const msg = byUid.get(uid);
          if (msg) messages.push(await toEmail(msg, args.maxBodyChars));
        }
        ctx.heartbeat({ fetched: messages.length, of: picked.length });
        if (ctx.cancellationSignal.aborted) throw new CancelledFailure('fetch_email was cancelled');
      }
    } finally {
      lock.release();
    }
  }

  if (args.markSeen && messages.length) {
    // A separate read-write selection: the read-only one above cannot (and must not) set flags.
    const lock = await client.getMailboxLock(args.folder);
    try {
      await client.messageFlagsAdd(messages.map((m) => m.uid).join(','), ['\\Seen'], { uid: true });
      for (const m of messages) m.seen = true;
      notices.push(`Marked ${messages.length} messages as read.`);
    } finally {
      lock.release();
    }
  }

  const data: FetchEmailData = {
    account: accountName,
    folder: args.folder,
    cursor,
    remaining,
    notices,
    messages,
  };
  return { content: render(data, args.maxBodyChars), data };
}

/** The compact text the model reads. */
function render(d: FetchEmailData, maxBodyChars: number): string {
  const lines = [`${d.messages.length} message(s) in "${d.folder}" (account "${d.account}").`];
  for (const m of d.messages) {
    lines.push('');
    lines.push(`[uid ${m.uid}]${m.seen ? '' : ' (unread)'} ${m.date ?? ''}`.trimEnd());
    lines.push(`From: ${m.from.join(', ')}`);
    lines.push(`To: ${m.to.join(', ')}${m.cc.length ? ` | Cc: ${m.cc.join(', ')}` : ''}`);
    lines.push(`Subject: ${m.subject}`);
    if (m.messageId) lines.push(`Message-ID: ${m.messageId}`);
    if (m.inReplyTo) lines.push(`In-Reply-To: ${m.inReplyTo}`);
    if (m.attachments.length) {
      lines.push(
        `Attachments: ${m.attachments.map((a) => `${a.filename} (${a.contentType}, ${a.size} bytes)`).join('; ')}`,
      );
    }
    if (maxBodyChars > 0) {
      lines.push(m.text || '(no text body)');
      if (m.textTruncated) {
        lines.push(
          `[… body cut at ${maxBodyChars} characters; fetch uids [${m.uid}] with a larger maxBodyChars for more]`,
        );
      }
    }
  }
  if (d.notices.length) lines.push('', ...d.notices);
  lines.push('', `cursor: ${JSON.stringify(d.cursor)}`);
  return lines.join('\n');
}
