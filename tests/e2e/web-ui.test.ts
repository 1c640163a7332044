/**
 * The web UI in a real browser (Debian's chromium driven by playwright-core) against a real dev
 * server, a worker process and the API server: notifications from an agent run arrive as toasts
 * and in the list, progress updates stay one item, mark-all-read agrees with the inbox's
 * `unreadCount` query, sanitized detail HTML runs nothing, an approval answered on the run page
 * lets the run finish, the inbox recovers after the API restarts, and the login page sets an
 * HttpOnly cookie. First paint is measured and printed.
 *
 * Screenshots go to docs/screenshots/ when one is missing or WEB_UI_SCREENSHOTS=1, so an ordinary
 * run leaves the checkout as it was.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { PROJECT_ROOT } from '../../shared/project-root';
import { startApiServer } from '../../server/api/server';
import type { RunningApiServer } from '../../server/api/server';
import { startAgentRun } from '../../client/start-run';
import type { AgentInput } from '../../shared/agent';
import { inboxWorkflowId, unreadCountQuery } from '../../shared/notifications/messages';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { tempDir, uid } from '../../testkit/temporal';
import { closeApiAfterStreams, launchChromium } from '../support/browser';
import { useDevServer } from '../support/environments';

const SCREENSHOTS = path.join(PROJECT_ROOT, 'docs', 'screenshots');
const TOKEN = 'web-ui-test-token-0123456789';

let api: RunningApiServer;
let browser: Browser;
/** A stand-in SearXNG instance on 127.0.0.1 answering every search with the recorded fixture. */
let searxng: http.Server;
/** The worker's config: web search on the stand-in. */
const config = path.join(tempDir('webui'), 'config.json');

beforeAll(async () => {
  const results = fs.readFileSync(
    path.join(PROJECT_ROOT, 'tests', 'fixtures', 'search', 'searxng-search.json'),
  );
  searxng = http.createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(results),
  );
  await new Promise<void>((resolve) => searxng.listen(0, '127.0.0.1', resolve));
  const searxngUrl = `http://127.0.0.1:${(searxng.address() as AddressInfo).port}`;
  fs.writeFileSync(
    config,
    JSON.stringify({ search: { web: { providers: { searxng: { url: searxngUrl } } } } }),
  );
});

const dev = useDevServer({ worker: { DURABLE_AGENT_CONFIG: config }, queue: 'webui' });
const { taskQueue } = dev;
// After the worker stopped (hooks after all run in the order they are declared).
afterAll(() => new Promise((r) => searxng?.close(r)));

beforeAll(async () => {
  api = await startApiServer({ client: dev.fx.client, taskQueue, host: '127.0.0.1', port: 0 });
  dev.defer(() => closeApiAfterStreams(api));
  browser = await launchChromium();
  dev.defer(() => browser.close());
}, 180_000);

async function post(p: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${api.url}${p}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const data = (await res.json()) as Record<string, unknown>;
  if (res.status >= 300) throw new Error(`POST ${p}: ${res.status} ${JSON.stringify(data)}`);
  return data;
}

/** Saves a screenshot when it is missing or WEB_UI_SCREENSHOTS=1. */
async function screenshot(page: Page, name: string): Promise<void> {
  const file = path.join(SCREENSHOTS, `${name}.png`);
  if (fs.existsSync(file) && process.env.WEB_UI_SCREENSHOTS !== '1') return;
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: file, fullPage: true });
}

async function newPage(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  page.on('pageerror', (err) => console.error(`page error: ${err.message}`));
  // Pages poll the API every 1–3 s and the run behind them shares a 2-core machine with the dev
  // server: waiting is bounded by each test's own timeout, not by Playwright's 30 s default.
  page.setDefaultTimeout(45_000);
  return page;
}

