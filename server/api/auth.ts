/**
 * Who may use the API and the web UI when a token is configured: a request carrying
 * `Authorization: Bearer <token>`, or a browser holding the session cookie the login page sets.
 * The cookie is HttpOnly (page scripts cannot read it) and SameSite=Strict (other sites' pages do
 * not send it); its value is derived from the token, so the token itself is never stored by the
 * browser, and changing the token ends every session.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';

/** Name of the session cookie. */
export const SESSION_COOKIE = 'durable_agent_session';

/** Seconds a login lasts. */
export const SESSION_MAX_AGE_SECONDS = 7 * 24 * 3600;

/** sha256 first, so both sides have the same length and the comparison time says nothing about the token. */
export function sameToken(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** The cookie value for `token`. */
export function sessionValue(token: string): string {
  return createHmac('sha256', token).update('durable-agent web session v1').digest('base64url');
}

/** True when the request carries the token (header) or a session cookie made from it. */
export function authorized(c: Context, token: string): boolean {
  const header = c.req.header('authorization') ?? '';
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match?.[1]) return sameToken(match[1], token);
  const cookie = getCookie(c, SESSION_COOKIE);
  return cookie !== undefined && sameToken(cookie, sessionValue(token));
}
