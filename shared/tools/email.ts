import { z } from 'zod';
import { schemaOnce } from '../schema-once';
import { defineTool } from './define';

/**
 * Every error type the email activities raise (a closed union, so workflows, retry policies and
 * UIs can match on it). Retryable ones: `EmailConnectionFailed`, `EmailTemporaryFailure`,
 * `EmailThrottled` (with a server-suggested `nextRetryDelay`). All others are final.
 */
export type EmailErrorType =
  | 'EmailNotConfigured'
  | 'EmailUnknownAccount'
  | 'EmailConfigError'
  | 'EmailAuthFailed'
  | 'EmailTlsError'
  | 'EmailInvalidArguments'
  | 'EmailInvalidAddress'
  | 'EmailRecipientRefused'
  | 'EmailMessageTooLarge'
  | 'EmailRejected'
  | 'EmailFolderNotFound'
  | 'EmailDeliveryUnknown'
  | 'EmailConnectionFailed'
  | 'EmailTemporaryFailure'
  | 'EmailThrottled';

/** Error types that retrying the same call cannot fix; also listed in the tools' retry policies. */
export const NON_RETRYABLE_EMAIL_ERRORS = [
  'EmailNotConfigured',
  'EmailUnknownAccount',
  'EmailConfigError',
  'EmailAuthFailed',
  'EmailTlsError',
  'EmailInvalidArguments',
  'EmailInvalidAddress',
  'EmailRecipientRefused',
  'EmailMessageTooLarge',
  'EmailRejected',
  'EmailFolderNotFound',
  'EmailDeliveryUnknown',
] as const satisfies readonly EmailErrorType[];

const account = schemaOnce('shared/tools/email#account', () =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .optional()
    .describe(
      'Name of a configured email account; omit for the default one / 已配置邮箱账户的名称；省略则使用默认账户',
    ),
);

/** The incremental-polling position in one folder: pass back what the previous call returned. */
export const EmailCursorSchema = schemaOnce('shared/tools/email#EmailCursorSchema', () =>
  z
    .object({
      uidValidity: z.string().regex(/^\d+$/).describe('UIDVALIDITY of the folder / 文件夹的 UIDVALIDITY'),
      lastUid: z.number().int().min(0).describe('Highest UID already seen / 已读取的最大 UID'),
    })
    .strict(),
);
/** A polling cursor, as returned by `fetch_email` and accepted back. */
export type EmailCursor = z.infer<typeof EmailCursorSchema>;

const isoDate = schemaOnce('shared/tools/email#isoDate', () =>
  z.iso.date({ message: 'use a date such as 2026-11-30' }),
);

/** Arguments of `fetch_email`. */
export const FetchEmailArgs = schemaOnce('shared/tools/email#FetchEmailArgs', () =>
  z
    .object({
      account,
      folder: z.string().min(1).max(200).default('INBOX').describe('Folder to read / 要读取的文件夹'),
      unseenOnly: z.boolean().default(false).describe('Only messages not yet read / 只返回未读邮件'),
      since: isoDate.optional().describe('Received on or after this date (YYYY-MM-DD) / 收到日期不早于'),
      before: isoDate.optional().describe('Received before this date (YYYY-MM-DD) / 收到日期早于'),
      from: z.string().min(1).max(200).optional().describe('Sender contains / 发件人包含'),
      to: z.string().min(1).max(200).optional().describe('Recipient contains / 收件人包含'),
      subjectContains: z.string().min(1).max(200).optional().describe('Subject contains / 主题包含'),
      uids: z
        .array(z.number().int().positive())
        .min(1)
        .max(50)
        .optional()
        .describe('Read exactly these UIDs (e.g. to get a full body) / 只读取这些 UID'),
      limit: z
        .number()
        .int()
        .min(1)
        .max(50)
        .default(10)
        .describe('Most messages to return (1–50) / 最多返回的邮件数'),
      order: z
        .enum(['newest', 'oldest'])
        .default('newest')
        .describe('Without a cursor: newest or oldest first; with a cursor always oldest first / 排序'),
      cursor: EmailCursorSchema.optional().describe(
        'Cursor from the previous call: only newer messages are returned, each exactly once / 上次调用返回的游标',
      ),
      markSeen: z
        .boolean()
        .default(false)
        .describe(
          'Mark the returned messages as read (off: reading never changes flags) / 将返回的邮件标记为已读',
        ),
      maxBodyChars: z
        .number()
        .int()
        .min(0)
        .max(50_000)
        .default(4000)
        .describe('Longest body text per message; 0 = headers only / 每封邮件正文的最大字符数'),
    })
    .strict(),
);