test('inbox: toasts and list, progress in place, sanitized detail, mark all read, API restart', async () => {
  const user = uid('ana');
  const target = inboxWorkflowId(user);
  const page = await newPage();
  // The CSP refuses inline handlers and reports each one the page parses, even where none can run.
  const refused: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && m.text().includes('Content Security Policy')) refused.push(m.text());
  });
  await page.goto(`${api.url}/inbox/${user}`);
  // The browser records the paint entry shortly after it paints: wait for it instead of reading once.
  const paintEntry = await page.waitForFunction(
    () => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? 0,
    undefined,
    { timeout: 10_000 },
  );
  const paint = await paintEntry.jsonValue();
  console.log(`web UI inbox: first contentful paint ${paint.toFixed(0)} ms`);
  expect(paint).toBeGreaterThan(0);
  expect(paint).toBeLessThan(1000);
  // The inbox does not exist until its first notification.
  await page.getByText('No notifications yet').waitFor();

  // A notification sent by an agent run's notify_user tool.
  const input: AgentInput = {
    task: 'tell the user the report is ready',
    tools: ['notify_user'],
    notify: { user },
    model: {
      provider: 'scripted',
      turns: [
        callTurn([
          'notify_user',
          { type: 'success', title: 'Weekly report', message: 'The report is ready', display_time: 30 },
        ]),
        answerTurn('Done.'),
      ],
    },
  };
  await (await startAgentRun(dev.fx.client, input, { workflowId: uid('notify-run'), taskQueue })).result();
  const toast = page.locator('.toast', { hasText: 'The report is ready' });
  await toast.waitFor();
  expect(await toast.getAttribute('role')).toBe('alert'); // the tool's default priority is HIGH
  await page.locator('#notifications li', { hasText: 'The report is ready' }).waitFor();
  await toast.getByRole('button', { name: /Dismiss/ }).click();
  await toast.waitFor({ state: 'detached' });

  // A progress notification updated three times is one item with the last text.
  const progressId = 'build-progress';
  for (const step of [1, 2, 3]) {
    await post('/api/notifications', {
      target,
      id: progressId,
      type: 'progress',
      title: 'Build',
      message: `step ${step} of 3`,
    });
  }
  const progress = page.locator(`#notifications li[data-id="${progressId}"]`);
  await progress.locator('.message', { hasText: 'step 3 of 3' }).waitFor();
  expect(await progress.count()).toBe(1);
  expect(await page.locator('#notifications li', { hasText: /step [12] of 3/ }).count()).toBe(0);

  // A detail with a script and an event handler is shown, and nothing in it runs.
  await post('/api/notifications', {
    target,
    type: 'warning',
    title: 'Disk almost full',
    message: '91% used on /data',
    detail:
      '<p>Largest folders: <b>logs</b></p><img src="x" onerror="window.__xss = 1"><script>window.__xss = 2</script>' +
      '<a href="javascript:window.__xss=3">bad link</a>',
  });
  await post('/api/notifications', { target, type: 'error', message: 'Backup failed: disk full' });
  await post('/api/notifications', { target, type: 'info', message: 'Nightly sync started' });
  const warning = page.locator('#notifications li', { hasText: 'Disk almost full' });
  await warning.locator('summary').click();
  await warning.locator('.detail b', { hasText: 'logs' }).waitFor();
  await page.locator('#notifications li', { hasText: 'Nightly sync started' }).waitFor();
  await page.waitForTimeout(300); // an image error handler would have fired by now
  expect(await page.evaluate(() => (globalThis as { __xss?: number }).__xss)).toBeUndefined();
  // The sanitizer took the handler out before any parser saw it: nothing for the CSP to report.
  expect(refused).toEqual([]);
  expect(await warning.locator('.detail script, .detail [onerror]').count()).toBe(0);
  expect(await warning.locator('.detail a').getAttribute('href')).toBeNull();
  expect(await page.locator('#notifications li').count()).toBe(5);
  await screenshot(page, 'inbox');

  // Filters: by type and unread.
  await page.selectOption('#filter-type', 'error');
  expect(await page.locator('#notifications li').count()).toBe(1);
  await page.selectOption('#filter-type', '');

  // Mark all read: the badge goes to 0 and the inbox agrees.
  expect(Number(await page.locator('#unread-count').textContent())).toBe(5);
  const error = page.locator('#notifications li', { hasText: 'Backup failed' });
  await error.getByRole('button', { name: 'Mark read: Backup failed: disk full' }).click();
  await page.locator('#unread-count', { hasText: /^4$/ }).waitFor();
  expect((await error.getAttribute('class'))?.split(' ')).toContain('read');
  const focused = await page.evaluate<string>("document.activeElement?.getAttribute('data-id') ?? ''");
  expect(focused).toBe(await error.getAttribute('data-id'));
  await page.getByRole('button', { name: 'Mark all read' }).click();
  await page.locator('#unread-count', { hasText: /^0$/ }).waitFor();
  expect(await dev.fx.client.workflow.getHandle(target).query(unreadCountQuery)).toBe(0);
  await page.check('#filter-unread');
  expect(await page.locator('#notifications li').count()).toBe(0);
  await page.uncheck('#filter-unread');

  // The API restarts on the same port; the page reconnects and catches up on what it missed.
  const port = api.port;
  await api.close();
  await page.locator('.stream-state', { hasText: 'Reconnecting' }).waitFor();
  api = await startApiServer({ client: dev.fx.client, taskQueue, host: '127.0.0.1', port });
  await post('/api/notifications', { target, type: 'success', message: 'Back after the restart' });
  await page.locator('#notifications li', { hasText: 'Back after the restart' }).waitFor({ timeout: 15_000 });
  await page.locator('.toast', { hasText: 'Back after the restart' }).waitFor();
  expect(await page.locator('#unread-count').textContent()).toBe('1');

  // A clear replaces the list (new guid); what comes after it shows as usual.
  await dev.fx.client.workflow.getHandle(target).signal('clearNotifications');
  await page.locator('#notifications li').first().waitFor({ state: 'detached' });
  await post('/api/notifications', { target, message: 'After the clear' });
  await page.locator('#notifications li', { hasText: 'After the clear' }).waitFor();
  expect(await page.locator('#notifications li').count()).toBe(1);

  // Toasts last their display time, except HIGH priority ones, which stay until dismissed.
  await post('/api/notifications', { target, message: 'Stays', priority: 20, display_time: 1 });
  await post('/api/notifications', { target, message: 'Goes', display_time: 1 });
  await page.locator('.toast', { hasText: 'Goes' }).waitFor();
  await page.locator('.toast', { hasText: 'Goes' }).waitFor({ state: 'detached', timeout: 5000 });
  expect(await page.locator('.toast', { hasText: 'Stays' }).count()).toBe(1);

  // Keyboard: the skip link comes first, then the navigation; nothing scrolls sideways on a phone.
  await page.reload();
  await page.locator('#notifications li').first().waitFor();
  await page.keyboard.press('Tab');
  expect(await page.evaluate('document.activeElement?.textContent')).toBe('Skip to content');
  await page.setViewportSize({ width: 375, height: 700 });
  expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
  await page.close();
}, 120_000);

