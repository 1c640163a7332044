/**
 * The web UI's pages on the API's own server: the inbox (`/`, `/inbox/<user>`), the runs list
 * (`/runs`), a run (`/runs/<id>`) and, when a token is configured, a login page. Each page is a small
 * HTML shell painted at once (header, navigation, headings) plus one script and one stylesheet
 * built from `web/`; the script reads the API the pages sit next to. The API's hardening (Host and
 * origin checks) runs before these routes; the shell adds a strict Content-Security-Policy so no
 * inline or foreign script can run even if something slipped past the sanitizer.
 */
import type { Context, Hono } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import { inboxUserProblem } from '../../shared/identifiers';
import { SESSION_COOKIE, SESSION_MAX_AGE_SECONDS, authorized, sameToken, sessionValue } from '../api/auth';
import { createRateLimiter } from '../api/rate-limit';
import type { WebAssets } from './assets';
import { webAssets } from './assets';

/** Sent with every page and asset. */
const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

/** Login attempts allowed per API process: a token of ≥ 16 characters is not guessed at this rate. */
const LOGIN_RATE = { burst: 10, perSecond: 0.5 };

/** Text safe inside HTML text and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] as string,
  );
}

interface Shell {
  page: 'inbox' | 'runs' | 'run' | 'login';
  title: string;
  heading: string;
  /** `data-*` attributes of the body the script reads (values are escaped). */
  data?: Record<string, string>;
  /** Whether the logout button is shown. */
  loggedIn: boolean;
}

function shell(assets: WebAssets, s: Shell): string {
  const data = Object.entries(s.data ?? {})
    .map(([k, v]) => ` data-${k}="${escapeHtml(v)}"`)
    .join('');
  const nav =
    s.page === 'login'
      ? ''
      : `<nav aria-label="Main"><a href="/"${s.page === 'inbox' ? ' aria-current="page"' : ''}>Inbox</a>` +
        `<a href="/runs"${s.page === 'runs' || s.page === 'run' ? ' aria-current="page"' : ''}>Runs</a>` +
        (s.loggedIn ? '<button type="button" id="logout" class="link">Log out</button>' : '') +
        '</nav>';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(s.title)} · durable-agent</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/${assets.css.name}?v=${assets.css.version}">
<script type="module" src="/assets/${assets.js.name}?v=${assets.js.version}"></script>
</head>
<body data-page="${s.page}"${data}>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><span class="brand">durable-agent</span>${nav}</header>
<main id="main" tabindex="-1"><h1>${escapeHtml(s.heading)}</h1><div id="app" aria-busy="true"><p class="muted">Loading…</p></div></main>
<section id="toasts" class="toasts" aria-live="polite" aria-label="New notifications"></section>
</body>
</html>`;
}

function html(c: Context, body: string, status: 200 | 400 = 200) {
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) c.header(k, v);
  c.header('Cache-Control', 'no-store');
  return c.html(body, status);
}

/** A same-site path to return to after logging in (never another origin). */
function safeNext(raw: string | undefined): string {
  return raw && /^\/(?![/\\])[\x21-\x7e]*$/.test(raw) ? raw : '/';
}

/** Options of {@link registerWebRoutes}. */
export interface WebRoutesOptions {
  /** The API's token; when set, pages need a login (or the bearer header). */
  token?: string;
}

/** The pages' icon: a bell, drawn in the theme's accent colour. */
const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path fill="#2f6fde" d="M8 1a4 4 0 0 0-4 4v3L2.5 11h11L12 8V5a4 4 0 0 0-4-4zm-1.5 11a1.5 1.5 0 0 0 3 0z"/></svg>';

/**
 * Adds the pages, `/assets/*` (public: they hold no data) and, with a token, `GET/POST /login` and
 * `POST /logout`. The login takes `{ token }` as JSON (the API's content-type rule applies) and sets
 * the session cookie; the token never appears in a URL.
 */