/** Arguments of `send_email`. */
export const SendEmailArgs = schemaOnce('shared/tools/email#SendEmailArgs', () =>
  z
    .object({
      account,
      to: z
        .union([z.string().min(3).max(2000), z.array(z.string().min(3).max(320)).min(1).max(50)])
        .describe('Recipient address(es), e.g. "Ann <ann@example.com>" / 收件人'),
      cc: z.array(z.string().min(3).max(320)).max(50).optional().describe('Cc / 抄送'),
      bcc: z.array(z.string().min(3).max(320)).max(50).optional().describe('Bcc / 密送'),
      subject: z.string().min(1).max(998).describe('Subject; "Re: …" when answering / 主题'),
      text: z.string().max(1_000_000).optional().describe('Plain-text body / 纯文本正文'),
      html: z.string().max(1_000_000).optional().describe('HTML body / HTML 正文'),
      replyTo: z.string().min(3).max(320).optional().describe('Reply-To address / 回复地址'),
      inReplyTo: z
        .string()
        .regex(/^<[^<>\s]+>$/, 'a Message-ID such as <abc@example.com>')
        .optional()
        .describe('Message-ID being answered, to reply in the same thread / 被回复邮件的 Message-ID'),
      references: z
        .array(z.string().regex(/^<[^<>\s]+>$/, 'a Message-ID such as <abc@example.com>'))
        .max(100)
        .optional()
        .describe('Message-IDs of the thread; defaults to inReplyTo / 邮件线程的 Message-ID 列表'),
    })
    .strict()
    .refine((a) => a.text !== undefined || a.html !== undefined, {
      message: 'give text and/or html',
      path: ['text'],
    }),
);

/** `fetch_email`: lists and reads mail over IMAP without marking it read. */
export const fetchEmailTool = defineTool({
  name: 'fetch_email',
  description:
    'Reads email from a configured IMAP account: sender, recipients, subject, date, Message-ID, UID, body text ' +
    'and attachment names. Filters: folder, unseenOnly, since/before, from, to, subjectContains, limit. ' +
    'Reading never marks mail as read unless markSeen is true. To poll for new mail, pass back the cursor it ' +
    'returns: every message is then returned exactly once.',
  description_zh:
    '从已配置的 IMAP 邮箱读取邮件：发件人、收件人、主题、日期、Message-ID、UID、正文和附件名。可按文件夹、未读、' +
    '日期、发件人、收件人、主题和数量筛选。除非 markSeen 为 true，读取不会把邮件标记为已读。轮询新邮件时请传回' +
    '返回的游标，每封邮件只会返回一次。',
  category: 'email',
  sign: 'm',
  inputs: FetchEmailArgs,
  output: 'a compact list of messages with a cursor line; the full records are in `data`',
  activity: {
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: '30 seconds',
    initialInterval: '2 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes: [...NON_RETRYABLE_EMAIL_ERRORS],
  },
});

/** `send_email`: sends one message over SMTP, at most once per tool call. */
export const sendEmailTool = defineTool({
  name: 'send_email',
  description:
    'Sends an email from a configured account (to, cc, bcc, subject, text and/or html). To answer a message in ' +
    'its thread, set inReplyTo to its Message-ID and a "Re: " subject. A retried call never sends twice.',
  description_zh:
    '从已配置的邮箱账户发送邮件（收件人、抄送、密送、主题、纯文本和/或 HTML）。回复某封邮件时，将 inReplyTo ' +
    '设为其 Message-ID，并使用 "Re: " 主题。重试不会重复发送。',
  category: 'email',
  sign: 'e',
  inputs: SendEmailArgs,
  output: 'who the message went to and its Message-ID',
  activity: {
    startToCloseTimeout: '5 minutes',
    // Short, so a crashed worker's send is picked up (and checked against its record) quickly.
    heartbeatTimeout: '15 seconds',
    heartbeatsOnClock: true,
    initialInterval: '2 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes: [...NON_RETRYABLE_EMAIL_ERRORS],
  },
});
