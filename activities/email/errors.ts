import { ApplicationFailure } from '@temporalio/common';
import type { EmailErrorType } from '../../shared/tools/email';
import { NON_RETRYABLE_EMAIL_ERRORS } from '../../shared/tools/email';

/** How long to wait after an IMAP server said it is throttling us, when it gave no hint. */
export const DEFAULT_THROTTLE_DELAY_MS = 30_000;

/** An email failure of one of the closed set of types; retryable or not according to its type. */
export function emailFailure(
  type: EmailErrorType,
  message: string,
  opts: { nextRetryDelayMs?: number; nonRetryable?: boolean } = {},
): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: opts.nonRetryable ?? (NON_RETRYABLE_EMAIL_ERRORS as readonly string[]).includes(type),
    ...(opts.nextRetryDelayMs !== undefined ? { nextRetryDelay: opts.nextRetryDelayMs } : {}),
  });
}

/**
 * Removes every secret (and the base64 forms an SMTP AUTH exchange would carry) from text that
 * came from a server or a library, so it can go into messages, logs and workflow history.
 */
export function redact(text: string, secrets: readonly string[], user?: string): string {
  const needles = new Set<string>();
  for (const s of secrets) {
    if (!s) continue;
    needles.add(s);
    needles.add(Buffer.from(s).toString('base64'));
    if (user) needles.add(Buffer.from(`\0${user}\0${s}`).toString('base64'));
  }
  let out = text;
  for (const n of [...needles].sort((a, b) => b.length - a.length)) out = out.split(n).join('***');
  return out;
}

/** What an error is about, for its message: account and server, never credentials. */
export interface ErrorScope {
  account: string;
  protocol: 'SMTP' | 'IMAP';
  host: string;
  port: number;
  secrets: readonly string[];
  user?: string;
}

/** Fields nodemailer and imapflow put on their errors (all optional, both libraries). */
interface VendorError {
  message?: string;
  code?: string;
  originalCode?: string;
  responseCode?: number;
  response?: unknown;
  command?: string;
  authenticationFailed?: boolean;
  tlsFailed?: boolean;
  serverResponseCode?: string;
  responseStatus?: string;
  responseText?: string;
  throttleReset?: number;
  mailboxMissing?: boolean;
  reason?: string;
  cause?: unknown;
}