test('inbox: the page follows an inbox across continue-as-new', async () => {
  const user = uid('can');
  const target = inboxWorkflowId(user);
  // Started directly so the inbox continues as new after every 3 changes.
  const handle = await dev.fx.client.workflow.start('inboxWorkflow', {
    workflowId: target,
    taskQueue,
    args: [{ continueAsNewAfter: 3 }],
  });
  await post('/api/notifications', { target, message: 'm0' });
  const firstRun = (await handle.describe()).runId;
  const page = await newPage();
  await page.goto(`${api.url}/inbox/${user}`);
  await page.locator('#notifications li', { hasText: 'm0' }).waitFor();
  for (let i = 1; i < 8; i++) await post('/api/notifications', { target, message: `m${i}` });
  await page.locator('#notifications li', { hasText: 'm7' }).waitFor();
  expect((await dev.fx.client.workflow.getHandle(target).describe()).runId).not.toBe(firstRun);
  expect(await page.locator('#notifications li .message').allTextContents()).toEqual([
    'm7',
    'm6',
    'm5',
    'm4',
    'm3',
    'm2',
    'm1',
    'm0',
  ]);
  expect(await page.locator('#unread-count').textContent()).toBe('8');
  await page.close();
}, 90_000);

test('inbox: the run filter shows what one run sent, and follows it while it sends more', async () => {
  const user = uid('runs');
  const notify = (message: string, type = 'info') =>
    callTurn(['notify_user', { type, message, priority: 10, display_time: 1 }]);
  const idA = uid('run-a');
  const idB = uid('run-b');
  // Run A notifies, then waits for an approval (which also notifies), then notifies again.
  const runA = await startAgentRun(
    dev.fx.client,
    {
      task: 'notify, compute, notify',
      tools: ['notify_user', 'calculator'],
      policy: { requireApproval: ['calculator'] },
      notify: { user },
      model: {
        provider: 'scripted',
        turns: [
          notify('A started'),
          callTurn(['calculator', { expression: '2+2' }, 'calc-a']),
          notify('A finished', 'success'),
          answerTurn('Done.'),
        ],
      },
    },
    { workflowId: idA, taskQueue },
  );
  const runB = await startAgentRun(
    dev.fx.client,
    {
      task: 'notify',
      tools: ['notify_user'],
      notify: { user },
      model: { provider: 'scripted', turns: [notify('B says hello'), answerTurn('Done.')] },
    },
    { workflowId: idB, taskQueue },
  );
  await runB.result();
  // Both runs are in the runs list (visibility) before the page reads it.
  for (let i = 0; i < 100; i++) {
    const { runs } = (await (await fetch(`${api.url}/api/runs?limit=50`)).json()) as {
      runs: { workflowId: string }[];
    };
    const ids = runs.map((r) => r.workflowId);
    if (ids.includes(idA) && ids.includes(idB)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const page = await newPage();
  await page.goto(`${api.url}/inbox/${user}`);
  const items = page.locator('#notifications li');
  await items.filter({ hasText: 'B says hello' }).waitFor();
  await items.filter({ hasText: 'Approval needed: calculator' }).waitFor();
  expect(await items.count()).toBe(3);

  await page.selectOption('#filter-run', idA);
  await items.filter({ hasText: 'B says hello' }).waitFor({ state: 'detached' });
  await items.filter({ hasText: 'A started' }).waitFor(); // once the run's ids are read
  expect(await items.locator('.message').allTextContents()).toEqual([
    expect.stringContaining('calculator waits for your decision'),
    'A started',
  ]);
  expect(await page.locator('#filter-run option:checked').textContent()).toMatch(
    new RegExp(`^${idA} \\((waiting for approval|running)\\)$`),
  );
  expect(new URL(page.url()).searchParams.get('run')).toBe(idA);
  expect(await page.getByLabel('Run').getAttribute('aria-describedby')).toBe('filter-run-hint');
  expect(await page.locator('#filter-run-hint').textContent()).toContain('may have left');

  // What the run sends while it is selected shows up (its ids are read again).
  await post(`/api/approvals/${encodeURIComponent(idA)}/calc-a`, { approve: true });
  await runA.result();
  await items.filter({ hasText: 'A finished' }).waitFor({ timeout: 10_000 });
  expect(await items.count()).toBe(3);
  expect(await items.filter({ hasText: 'B says hello' }).count()).toBe(0);

  // With the other filters: run A's success notifications only.
  await page.selectOption('#filter-type', 'success');
  expect(await items.locator('.message').allTextContents()).toEqual(['A finished']);
  await page.selectOption('#filter-type', '');

  await page.selectOption('#filter-run', idB);
  await items.filter({ hasText: 'A started' }).waitFor({ state: 'detached' });
  await items.filter({ hasText: 'B says hello' }).waitFor();
  expect(await items.locator('.message').allTextContents()).toEqual(['B says hello']);
  await page.selectOption('#filter-run', '');
  await items.filter({ hasText: 'A finished' }).waitFor();
  expect(await items.count()).toBe(4);
  expect(new URL(page.url()).searchParams.has('run')).toBe(false);

  // The choice lives in the address: opening it again shows run B only.
  await page.goto(`${api.url}/inbox/${user}?run=${encodeURIComponent(idB)}`);
  await items.filter({ hasText: 'B says hello' }).waitFor();
  expect(await items.count()).toBe(1);
  expect(await page.locator('#filter-run').inputValue()).toBe(idB);
  // A run named only by an approval notification's id (approval:<run>:<call>) is offered too.
  const elsewhere = uid('elsewhere');
  await post('/api/notifications', {
    target: inboxWorkflowId(user),
    id: `approval:${elsewhere}:call-9`,
    type: 'warning',
    message: 'Approval needed elsewhere',
  });
  await page.locator(`#filter-run option[value="${elsewhere}"]`).waitFor({ state: 'attached' });
  expect(await page.locator(`#filter-run option[value="${elsewhere}"]`).textContent()).toBe(
    `${elsewhere} (has approvals)`,
  );
  await page.close();
}, 90_000);

test('run page: an approval edited and approved in the browser lets the run finish; runs list', async () => {
  const id = uid('approve-run');
  const input: AgentInput = {
    task: 'compute the answer',
    tools: ['calculator'],
    policy: { requireApproval: ['calculator'] },
    model: {
      provider: 'scripted',
      turns: [
        callTurn(['calculator', { expression: '6*6' }, 'calc-1']),
        answerTurn('The result: {{last_tool_results}}'),
      ],
    },
  };
  const handle = await startAgentRun(dev.fx.client, input, { workflowId: id, taskQueue });
  const page = await newPage();
  await page.goto(`${api.url}/runs/${encodeURIComponent(id)}`);
  const card = page.locator('.approval[data-tool-call="calc-1"]');
  await card.waitFor();
  await page.locator('#events li.kind-approval_requested').waitFor();
  await screenshot(page, 'run-approval');
  await card.getByRole('button', { name: 'Edit' }).click();
  await card.getByLabel('Arguments (JSON)').fill('{ "expression": "6*7" }');
  await card.getByRole('button', { name: 'Approve with these arguments' }).click();
  const result = (await handle.result()) as { answer: string };
  expect(result.answer).toContain('42');
  await page.locator('#answer', { hasText: '42' }).waitFor();
  await page.locator('#run-state .status-completed').waitFor();
  await page.locator('#events li.kind-approval_decided').waitFor();
  await page.locator('#transcript li.role-tool', { hasText: '42' }).waitFor();
  await screenshot(page, 'run');

  await page.goto(`${api.url}/runs`);
  await page.locator(`tr[data-run="${id}"]`).waitFor();
  await screenshot(page, 'runs');
  await page.selectOption('#filter-status', 'running');
  await page.locator(`tr[data-run="${id}"]`).waitFor({ state: 'detached' });
  await page.selectOption('#filter-status', 'completed');
  const row = page.locator(`tr[data-run="${id}"]`);
  await row.waitFor();
  expect(await row.textContent()).toContain('scripted');
  await page.setViewportSize({ width: 375, height: 700 });
  expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
  await page.close();
}, 150_000);

test('run page: a rejection needs a reason, and the model reads it', async () => {
  const id = uid('reject-run');
  const input: AgentInput = {
    task: 'compute something',
    tools: ['calculator'],
    policy: { requireApproval: ['calculator'] },
    model: {
      provider: 'scripted',
      turns: [callTurn(['calculator', { expression: '1/3' }, 'calc-r']), answerTurn('{{last_tool_results}}')],
    },
  };
  const handle = await startAgentRun(dev.fx.client, input, { workflowId: id, taskQueue });
  const page = await newPage();
  await page.goto(`${api.url}/runs/${encodeURIComponent(id)}`);
  const card = page.locator('.approval[data-tool-call="calc-r"]');
  await card.getByRole('button', { name: 'Reject' }).click();
  await card.getByRole('button', { name: 'Send rejection' }).click();
  await card.getByText('A rejection needs a reason').waitFor();
  await card.getByLabel('Reason (shown to the model)').fill('not needed today');
  await card.getByRole('button', { name: 'Send rejection' }).click();
  const result = (await handle.result()) as { answer: string };
  expect(result.answer).toContain('The user rejected this call: not needed today');
  await page.locator('#approvals', { hasText: 'Nothing waits for approval.' }).waitFor();
  await page.close();
}, 90_000);

test('run page: the answer’s web sources are links', async () => {
  const id = uid('cite-run');
  const input: AgentInput = {
    task: 'what is a workflow?',
    tools: ['web_search'],
    model: {
      provider: 'scripted',
      turns: [
        callTurn(['web_search', { query: 'durable execution', max_results: 1 }, 'w1']),
        answerTurn('A workflow defines the overall flow of the application [[s1]].'),
      ],
    },
  };
  await (await startAgentRun(dev.fx.client, input, { workflowId: id, taskQueue })).result();
  const page = await newPage();
  await page.goto(`${api.url}/runs/${encodeURIComponent(id)}`);
  await page.locator('#answer', { hasText: 'the overall flow of the application [1]' }).waitFor();
  const link = page.locator('#answer .citations a');
  expect(await link.getAttribute('href')).toBe('https://docs.temporal.io/workflows');
  expect(await link.textContent()).toBe('Temporal Workflow | Temporal Platform Documentation');
  expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
  // Light or dark, as the system says.
  const background = () => page.evaluate<string>('getComputedStyle(document.body).backgroundColor');
  await page.emulateMedia({ colorScheme: 'light' });
  expect(await background()).toBe('rgb(247, 247, 248)');
  await page.emulateMedia({ colorScheme: 'dark' });
  expect(await background()).toBe('rgb(21, 23, 27)');
  await page.close();
}, 90_000);

test('run page: the model’s answer is typed in place as it comes, then the answer replaces it', async () => {
  const id = uid('live-run');
  const words = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
  const input: AgentInput = {
    task: 'say words slowly',
    tools: [],
    model: { provider: 'scripted', turns: [{ content: words, tokenDelayMs: 40 }] },
  };
  const handle = await startAgentRun(dev.fx.client, input, { workflowId: id, taskQueue });
  const page = await newPage();
  await page.goto(`${api.url}/runs/${encodeURIComponent(id)}`);
  const live = page.locator('#live');
  await live.filter({ hasText: 'w3 w4' }).waitFor();
  // Typed while the run still works: the answer is not there yet.
  expect((await handle.describe()).status.name).toBe('RUNNING');
  expect(await live.innerText()).toMatch(/^Step 1: w0 w1 w2 w3 w4/);
  expect(await live.innerText()).not.toContain('w59');
  await page.locator('#answer', { hasText: 'w59' }).waitFor();
  await live.waitFor({ state: 'hidden' });
  await page.close();
}, 90_000);

test('run page: a tool call the model writes is typed in place, its arguments as they come', async () => {
  const id = uid('live-tool-run');
  const expression = Array.from({ length: 150 }, () => '1').join('+');
  const input: AgentInput = {
    task: 'add up slowly',
    tools: ['calculator'],
    model: {
      provider: 'scripted',
      turns: [
        // Words, then 38 pieces of arguments, 60 ms apart.
        {
          content: Array.from({ length: 20 }, (_, i) => `w${i}`).join(' '),
          toolCalls: [{ id: 'sum', name: 'calculator', arguments: { expression } }],
          tokenDelayMs: 60,
        },
        answerTurn('The sum is {{result:sum}}.'),
      ],
    },
  };
  const handle = await startAgentRun(dev.fx.client, input, { workflowId: id, taskQueue });
  const page = await newPage();
  await page.goto(`${api.url}/runs/${encodeURIComponent(id)}`);
  const tool = page.locator('#live .live-tool');
  await tool.filter({ hasText: '→ calculator {"expression":"1+1' }).waitFor();
  // Typed while the model still writes it: the arguments are not whole yet.
  expect(await tool.innerText()).not.toContain(`${expression}"}`);
  expect(await page.locator('#live').innerText()).toMatch(/^Step 1: w0 w1 w2/);
  await handle.result();
  await page.locator('#answer', { hasText: 'The sum is 150.' }).waitFor();
  await page.close();
}, 90_000);

test('run page: a structured answer shows the output it parsed to, indented', async () => {
  const id = uid('output-run');
  const input: AgentInput = {
    task: 'weather in Paris as JSON',
    tools: [],
    // Fenced and compact: what the page shows is the parsed output, not the answer's text.
    model: { provider: 'scripted', turns: [answerTurn('```json\n{"city":"Paris","celsius":21}\n```')] },
    output: {
      type: 'object',
      properties: { city: { type: 'string' }, celsius: { type: 'number' } },
      required: ['city', 'celsius'],
      additionalProperties: false,
    },
  };
  await (await startAgentRun(dev.fx.client, input, { workflowId: id, taskQueue })).result();
  const page = await newPage();
  await page.goto(`${api.url}/runs/${encodeURIComponent(id)}`);
  const output = page.locator('#answer .answer-output');
  await output.waitFor();
  expect(await output.innerText()).toBe(JSON.stringify({ city: 'Paris', celsius: 21 }, null, 2));
  expect(await page.locator('#answer').innerText()).not.toContain('```');
  await page.close();
}, 90_000);

test('run page: an unknown run id shows only that there is no such run', async () => {
  const page = await newPage();
  await page.goto(`${api.url}/runs/agent-nope`);
  const problem = page.getByRole('alert');
  await problem.filter({ hasText: 'No run with id "agent-nope" in this namespace' }).waitFor();
  // Nothing else: no empty State, Events or Transcript boxes under it.
  for (const heading of ['State', 'Events', 'Transcript', 'Answer'])
    expect(await page.getByRole('heading', { name: heading, exact: true }).isVisible()).toBe(false);
  expect(await page.locator('#run-state').isVisible()).toBe(false);
  await page.close();
}, 90_000);

test('run page: a run’s sub-agents link their pages, and a child’s page links its parent', async () => {
  const id = uid('team-run');
  const input: AgentInput = {
    task: 'delegate',
    model: {
      provider: 'scripted',
      turns: [callTurn(['helper', { task: 'add' }, 'h']), answerTurn('{{result:h}}')],
    },
    agents: {
      helper: {
        description: 'Adds',
        tools: ['calculator'],
        model: {
          provider: 'scripted',
          turns: [callTurn(['calculator', { expression: '2+3' }, 'c']), answerTurn('{{result:c}}')],
        },
      },
    },
  };
  await (await startAgentRun(dev.fx.client, input, { workflowId: id, taskQueue })).result();
  const page = await newPage();
  await page.goto(`${api.url}/runs/${encodeURIComponent(id)}`);
  const child = page.locator('#run-state .sub-agent');
  await child.waitFor();
  expect(await child.innerText()).toMatch(/^helper \(h\): completed, 2 steps, \d+\+\d+ tokens$/);
  await child.getByRole('link', { name: 'helper (h)', exact: true }).click();
  await page.waitForURL(`${api.url}/runs/${encodeURIComponent(`${id}:agent:h`)}`);
  await page.locator('#answer', { hasText: '5' }).waitFor();
  await page.getByRole('link', { name: id, exact: true }).click();
  await page.waitForURL(`${api.url}/runs/${encodeURIComponent(id)}`);
  await page.close();
}, 90_000);

test('run page: results of one tool are told apart by their call ids; the sources are listed once', async () => {
  const id = uid('two-results');
  const input: AgentInput = {
    task: 'what is a workflow, and what is 2+2 twice?',
    tools: ['calculator', 'web_search'],
    model: {
      provider: 'scripted',
      turns: [
        callTurn(
          ['calculator', { expression: '2+2' }, 'calc-a'],
          ['calculator', { expression: '2+2' }, 'calc-b'],
        ),
        callTurn(['web_search', { query: 'durable execution', max_results: 1 }, 'w1']),
        answerTurn(
          'Both are {{result:calc-a}}. A workflow defines the overall flow of the application [[s1]].',
        ),
      ],
    },
  };
  await (await startAgentRun(dev.fx.client, input, { workflowId: id, taskQueue })).result();
  const page = await newPage();
  await page.goto(`${api.url}/runs/${encodeURIComponent(id)}`);
  await page.locator('#answer', { hasText: 'the overall flow of the application [1]' }).waitFor();
  await page.locator('#transcript li.role-tool').nth(2).waitFor();
  const results = await page.locator('#transcript li.role-tool .role').allInnerTexts();
  expect(results).toEqual([
    'Tool Result: calculator calc-a',
    'Tool Result: calculator calc-b',
    'Tool Result: web_search w1',
  ]);
  // The text is the answer alone; its source is the one link under it.
  const title = 'Temporal Workflow | Temporal Platform Documentation';
  expect(await page.locator('#answer .answer-text').textContent()).toBe(
    'Both are 4. A workflow defines the overall flow of the application [1].',
  );
  expect((await page.locator('#answer').innerText()).split(title)).toHaveLength(2);
  expect(await page.locator('#answer .citations li').count()).toBe(1);
  await page.close();
}, 90_000);

test('run page: an answer first read without its sources says so and reads them again', async () => {
  const id = uid('cite-late');
  const input: AgentInput = {
    task: 'what is a workflow?',
    tools: ['web_search'],
    model: {
      provider: 'scripted',
      turns: [
        callTurn(['web_search', { query: 'durable execution', max_results: 1 }, 'w1']),
        answerTurn('A workflow defines the overall flow of the application [[s1]].'),
      ],
    },
  };
  await (await startAgentRun(dev.fx.client, input, { workflowId: id, taskQueue })).result();
  const page = await newPage();
  // The first answer comes as the API sends it when the citations query finds no worker in time.
  let firstAnswer = true;
  await page.route('**/answer', async (route) => {
    if (!firstAnswer) return route.continue();
    firstAnswer = false;
    const real = (await (await route.fetch()).json()) as Record<string, unknown>;
    await route.fulfill({
      json: {
        ...real,
        body: real.answer,
        text: real.answer,
        markdown: real.answer,
        citations: [],
        warning: "the run's citations could not be read (deadline exceeded); is a worker running?",
      },
    });
  });
  await page.goto(`${api.url}/runs/${encodeURIComponent(id)}`);
  await page.locator('[role="alert"]', { hasText: 'The answer is shown without its sources' }).waitFor();
  expect(await page.locator('#answer').textContent()).toContain('the overall flow of the application [[s1]]');
  await page.locator('#answer', { hasText: 'the overall flow of the application [1]' }).waitFor();
  expect(await page.locator('#answer .citations a').getAttribute('href')).toBe(
    'https://docs.temporal.io/workflows',
  );
  expect(await page.locator('[role="alert"]').isHidden()).toBe(true);
  await page.close();
}, 90_000);

test('with a token: pages need a login, the cookie is HttpOnly, cross-site requests are refused', async () => {
  const secured = await startApiServer({
    client: dev.fx.client,
    taskQueue,
    host: '127.0.0.1',
    port: 0,
    token: TOKEN,
  });
  try {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${secured.url}/runs`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.getByLabel('API token').fill('wrong-token-wrong-token');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByText('Wrong token.').waitFor();
    await page.getByLabel('API token').fill(TOKEN);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${secured.url}/runs`);
    await page.locator('table.runs tbody tr').first().waitFor();
    expect(page.url()).not.toContain(TOKEN);
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(cookie?.value).not.toContain(TOKEN);
    await context.close();

    // The API's checks apply to pages: no cookie, and a cross-site request even with the header.
    expect((await fetch(`${secured.url}/api/runs`)).status).toBe(401);
    const crossSite = await fetch(`${secured.url}/runs`, {
      headers: { authorization: `Bearer ${TOKEN}`, 'sec-fetch-site': 'cross-site' },
    });
    expect(crossSite.status).toBe(403);
    const own = await fetch(`${secured.url}/runs`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(own.status).toBe(200);
    expect(own.headers.get('content-security-policy')).toContain("script-src 'self'");
  } finally {
    await secured.close();
  }
}, 90_000);
