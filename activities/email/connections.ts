import { ImapFlow } from 'imapflow';
import nodemailer from 'nodemailer';
import type { Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import type { EmailConfig, ResolvedAccount, ResolvedServer } from './config';
import { pickAccountName, resolveAccountConfig } from './config';
import type { ErrorScope } from './errors';
import { emailFailure, mapImapError } from './errors';

/** The SMTP transport type the activities send through. */
export type SmtpTransport = Transporter<SMTPPool.SentMessageInfo, SMTPPool.Options>;

/** Error scope of one protocol of an account (what error messages may name). */
export function scopeOf(account: ResolvedAccount, protocol: 'SMTP' | 'IMAP'): ErrorScope {
  const s = (protocol === 'SMTP' ? account.smtp : account.imap) as ResolvedServer;
  return {
    account: account.name,
    protocol,
    host: s.host,
    port: s.port,
    secrets: account.secrets,
    user: s.user,
  };
}

function tlsOptions(s: ResolvedServer) {
  return {
    rejectUnauthorized: s.tls.rejectUnauthorized,
    ...(s.tls.ca ? { ca: s.tls.ca } : {}),
    ...(s.tls.servername ? { servername: s.tls.servername } : {}),
  };
}

/**
 * The connections of one worker: one pooled SMTP transport per account, created on first use and
 * reused by every send; IMAP sessions are opened per call (they hold a mailbox selection).
 * `close()` ends the pools; call it when the worker shuts down.
 */
export class EmailConnections {
  private readonly accounts = new Map<string, ResolvedAccount>();
  private readonly transports = new Map<string, SmtpTransport>();

  constructor(private readonly config: EmailConfig) {}

  /** The account a call names (see pickAccountName), with its settings resolved once per worker. */
  account(requested: string | undefined): ResolvedAccount {
    const name = pickAccountName(this.config, requested);
    let acc = this.accounts.get(name);
    if (!acc) {
      acc = resolveAccountConfig(name, this.config.accounts[name] as EmailConfig['accounts'][string]);
      this.accounts.set(name, acc);
    }
    return acc;
  }

  /** The account's pooled SMTP transport. */
  transport(account: ResolvedAccount): SmtpTransport {
    let t = this.transports.get(account.name);
    if (!t) {
      const s = account.smtp;
      t = nodemailer.createTransport({
        pool: true,
        maxConnections: account.maxConnections,
        // The pool would silently resend a message whose connection dropped mid-transfer; whether
        // that is safe is decided by send_email (it may already have been accepted), never here.
        maxRequeues: 0,
        host: s.host,
        port: s.port,
        secure: s.secure,
        requireTLS: s.requireTLS,
        ...(s.user ? { auth: { user: s.user, pass: s.password ?? '' } } : {}),
        tls: tlsOptions(s),
        connectionTimeout: s.connectionTimeoutMs,
        greetingTimeout: s.connectionTimeoutMs,
        socketTimeout: 60_000,
        logger: false,
      });
      this.transports.set(account.name, t);
    }
    return t;
  }

  /**
   * A logged-in IMAP session for the account. Errors are already mapped; the caller logs out.
   * An `error` listener is attached because imapflow emits socket errors as events, and an
   * unhandled one would crash the whole worker.
   */
  async imap(account: ResolvedAccount): Promise<ImapFlow> {
    const s = account.imap;
    if (!s) {
      throw emailFailure(
        'EmailConfigError',
        `Email account "${account.name}" has no imap section; add one to read mail (and to record sends)`,
      );
    }
    const client = new ImapFlow({
      host: s.host,
      port: s.port,
      secure: s.secure,
      ...(s.requireTLS ? { doSTARTTLS: true } : {}),
      auth: { user: s.user ?? '', pass: s.password ?? '' },
      tls: tlsOptions(s),
      connectionTimeout: s.connectionTimeoutMs,
      greetingTimeout: s.connectionTimeoutMs,
      logger: false,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (err) {
      client.close();
      throw mapImapError(err, scopeOf(account, 'IMAP'));
    }
    return client;
  }

  /** Closes every pooled SMTP connection. Safe to call twice. */
  close(): void {
    for (const t of this.transports.values()) t.close();
    this.transports.clear();
  }
}

const created = new Set<EmailConnections>();

/** Connections registered for {@link closeEmailConnections} (the default of createEmailActivities). */
export function sharedEmailConnections(config: EmailConfig): EmailConnections {
  const c = new EmailConnections(config);
  created.add(c);
  return c;
}

/** Closes the SMTP pools of every worker-created email activity set. Call after `worker.run()` returns. */
export function closeEmailConnections(): void {
  for (const c of created) c.close();
  created.clear();
}
