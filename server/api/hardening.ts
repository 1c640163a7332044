/**
 * What keeps a web page from driving the local API, the way local dev servers protect themselves:
 *
 * - Without a token, only requests whose `Host` is a loopback name or address are answered: a page
 *   on a DNS-rebinding domain reaches 127.0.0.1 but still sends its own name as `Host`.
 * - Cross-origin requests are refused (an `Origin` other than the API's own, or `Sec-Fetch-Site`
 *   `cross-site`/`same-site`) unless the origin is on the configured allow-list.
 * - A request with a body must say `Content-Type: application/json`; the content types a page may
 *   send without a CORS preflight (`text/plain`, forms) are refused.
 * - CORS is explicit: no CORS headers at all by default, and only allow-listed origins get them.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { isLoopback } from './loopback';

/** Options of {@link hardening}. */
export interface HardeningOptions {
  /** Whether a bearer token is required; without one the `Host` check applies. */
  tokenRequired: boolean;
  /** Origins (`https://app.example`) whose pages may call the API; empty = none. */
  corsOrigins: readonly string[];
}

/** Methods whose request carries a body. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Headers an allow-listed page may send (the token, JSON bodies, and what an MCP client adds on `/mcp`). */
const CORS_HEADERS = 'Authorization, Content-Type, Last-Event-ID, Mcp-Protocol-Version, Mcp-Session-Id';

/** The host name of a `Host` header (`[::1]:8787` → `::1`), or null when it is malformed. */
function hostName(header: string): string | null {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::\d{1,5})?$/.exec(header.trim());
  return m?.[1] ?? null;
}

function refuse(c: Context, status: 403 | 415 | 421, error: string) {
  return c.json({ error }, status);
}

/** Whether `origin` is the API's own (same scheme-less host and port as the request's `Host`). */
function sameOrigin(origin: string, host: string): boolean {
  try {
    const u = new URL(origin);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.host === host.toLowerCase();
  } catch {
    return false;
  }
}

/**
 * Normalises and checks the allow-list: each entry must be a bare origin (`scheme://host[:port]`),
 * never `*`, so an allow-list cannot silently open the API to every page.
 */
export function parseCorsOrigins(raw: string | undefined): string[] {
  if (!raw?.trim()) return [];
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      let url: URL;
      try {
        url = new URL(entry);
      } catch {
        throw new Error(`"${entry}" is not an origin; write scheme://host[:port], e.g. https://app.example`);
      }
      if (
        (url.protocol !== 'http:' && url.protocol !== 'https:') ||
        url.origin !== entry.replace(/\/$/, '')
      ) {
        throw new Error(
          `"${entry}" is not an origin; write scheme://host[:port] with no path, e.g. https://app.example`,
        );
      }
      return url.origin;
    });
}

/** The middleware; install it before every route. */
export function hardening(opts: HardeningOptions): MiddlewareHandler {
  const allowed = new Set(opts.corsOrigins);
  return async (c, next) => {
    const host = c.req.header('host') ?? '';
    if (!opts.tokenRequired) {
      const name = hostName(host);
      if (name === null || !isLoopback(name)) {
        return refuse(
          c,
          421,
          'Host must be a loopback name or address (localhost, 127.0.0.1, [::1]) when the API has no token; ' +
            'set DURABLE_AGENT_API_TOKEN to serve other names',
        );
      }
    }

    const origin = c.req.header('origin');
    const fetchSite = c.req.header('sec-fetch-site');
    const allowListed = origin !== undefined && allowed.has(origin);
    const crossOrigin =
      (origin !== undefined && !sameOrigin(origin, host)) ||
      fetchSite === 'cross-site' ||
      fetchSite === 'same-site';
    if (crossOrigin && !allowListed) {
      return refuse(
        c,
        403,
        `Cross-origin request refused (Origin ${origin ?? 'not sent'}, Sec-Fetch-Site ${fetchSite ?? 'not sent'}); ` +
          'allow a page with DURABLE_AGENT_API_CORS_ORIGINS',
      );
    }
    if (allowListed && c.req.method === 'OPTIONS') {
      c.header('Access-Control-Allow-Origin', origin);
      c.header('Vary', 'Origin');
      c.header('Access-Control-Allow-Methods', 'GET, POST, DELETE, OPTIONS');
      c.header('Access-Control-Allow-Headers', CORS_HEADERS);
      c.header('Access-Control-Max-Age', '600');
      return c.body(null, 204);
    }

    const length = c.req.header('content-length');
    const hasBody =
      (length !== undefined && length !== '0') || c.req.header('transfer-encoding') !== undefined;
    if (BODY_METHODS.has(c.req.method) && hasBody) {
      const type = (c.req.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
      if (type !== 'application/json') {
        return refuse(c, 415, 'Content-Type must be application/json');
      }
    }
    await next();
    // On the answer as it leaves, whatever made it: a route that returns a Response of its own
    // (`/mcp`'s transport) never sees headers set on the context before it ran, and a page that
    // cannot read the answer to a start it sent would never learn the run's id.
    if (allowListed) {
      c.res.headers.set('Access-Control-Allow-Origin', origin);
      c.res.headers.append('Vary', 'Origin');
    }
  };
}