export function registerWebRoutes(app: Hono, opts: WebRoutesOptions): void {
  const token = opts.token;
  const loginLimiter = createRateLimiter(LOGIN_RATE);

  app.get('/assets/:name', async (c) => {
    const assets = await webAssets();
    const file = [assets.js, assets.css].find((a) => a.name === c.req.param('name'));
    if (!file) return c.json({ error: `No asset ${c.req.param('name')}` }, 404);
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) c.header(k, v);
    c.header('Content-Type', file.contentType);
    // Pages name assets with their content hash, so a cached copy is never stale.
    c.header(
      'Cache-Control',
      c.req.query('v') === file.version ? 'public, max-age=31536000, immutable' : 'no-cache',
    );
    return c.body(file.body as Uint8Array<ArrayBuffer>);
  });

  // The icon holds no data: public, like the assets (browsers ask /favicon.ico of every page).
  for (const path of ['/favicon.svg', '/favicon.ico']) {
    app.get(path, (c) => {
      for (const [k, v] of Object.entries(SECURITY_HEADERS)) c.header(k, v);
      c.header('Content-Type', 'image/svg+xml');
      c.header('Cache-Control', 'public, max-age=86400');
      return c.body(FAVICON_SVG);
    });
  }

  /** Serves a page, or sends the browser to the login page first. */
  const page =
    (make: (c: Context) => Omit<Shell, 'loggedIn'> | { invalid: string }) => async (c: Context) => {
      if (token && !authorized(c, token)) {
        const next = new URL(c.req.url).pathname;
        return c.redirect(`/login?next=${encodeURIComponent(next)}`, 303);
      }
      const made = make(c);
      const assets = await webAssets();
      if ('invalid' in made) {
        return html(
          c,
          shell(assets, {
            page: 'inbox',
            title: 'Not found',
            heading: made.invalid,
            loggedIn: Boolean(token),
          }),
          400,
        );
      }
      return html(c, shell(assets, { ...made, loggedIn: Boolean(token) }));
    };

  app.get(
    '/',
    page(() => ({ page: 'inbox', title: 'Inbox', heading: 'Inbox' })),
  );
  app.get(
    '/inbox/:user',
    page((c) => {
      const user = c.req.param('user') ?? '';
      const problem = inboxUserProblem(user);
      if (problem) return { invalid: `No such inbox: ${problem}` };
      return { page: 'inbox', title: `Inbox of ${user}`, heading: `Inbox of ${user}`, data: { user } };
    }),
  );
  app.get(
    '/runs',
    page(() => ({ page: 'runs', title: 'Runs', heading: 'Runs' })),
  );
  app.get(
    '/runs/:id',
    page((c) => {
      const id = c.req.param('id') ?? '';
      if (!id || id.length > 1000) return { invalid: 'A run id has 1–1000 characters' };
      return { page: 'run', title: `Run ${id}`, heading: `Run ${id}`, data: { run: id } };
    }),
  );

  if (!token) return;
  app.get('/login', async (c) => {
    const assets = await webAssets();
    return html(
      c,
      shell(assets, {
        page: 'login',
        title: 'Log in',
        heading: 'Log in',
        data: { next: safeNext(c.req.query('next')) },
        loggedIn: false,
      }),
    );
  });
  app.post('/login', async (c) => {
    if (loginLimiter.take('login') > 0)
      return c.json({ error: 'Too many login attempts; wait a minute' }, 429);
    let given: unknown;
    try {
      given = (await c.req.json<{ token?: unknown } | null>())?.token;
    } catch {
      return c.json({ error: 'body must be JSON: { "token": "…" }' }, 400);
    }
    if (typeof given !== 'string' || !sameToken(given.trim(), token)) {
      return c.json({ error: 'Wrong token' }, 401);
    }
    setCookie(c, SESSION_COOKIE, sessionValue(token), {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
      maxAge: SESSION_MAX_AGE_SECONDS,
      secure: new URL(c.req.url).protocol === 'https:',
    });
    return c.body(null, 204);
  });
  app.post('/logout', (c) => {
    deleteCookie(c, SESSION_COOKIE, { path: '/' });
    return c.body(null, 204);
  });
}
