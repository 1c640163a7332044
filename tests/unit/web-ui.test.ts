/**
 * The web UI's server side without a Temporal server (the pages and assets read none): the bundle
 * builds within its weight budget (and the guide quotes its weight truly), pages carry a strict CSP and escape what they echo, and with a
 * token a page needs a login whose cookie is HttpOnly and SameSite=Strict.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { createNotificationsApp } from '../../server/api/app';
import { MAX_PAGE_JS_GZIP_BYTES, describeWeight, webAssets } from '../../server/web/assets';
import { escapeHtml } from '../../server/web/pages';
import { PROJECT_ROOT } from '../../shared/project-root';

const TOKEN = 'unit-web-token-0123456789';
// The page routes never touch the client; a stand-in proves it (any use would throw).
const client = new Proxy(
  {},
  {
    get: () => {
      throw new Error('the client was used');
    },
  },
) as Client;
const local = { headers: { host: '127.0.0.1:8787' } };

test('the bundle builds, stays under its budget, and the weight is printed', async () => {
  const assets = await webAssets();
  console.log(describeWeight(assets));
  expect(assets.js.gzipBytes).toBeGreaterThan(5 * 1024); // DOMPurify alone is more than this
  expect(assets.js.gzipBytes).toBeLessThan(MAX_PAGE_JS_GZIP_BYTES);
  expect(assets.css.body.length).toBeGreaterThan(1000);
  expect(await webAssets()).toBe(assets); // built once per process
  // The guide quotes the weight: within 2 KB of the real one, or it misleads.
  const guide = fs.readFileSync(path.join(PROJECT_ROOT, 'docs', 'web-ui.md'), 'utf8');
  const quoted = /`JavaScript (\d+\.\d) KB gzip`/.exec(guide)?.[1];
  expect(quoted).toBeDefined();
  expect(Math.abs(Number(quoted) * 1024 - assets.js.gzipBytes)).toBeLessThanOrEqual(2 * 1024);
});

test('pages and assets: CSP, escaping, cache headers, and bad input', async () => {
  const app = createNotificationsApp({ client, taskQueue: 'unused' });
  const inbox = await app.request('/inbox/ana', local);
  expect(inbox.status).toBe(200);
  expect(inbox.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'self'/);
  expect(inbox.headers.get('x-frame-options')).toBe('DENY');
  const page = await inbox.text();
  expect(page).toContain('data-page="inbox" data-user="ana"');
  expect(page).not.toMatch(/<script>/); // no inline script: the CSP would refuse it anyway

  const bad = await app.request(`/inbox/${encodeURIComponent('<b>x</b>')}`, local);
  expect(bad.status).toBe(400);
  const badText = await bad.text();
  expect(badText).not.toContain('<b>x</b>');
  expect(badText).toContain('&lt;b&gt;x&lt;/b&gt;');

  const run = await app.request(`/runs/${encodeURIComponent('a"><img src=x onerror=alert(1)>')}`, local);
  expect(await run.text()).toContain('data-run="a&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"');

  const assets = await webAssets();
  const js = await app.request(`/assets/app.js?v=${assets.js.version}`, local);
  expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
  expect(js.headers.get('cache-control')).toContain('immutable');
  expect((await app.request('/assets/app.js?v=old', local)).headers.get('cache-control')).toBe('no-cache');
  expect((await app.request('/assets/other.js', local)).status).toBe(404);
  // The API's Host check applies to pages too (DNS rebinding).
  expect((await app.request('/', { headers: { host: 'evil.example' } })).status).toBe(421);
  expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
});

test('with a token: a page sends the browser to log in; the login sets an HttpOnly cookie that opens pages', async () => {
  const app = createNotificationsApp({ client, taskQueue: 'unused', token: TOKEN });
  const host = { host: 'ui.example:8443' };
  const redirect = await app.request('/runs/r1', { headers: host });
  expect(redirect.status).toBe(303);
  expect(redirect.headers.get('location')).toBe('/login?next=%2Fruns%2Fr1');
  const login = await app.request('/login?next=//evil.example/x', { headers: host });
  expect(await login.text()).toContain('data-next="/"');

  const post = (body: string, headers: Record<string, string> = {}) =>
    app.request('/login', {
      method: 'POST',
      body,
      headers: { ...host, 'content-type': 'application/json', ...headers },
    });
  expect((await post(JSON.stringify({ token: 'wrong-wrong-wrong-wrong' }))).status).toBe(401);
  expect((await post('not json')).status).toBe(400);
  // A form post from another site is refused before the token is looked at.
  expect((await post(JSON.stringify({ token: TOKEN }), { origin: 'https://evil.example' })).status).toBe(403);
  const ok = await post(JSON.stringify({ token: TOKEN }));
  expect(ok.status).toBe(204);
  const setCookie = ok.headers.get('set-cookie') ?? '';
  expect(setCookie).toMatch(
    /^durable_agent_session=[\w-]+; Max-Age=604800; Path=\/; HttpOnly; SameSite=Strict$/,
  );
  expect(setCookie).not.toContain(TOKEN);
  const cookie = setCookie.split(';')[0] as string;
  expect((await app.request('/runs/r1', { headers: { ...host, cookie } })).status).toBe(200);
  expect((await app.request('/runs/r1', { headers: { ...host, cookie: `${cookie}x` } })).status).toBe(303);
  const out = await app.request('/logout', { method: 'POST', headers: { ...host, cookie } });
  expect(out.headers.get('set-cookie')).toMatch(/^durable_agent_session=; Max-Age=0; Path=\//);
});
