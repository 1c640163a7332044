/**
 * The local Postfix + Dovecot started by `bash scripts/mail-server.sh start`: its settings (from
 * `$MAILTEST_DIR/env`, overridable by MAILTEST_* variables), account configs for the email tools,
 * and direct IMAP/SMTP helpers that check what really arrived.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { ImapFlow } from 'imapflow';
import nodemailer from 'nodemailer';
import type { SendMailOptions } from 'nodemailer';
import type { EmailConfig } from '../activities/email/config';
import { EmailConfigSchema } from '../activities/email/config';

/** Connection settings of the test mail system. */
export interface MailTestEnv {
  host: string;
  smtpPort: number;
  smtpsPort: number;
  imapPort: number;
  imapsPort: number;
  caFile: string;
  messageSizeLimit: number;
}

/** The two test users the script creates. */
export const AGENT = { address: 'agent@example.test', password: 'agent-pass' } as const;
/** The second test user (the agent's correspondent). */
export const USER = { address: 'user@example.test', password: 'user-pass' } as const;

function envFile(): Record<string, string> {
  const file = path.join(process.env.MAILTEST_DIR ?? '/var/tmp/mailtest', 'env');
  const out: Record<string, string> = {};
  if (!fs.existsSync(file)) return out;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^export (MAILTEST_[A-Z_]+)=['"]?([^'"]*)['"]?$/.exec(line.trim());
    if (m) out[m[1] as string] = m[2] as string;
  }
  return out;
}

/**
 * Settings: process env first (the global setup exports this checkout's), then the script's env
 * file, then the script's former fixed defaults.
 */
export function mailEnv(): MailTestEnv {
  const file = envFile();
  const get = (k: string, d: string) => process.env[k] ?? file[k] ?? d;
  return {
    host: get('MAILTEST_HOST', '127.0.0.1'),
    smtpPort: Number(get('MAILTEST_SMTP_PORT', '2525')),
    smtpsPort: Number(get('MAILTEST_SMTPS_PORT', '1465')),
    imapPort: Number(get('MAILTEST_IMAP_PORT', '1143')),
    imapsPort: Number(get('MAILTEST_IMAPS_PORT', '1993')),
    caFile: get('MAILTEST_CA_FILE', '/var/tmp/mailtest/etc/tls/cert.pem'),
    messageSizeLimit: Number(get('MAILTEST_MESSAGE_SIZE_LIMIT', '1048576')),
  };
}

/** An IMAP client for a test user (not connected). */
export function imapAs(user: { address: string; password: string }): ImapFlow {
  const e = mailEnv();
  const c = new ImapFlow({
    host: e.host,
    port: e.imapPort,
    secure: false,
    auth: { user: user.address, pass: user.password },
    logger: false,
  });
  c.on('error', () => undefined);
  return c;
}

/** Why a test user cannot log in over IMAP, or null when the mail system answers. */
async function imapProblem(): Promise<string | null> {
  const c = imapAs(USER);
  try {
    await c.connect();
    await c.logout();
    return null;
  } catch (err) {
    c.close();
    return (err as Error).message;
  }
}

/** Whether the test mail system answers (a real IMAP login). */
export async function mailReachable(): Promise<boolean> {
  return (await imapProblem()) === null;
}

/**
 * Fails (never skips) when the mail system is down, saying how to start it. Call in beforeAll.
 */
export async function requireMailServer(): Promise<void> {
  const e = mailEnv();
  const problem = await imapProblem();
  if (problem !== null) {
    throw new Error(
      `The test mail server is not reachable (IMAP ${e.host}:${e.imapPort}: ${problem}). ` +
        'Start it with: bash scripts/mail-server.sh start   (npm test starts it when run as root)',
    );
  }
}

/** A unique token for subjects and Message-IDs, so tests never see each other's mail. */
export function token(prefix = 't'): string {
  return `${prefix}-${randomUUID().slice(0, 12)}`;
}

