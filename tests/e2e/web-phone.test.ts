/**
 * The inbox on a phone (375 × 812, Debian's chromium driven by playwright-core) against a real dev
 * server, worker and API server: the page is no wider than the screen even when the Run filter
 * holds long run ids, the filter offers only the runs that notified this user, and a new
 * notification's toast shows inside the screen. An approval notice
 * (toast and item) names its run and call, shows the arguments and the deadline in the viewer's
 * time zone, and links to the run page, where the call is answered on the phone. Screenshots go to
 * docs/screenshots/ (inbox-phone.png, inbox-approval-phone.png, run-approval-phone.png) when missing
 * or WEB_UI_SCREENSHOTS=1.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { PROJECT_ROOT } from '../../shared/project-root';
import { startApiServer } from '../../server/api/server';
import type { RunningApiServer } from '../../server/api/server';
import { startAgentRun } from '../../client/start-run';
import { stateQuery } from '../../shared/agent';
import type { PendingApproval } from '../../shared/agent';
import { runCli } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { uid } from '../../testkit/temporal';
import { closeApiAfterStreams, launchChromium } from '../support/browser';
import { useDevServer } from '../support/environments';

const PHONE = { width: 375, height: 812 };
/** The viewer's time zone in the approval test: not the machine's (UTC), and not a whole hour off. */
const VIEWER_TZ = 'Asia/Kolkata';
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
  const mine: string[] = [];
  for (const n of [1, 2]) {
    const id = `a-run-with-a-rather-long-workflow-id-number-${n}-${uid('x')}`;
    expect((await runCli(['run', 'hello', '--id', id, '--notify-user', user], dev.env)).code).toBe(0);
    mine.push(id);
  }
  // Runs that never notified this user: another user's, and one that notifies nobody's inbox.
  const others = [uid('someone-elses-run'), uid('nobodys-run')];
  expect(
    (await runCli(['run', 'hello', '--id', others[0]!, '--notify-user', uid('someone')], dev.env)).code,
  ).toBe(0);
  expect((await runCli(['run', 'hello', '--id', others[1]!], dev.env)).code).toBe(0);
  await runCli(
    ['notify', `inbox:${user}`, 'Welcome to the inbox', '--group', 'a-long-group-name-for-the-filter'],
    dev.env,
  );

  const page = await browser.newPage({ viewport: PHONE });
  await page.goto(`${api.url}/inbox/${user}`);
  await page.locator('.item', { hasText: 'Welcome to the inbox' }).waitFor();
  // The Run filter has read the runs by now (they are listed when the page starts).
  await page.waitForFunction("document.getElementById('filter-run').options.length > 2");
  // Only the runs that notified this user are offered, not the others of the namespace.
  const offered = await page.evaluate<string[]>(
    "[...document.getElementById('filter-run').options].map((o) => o.value)",
  );
  expect(offered.sort()).toEqual(['', ...mine].sort());
  for (const other of others) expect(offered).not.toContain(other);
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

/** Saves a screenshot under docs/screenshots/ when it is missing or WEB_UI_SCREENSHOTS=1. */
async function screenshot(page: Page, name: string): Promise<void> {
  const file = path.join(PROJECT_ROOT, 'docs', 'screenshots', `${name}.png`);
  if (!fs.existsSync(file) || process.env.WEB_UI_SCREENSHOTS === '1') await page.screenshot({ path: file });
}

/** The deadline as a clock reads it in {@link VIEWER_TZ}, e.g. `10:27` (hour without a leading zero). */
function viewerClock(iso: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: VIEWER_TZ,
    hour: 'numeric',
    minute: '2-digit',
    hour12: true,
  }).formatToParts(new Date(iso));
  return `${parts.find((p) => p.type === 'hour')?.value}:${parts.find((p) => p.type === 'minute')?.value}`;
}

/** What a person must see of an approval in `box` (a toast or an inbox item). */
async function expectApprovalShown(box: Locator, run: string, a: PendingApproval): Promise<void> {
  const text = (await box.textContent()) ?? '';
  expect(text).toContain('Approval needed: calculator');
  expect(text).toContain(run);
  expect(text).toContain(a.toolCallId);
  expect(text).toContain(a.summary);
  // The deadline in the viewer's time zone, from a machine-readable timestamp; never raw UTC.
  expect(text).not.toContain(a.deadline);
  const time = box.locator(`time[datetime="${a.deadline}"]`).first();
  expect(await time.textContent()).toContain(viewerClock(a.deadline));
  const link = box.locator(`a[href="/runs/${encodeURIComponent(run)}"]`).first();
  expect(await link.count()).toBe(1);
}

