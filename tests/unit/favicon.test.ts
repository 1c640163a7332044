/** Every page names an icon the server serves, so browsers get no 404 on each page. */
import type { Client } from '@temporalio/client';
import { createNotificationsApp } from '../../server/api/app';

const client = {} as Client;
const local = { headers: { host: '127.0.0.1:8787' } };

test('pages link /favicon.svg, and both it and /favicon.ico answer an SVG', async () => {
  const app = createNotificationsApp({ client, taskQueue: 'unused' });
  const page = await (await app.request('/', local)).text();
  expect(page).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml">');
  for (const path of ['/favicon.svg', '/favicon.ico']) {
    const res = await app.request(path, local);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/svg+xml');
    expect(await res.text()).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  }
});
