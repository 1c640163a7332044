import fs from 'node:fs';
import { z } from 'zod';
import { emailFailure } from './errors';

const ACCOUNT_NAME = /^[A-Za-z0-9_-]+$/;

const TlsSchema = z
  .object({
    ca: z
      .string()
      .min(1)
      .optional()
      .describe('PEM file of a CA to trust besides the system ones (self-signed servers)'),
    rejectUnauthorized: z
      .boolean()
      .default(true)
      .describe('Verify the server certificate; turn off only for throwaway test servers'),
    servername: z.string().min(1).optional().describe('Name the certificate must carry, when host is an IP'),
  })
  .strict();

const ServerSchema = z
  .object({
    host: z.string().min(1),
    // A number, or digits (what a `${env:NAME}` reference gives).
    port: z
      .union([z.number(), z.string().regex(/^\d+$/).transform(Number)])
      .pipe(z.number().int().min(1).max(65535)),
    secure: z.boolean().optional().describe('Implicit TLS; default true on ports 465 and 993'),
    requireTLS: z
      .boolean()
      .default(false)
      .describe('Fail unless the plain connection upgrades with STARTTLS'),
    user: z.string().min(1).optional().describe('Overrides the account user for this protocol'),
    password: z.string().min(1).optional().describe('Overrides the account password for this protocol'),
    tls: TlsSchema.default(() => TlsSchema.parse({})),
    connectionTimeoutMs: z.number().int().min(100).max(300_000).default(15_000),
  })
  .strict();

const AccountSchema = z
  .object({
    from: z.string().min(3).describe('Sender, e.g. "Support <support@example.com>"'),
    user: z.string().min(1).optional().describe('Login for SMTP and IMAP'),
    password: z
      .string()
      .min(1)
      .optional()
      .describe('Password for SMTP and IMAP; write "${env:NAME}" to keep it out of the file'),
    smtp: ServerSchema,
    imap: ServerSchema.optional().describe(
      'Needed by fetch_email, and by send_email for its Sent-folder record',
    ),
    sentFolder: z
      .union([z.string().min(1), z.literal(false)])
      .default('auto')
      .describe('"auto" = the folder marked \\Sent; a path; or false (no copy, no retry after a crash)'),
    maxMessageBytes: z
      .number()
      .int()
      .min(1024)
      .default(10 * 1024 * 1024)
      .describe('Refuse larger messages before sending'),
    maxConnections: z.number().int().min(1).max(20).default(2).describe('Pooled SMTP connections per worker'),
  })
  .strict();

/** Where send_email may pause, for the crash tests. */
export type EmailStallPoint = 'smtp-accepted' | 'record-confirmed';

const TestHooksSchema = z
  .object({
    stallAt: z.enum(['smtp-accepted', 'record-confirmed']),
    stallMs: z.number().int().min(1).max(600_000),
  })
  .strict()
  .describe('TEST ONLY: send_email pauses (heartbeating) at this point so a test can kill the worker there');

/** Email accounts by name (`email.accounts.support`). Workflows only ever see the name. */
export const EmailConfigSchema = z
  .object({
    accounts: z.record(z.string().regex(ACCOUNT_NAME), AccountSchema).default({}),
    defaultAccount: z.string().regex(ACCOUNT_NAME).optional(),
    testHooks: TestHooksSchema.optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.defaultAccount !== undefined && !(c.defaultAccount in c.accounts)) {
      ctx.addIssue({
        code: 'custom',
        path: ['defaultAccount'],
        message: `no account named "${c.defaultAccount}"`,
      });
    }
  });
/** Email configuration of a worker. */
export type EmailConfig = z.output<typeof EmailConfigSchema>;
/** One configured account, as written in the config file (after defaults). */
export type EmailAccountConfig = z.output<typeof AccountSchema>;
/** The SMTP or IMAP part of an account. */
export type EmailServerConfig = z.output<typeof ServerSchema>;

/** A server with everything needed to connect: credentials merged, TLS settings read. */
export interface ResolvedServer {
  host: string;
  port: number;
  secure: boolean;
  requireTLS: boolean;
  user?: string;
  password?: string;
  tls: { ca?: Buffer; rejectUnauthorized: boolean; servername?: string };
  connectionTimeoutMs: number;
}

/** An account ready to use. Holds secrets: never return it from an activity or put it in a message. */
export interface ResolvedAccount {
  name: string;
  from: string;
  fromAddress: string;
  smtp: ResolvedServer;
  imap?: ResolvedServer;
  sentFolder: string | false;
  maxMessageBytes: number;
  maxConnections: number;
  /** Every secret string of the account, for scrubbing error text. */
  secrets: string[];
}

function resolveServer(
  name: string,
  which: 'smtp' | 'imap',
  s: EmailServerConfig,
  acc: EmailAccountConfig,
): ResolvedServer {
  let ca: Buffer | undefined;
  if (s.tls.ca) {
    try {
      ca = fs.readFileSync(s.tls.ca);
    } catch (err) {
      throw emailFailure(
        'EmailConfigError',
        `Email account "${name}": cannot read ${which}.tls.ca file ${s.tls.ca}: ${(err as Error).message}`,
      );
    }
  }
  return {
    host: s.host,
    port: s.port,
    secure: s.secure ?? (s.port === 465 || s.port === 993),
    requireTLS: s.requireTLS,
    user: s.user ?? acc.user,
    password: s.password ?? acc.password,
    tls: { ca, rejectUnauthorized: s.tls.rejectUnauthorized, servername: s.tls.servername },
    connectionTimeoutMs: s.connectionTimeoutMs,
  };
}

/** The bare address of "Name <addr>" or "addr". */
export function bareAddress(from: string): string {
  const m = /<([^<>]+)>\s*$/.exec(from);
  return (m ? (m[1] as string) : from).trim();
}

/** Turns one account's config into connection settings (reads the CA file). */
export function resolveAccountConfig(name: string, acc: EmailAccountConfig): ResolvedAccount {
  const smtp = resolveServer(name, 'smtp', acc.smtp, acc);
  const imap = acc.imap ? resolveServer(name, 'imap', acc.imap, acc) : undefined;
  const secrets = [smtp.password, imap?.password].filter((p): p is string => !!p);
  return {
    name,
    from: acc.from,
    fromAddress: bareAddress(acc.from),
    smtp,
    imap,
    sentFolder: imap ? acc.sentFolder : false,
    maxMessageBytes: acc.maxMessageBytes,
    maxConnections: acc.maxConnections,
    secrets,
  };
}

/**
 * Picks the account a tool call names: the given name, else `defaultAccount`, else the account
 * called "default", else the only one. Unknown names and missing configuration are final errors
 * that say what to do.
 */
export function pickAccountName(config: EmailConfig, requested: string | undefined): string {
  const names = Object.keys(config.accounts);
  if (names.length === 0) {
    throw emailFailure(
      'EmailNotConfigured',
      'email is not configured: add an email.accounts section to DURABLE_AGENT_CONFIG ' +
        '(accounts by name, each with from, smtp, imap and credentials; see the README section "Email")',
    );
  }
  if (requested !== undefined) {
    if (names.includes(requested)) return requested;
    throw emailFailure(
      'EmailUnknownAccount',
      `Unknown email account "${requested}"; configured accounts: ${names.join(', ')}`,
    );
  }
  const fallback = config.defaultAccount ?? (names.includes('default') ? 'default' : undefined);
  if (fallback) return fallback;
  if (names.length === 1) return names[0] as string;
  throw emailFailure(
    'EmailUnknownAccount',
    `Several email accounts are configured (${names.join(', ')}) and none is the default; pass "account"`,
  );
}