test('at 375 px an approval shows its run, call, arguments and local deadline, and leads to the run page', async () => {
  const user = uid('approver');
  const runs = [1, 2].map((n) => ({
    id: `a-run-with-a-rather-long-workflow-id-asking-${n}-${uid('x')}`,
    expression: n === 1 ? '6*7' : '2+2',
  }));
  const page = await browser.newPage({ viewport: PHONE, timezoneId: VIEWER_TZ, locale: 'en-US' });
  page.setDefaultTimeout(45_000);
  await page.goto(`${api.url}/inbox/${user}`);
  await page.getByText('No notifications yet').waitFor();

  // Two runs ask for the same tool: their notices must tell them apart.
  const handles = [];
  for (const r of runs) {
    handles.push(
      await startAgentRun(
        dev.fx.client,
        {
          task: 'compute',
          tools: ['calculator'],
          policy: { requireApproval: ['calculator'] },
          notify: { user },
          model: {
            provider: 'scripted',
            turns: [callTurn(['calculator', { expression: r.expression }, 'calc-1']), answerTurn('Done.')],
          },
        },
        { workflowId: r.id, taskQueue: dev.taskQueue },
      ),
    );
  }
  const asked: PendingApproval[] = [];
  for (const h of handles) {
    for (let i = 0; ; i++) {
      const a = (await h.query(stateQuery)).approvals?.[0];
      if (a) {
        asked.push(a);
        break;
      }
      if (i > 200) throw new Error(`no approval asked by ${h.workflowId}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  const toasts = page.locator('.toast', { hasText: 'Approval needed: calculator' });
  const items = page.locator('#notifications li', { hasText: 'Approval needed: calculator' });
  for (const [i, r] of runs.entries()) {
    const a = asked[i]!;
    const toast = toasts.filter({ hasText: r.id });
    await toast.waitFor();
    await expectApprovalShown(toast, r.id, a);
    const box = await toast.boundingBox();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);
    expect(box!.y + box!.height).toBeLessThanOrEqual(PHONE.height);
    await expectApprovalShown(items.filter({ hasText: r.id }), r.id, a);
  }
  expect(await items.count()).toBe(2);
  const [first, second] = await items.locator('.body').allTextContents();
  expect(first).not.toBe(second);
  expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
    PHONE.width,
  );
  await screenshot(page, 'inbox-approval-phone');

  // The item's link opens the run page, where the call is answered on the phone.
  while ((await toasts.count()) > 0)
    await toasts
      .first()
      .getByRole('button', { name: /Dismiss/ })
      .click();
  const [mine] = runs;
  await items
    .filter({ hasText: mine!.id })
    .locator(`a[href="/runs/${encodeURIComponent(mine!.id)}"]`)
    .first()
    .click();
  await page.waitForURL(`**/runs/${encodeURIComponent(mine!.id)}`);
  const card = page.locator('.approval[data-tool-call="calc-1"]');
  await card.waitFor();
  const cardText = (await card.textContent()) ?? '';
  expect(cardText).toContain('calculator');
  expect(cardText).toContain(asked[0]!.summary);
  expect(await card.locator(`time[datetime="${asked[0]!.deadline}"]`).textContent()).toContain(
    viewerClock(asked[0]!.deadline),
  );
  expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
    PHONE.width,
  );
  await screenshot(page, 'run-approval-phone');
  await card.getByRole('button', { name: 'Approve', exact: true }).click();
  expect(await handles[0]!.result()).toMatchObject({ answer: 'Done.' });
  await page.close();

  // The other run is answered over HTTP, so nothing is left waiting.
  const res = await fetch(`${api.url}/api/approvals/${encodeURIComponent(runs[1]!.id)}/calc-1`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ approve: false, reason: 'not needed' }),
  });
  expect(res.status).toBe(200);
  await handles[1]!.result();
}, 180_000);
