/**
 * The inbox on a phone (375 × 812, Debian's chromium driven by playwright-core) against a real dev
 * server, worker and API server: the page is no wider than the screen even when the Run filter
 * holds long run ids, and a new notification's toast shows inside the screen. The screenshot goes
 * to docs/screenshots/inbox-phone.png when it is missing or WEB_UI_SCREENSHOTS=1.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { PROJECT_ROOT } from '../../shared/project-root';
import { startApiServer } from '../../server/api/server';
import type { RunningApiServer } from '../../server/api/server';
import { runCli } from '../../testkit/processes';
import { uid } from '../../testkit/temporal';
import { closeApiAfterStreams, launchChromium } from '../support/browser';
import { useDevServer } from '../support/environments';

const PHONE = { width: 375, height: 812 };
const dev = useDevServer({ worker: true, queue: 'web-phone' });
let api: RunningApiServer;
let browser: Browser;

beforeAll(async () => {
  api = await startApiServer({ client: dev.fx.client, taskQueue: dev.taskQueue, host: '127.0.0.1', port: 0 });
  dev.defer(() => closeApiAfterStreams(api));
  browser = await launchChromium();
  dev.defer(() => browser.close());
}, 180_000);

test('at 375 px the inbox fits the screen and a new toast shows inside it', async () => {
  const user = uid('phone');
  // Runs with long ids that notify this user fill the Run filter, as they did on a real phone.
  for (const n of [1, 2]) {
    const id = `a-run-with-a-rather-long-workflow-id-number-${n}-${uid('x')}`;
    expect((await runCli(['run', 'hello', '--id', id, '--notify-user', user], dev.env)).code).toBe(0);
  }
  await runCli(
    ['notify', `inbox:${user}`, 'Welcome to the inbox', '--group', 'a-long-group-name-for-the-filter'],
    dev.env,
  );

  const page = await browser.newPage({ viewport: PHONE });
  await page.goto(`${api.url}/inbox/${user}`);
  await page.locator('.item', { hasText: 'Welcome to the inbox' }).waitFor();
  // The Run filter has read the runs by now (they are listed when the page starts).
  await page.waitForFunction("document.getElementById('filter-run').options.length > 2");
  const width = await page.evaluate<number>('document.documentElement.scrollWidth');
  expect(width).toBeLessThanOrEqual(PHONE.width);

  await runCli(['notify', `inbox:${user}`, 'A toast on the phone', '--priority', '20'], dev.env);
  const toast = page.locator('.toast', { hasText: 'A toast on the phone' });
  await toast.waitFor();
  const box = await toast.boundingBox();
  expect(box).not.toBeNull();
  expect(box!.x).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);
  expect(box!.y + box!.height).toBeLessThanOrEqual(PHONE.height);

  const file = path.join(PROJECT_ROOT, 'docs', 'screenshots', 'inbox-phone.png');
  if (!fs.existsSync(file) || process.env.WEB_UI_SCREENSHOTS === '1') await page.screenshot({ path: file });
  await page.close();
}, 180_000);