/** A raw account config for the agent user over plain SMTP/IMAP (what a config file would hold). */
export function agentAccount(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const e = mailEnv();
  return {
    from: `Agent <${AGENT.address}>`,
    user: AGENT.address,
    password: AGENT.password,
    smtp: { host: e.host, port: e.smtpPort, secure: false, connectionTimeoutMs: 3000 },
    imap: { host: e.host, port: e.imapPort, secure: false, connectionTimeoutMs: 3000 },
    ...overrides,
  };
}

/** A parsed email config with the given raw accounts (default: one "default" agent account). */
export function emailConfig(
  accounts: Record<string, unknown> = { default: agentAccount() },
  extra: Record<string, unknown> = {},
): EmailConfig {
  return EmailConfigSchema.parse({ accounts, ...extra });
}

/** Sends a message straight through Postfix (not through the tools). */
export async function sendDirect(
  mail: SendMailOptions,
  from: { address: string; password: string } = USER,
): Promise<void> {
  const e = mailEnv();
  const t = nodemailer.createTransport({
    host: e.host,
    port: e.smtpPort,
    secure: false,
    auth: { user: from.address, pass: from.password },
  });
  try {
    await t.sendMail({ from: from.address, ...mail });
  } finally {
    t.close();
  }
}

/** A message as found over IMAP. */
export interface FoundMessage {
  uid: number;
  flags: Set<string>;
  headers: string;
  source: string;
}

/** Every message in a user's folder whose Message-ID header is exactly `messageId`. */
export async function findByMessageId(
  user: { address: string; password: string },
  folder: string,
  messageId: string,
): Promise<FoundMessage[]> {
  const c = imapAs(user);
  await c.connect();
  try {
    const lock = await c.getMailboxLock(folder, { readOnly: true });
    try {
      const uids = await c.search({ header: { 'message-id': messageId } }, { uid: true });
      const out: FoundMessage[] = [];
      if (uids && uids.length) {
        for await (const m of c.fetch(
          uids,
          { uid: true, flags: true, envelope: true, source: true },
          { uid: true },
        )) {
          if (m.envelope?.messageId !== messageId) continue;
          const source = m.source?.toString() ?? '';
          out.push({
            uid: m.uid,
            flags: m.flags ?? new Set(),
            headers: source.split(/\r?\n\r?\n/)[0] ?? '',
            source,
          });
        }
      }
      return out;
    } finally {
      lock.release();
    }
  } finally {
    await c.logout();
  }
}

/** Subjects of every message in a folder whose subject contains `needle`. */
export async function subjectsContaining(
  user: { address: string; password: string },
  folder: string,
  needle: string,
): Promise<string[]> {
  const c = imapAs(user);
  await c.connect();
  try {
    const lock = await c.getMailboxLock(folder, { readOnly: true });
    try {
      const uids = await c.search({ subject: needle }, { uid: true });
      const out: string[] = [];
      if (uids && uids.length) {
        for await (const m of c.fetch(uids, { uid: true, envelope: true }, { uid: true }))
          out.push(m.envelope?.subject ?? '');
      }
      return out;
    } finally {
      lock.release();
    }
  } finally {
    await c.logout();
  }
}

/** Polls until `count` copies of the Message-ID are in the folder (delivery lags SMTP by ~50 ms). */
export async function waitForMessage(
  user: { address: string; password: string },
  folder: string,
  messageId: string,
  timeoutMs = 15_000,
): Promise<FoundMessage[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await findByMessageId(user, folder, messageId);
    if (found.length) return found;
    if (Date.now() > deadline)
      throw new Error(`${messageId} did not arrive in ${user.address}/${folder} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits until delivery of everything queued so far has surely happened, then counts copies. */
export async function settledCount(
  user: { address: string; password: string },
  folder: string,
  messageId: string,
): Promise<number> {
  await new Promise((r) => setTimeout(r, 1500));
  return (await findByMessageId(user, folder, messageId)).length;
}