const TLS_CODES = new Set([
  'ETLS',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

function codesOf(err: VendorError): string[] {
  const cause = err.cause as VendorError | undefined;
  return [err.code, err.originalCode, cause?.code].filter((c): c is string => typeof c === 'string');
}

function where(scope: ErrorScope): string {
  return `email account "${scope.account}" (${scope.protocol} ${scope.host}:${scope.port})`;
}

function said(err: VendorError, scope: ErrorScope): string {
  const text =
    err.responseText ?? (typeof err.response === 'string' ? err.response : undefined) ?? err.message ?? '';
  return redact(String(text), scope.secrets, scope.user).trim() || 'no details';
}

/** Maps the errors both libraries share (TLS, connection) or returns undefined. */
function mapTransportError(e: VendorError, scope: ErrorScope): ApplicationFailure | undefined {
  const codes = codesOf(e);
  if (e.tlsFailed || codes.some((c) => TLS_CODES.has(c))) {
    return emailFailure(
      'EmailTlsError',
      `TLS with ${where(scope)} failed: ${said(e, scope)}. If the server uses a private CA, set ` +
        `${scope.protocol.toLowerCase()}.tls.ca to its PEM file; check host, port and "secure"`,
    );
  }
  return undefined;
}

function connectionFailure(e: VendorError, scope: ErrorScope): ApplicationFailure {
  return emailFailure(
    'EmailConnectionFailed',
    `Could not talk to ${where(scope)}: ${said(e, scope)}${codesOf(e).length ? ` (${codesOf(e).join('/')})` : ''}; will retry`,
  );
}

/** Maps a nodemailer error to a typed failure. 5xx and configuration problems are final; 4xx and network errors retry. */
export function mapSmtpError(err: unknown, scope: ErrorScope): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  const e = (err ?? {}) as VendorError;
  const tls = mapTransportError(e, scope);
  if (tls) return tls;
  const code = e.responseCode;
  const text = said(e, scope);
  if (e.code === 'ECONFIG' || e.code === 'ENOAUTH') {
    return emailFailure('EmailConfigError', `Configuration of ${where(scope)} is invalid: ${text}`);
  }
  if (code !== undefined && code >= 400 && code < 500) {
    return emailFailure('EmailTemporaryFailure', `${where(scope)} refused for now: ${text}; will retry`);
  }
  if (e.code === 'EAUTH') {
    return emailFailure(
      'EmailAuthFailed',
      `Login to ${where(scope)} was refused: ${text}. Check the user and password configured for this account`,
    );
  }
  if (code !== undefined && code >= 500) {
    // 552 at RCPT means "mailbox full"; anywhere else (MAIL FROM SIZE=, end of DATA) the message size.
    if ((code === 552 && e.command !== 'RCPT TO') || /message size|too (big|large)/i.test(text)) {
      return emailFailure(
        'EmailMessageTooLarge',
        `${where(scope)} refused the message as too large: ${text}`,
      );
    }
    if (e.command === 'RCPT TO') {
      return emailFailure('EmailRecipientRefused', `${where(scope)} refused the recipient: ${text}`);
    }
    if (e.command === 'MAIL FROM') {
      return emailFailure('EmailRejected', `${where(scope)} refused the sender ${text}`);
    }
    return emailFailure('EmailRejected', `${where(scope)} refused the message: ${text}`);
  }
  if (e.code === 'EENVELOPE') {
    return emailFailure('EmailInvalidAddress', `Invalid sender or recipient for ${where(scope)}: ${text}`);
  }
  return connectionFailure(e, scope);
}

/** Maps an imapflow error to a typed failure; throttling retries after the server's suggested delay. */
export function mapImapError(err: unknown, scope: ErrorScope, folder?: string): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  const e = (err ?? {}) as VendorError;
  const text = said(e, scope);
  const rc = (e.serverResponseCode ?? '').toUpperCase();
  if (
    e.code === 'ETHROTTLE' ||
    rc === 'THROTTLED' ||
    rc === 'LIMIT' ||
    /too many (simultaneous )?connections/i.test(e.reason ?? text)
  ) {
    const delay = Math.max(e.throttleReset ?? 0, DEFAULT_THROTTLE_DELAY_MS);
    return emailFailure(
      'EmailThrottled',
      `${where(scope)} is throttling requests: ${text}; retrying in ${Math.round(delay / 1000)} s`,
      {
        nextRetryDelayMs: delay,
      },
    );
  }
  if (e.authenticationFailed || rc === 'AUTHENTICATIONFAILED' || rc === 'AUTHORIZATIONFAILED') {
    return emailFailure(
      'EmailAuthFailed',
      `Login to ${where(scope)} was refused: ${text}. Check the user and password configured for this account`,
    );
  }
  const tls = mapTransportError(e, scope);
  if (tls) return tls;
  if (e.mailboxMissing || rc === 'NONEXISTENT') {
    return emailFailure(
      'EmailFolderNotFound',
      `Folder "${folder ?? '?'}" does not exist in ${where(scope)}: ${text}`,
    );
  }
  if (rc === 'UNAVAILABLE' || rc === 'INUSE' || rc === 'SERVERBUG') {
    return emailFailure(
      'EmailTemporaryFailure',
      `${where(scope)} is temporarily unavailable: ${text}; will retry`,
    );
  }
  if (e.responseStatus === 'NO' || e.responseStatus === 'BAD') {
    return emailFailure('EmailRejected', `${where(scope)} refused the request: ${text}`);
  }
  return connectionFailure(e, scope);
}
