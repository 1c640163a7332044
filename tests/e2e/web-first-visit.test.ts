/**
 * The web UI as a newcomer first meets it, in Debian's chromium (playwright-core) at 1366 px and at
 * 375 px, against a real dev server, worker and API: a run page opened after its run finished says
 * that nothing waits for approval; a knowledge-base answer's sources are named by their path in
 * the knowledge base and never push a phone's page sideways; the answer reads in the page's own
 * type; a run id stays on one line of the runs table; `/` offers the inboxes that exist; and a page
 * on an origin the API allows starts a run through `/mcp` and reads its id.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { PROJECT_ROOT } from '../../shared/project-root';
import { Hono } from 'hono';
import { MAX_INBOXES_LISTED, registerInboxRoutes } from '../../server/api/inboxes';
import { startApiServer } from '../../server/api/server';
import type { RunningApiServer } from '../../server/api/server';
import { runCli } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { tempDir, uid } from '../../testkit/temporal';
import { closeApiAfterStreams, launchChromium } from '../support/browser';
import { useDevServer } from '../support/environments';

const WIDE = { width: 1366, height: 900 };
const PHONE = { width: 375, height: 812 };
const VIEWPORTS = [WIDE, PHONE];

/** A worker with a knowledge base of its own (seeded from examples/kb), a citing script and the demo's. */
const dir = tempDir('web-first');
const config = path.join(dir, 'config.json');
fs.copyFileSync(path.join(PROJECT_ROOT, 'examples', 'scripts', 'demo.json'), path.join(dir, 'demo.json'));
fs.writeFileSync(config, JSON.stringify({ search: { knowledgeBase: { dataDir: path.join(dir, 'kb') } } }));
fs.writeFileSync(
  path.join(dir, 'cite.json'),
  JSON.stringify({
    turns: [
      callTurn(['knowledge_base_search', { query: 'blossom end rot calcium', max_results: 1 }, 's1']),
      callTurn(['knowledge_base_search', { query: 'espresso tastes sour', max_results: 1 }, 's2']),
      answerTurn(
        'Blossom end rot comes from a calcium shortage [[a1]]; sour espresso wants a finer grind [[a2]].',
      ),
    ],
  }),
);

const dev = useDevServer({
  worker: { DURABLE_AGENT_SCRIPTS_DIR: dir, DURABLE_AGENT_CONFIG: config },
  queue: 'web-first',
});
let api: RunningApiServer;
let browser: Browser;
/** A page of another origin, which the API allows (DURABLE_AGENT_API_CORS_ORIGINS). */
let otherSite: http.Server;
let otherOrigin: string;

beforeAll(async () => {
  otherSite = http.createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>elsewhere</title>'),
  );
  await new Promise<void>((resolve) => otherSite.listen(0, '127.0.0.1', resolve));
  otherOrigin = `http://127.0.0.1:${(otherSite.address() as AddressInfo).port}`;
  dev.defer(() => new Promise((r) => otherSite.close(r)));
  api = await startApiServer({
    client: dev.fx.client,
    taskQueue: dev.taskQueue,
    host: '127.0.0.1',
    port: 0,
    corsOrigins: [otherOrigin],
    mcp: { scriptsDir: dir },
  });
  dev.defer(() => closeApiAfterStreams(api));
  browser = await launchChromium();
  dev.defer(() => browser.close());
}, 180_000);

async function scrollWidth(page: Page): Promise<number> {
  return page.evaluate<number>('document.documentElement.scrollWidth');
}

test('a finished knowledge-base run: nothing waits, sources by their path in the knowledge base, no sideways scroll', async () => {
  const id = uid('kb-answer-of-a-run-with-a-long-id');
  const run = await runCli(
    ['run', '--id', id, '--model', 'scripted:cite', '--tools', 'knowledge_base_search', 'Why?'],
    dev.env,
  );
  expect(run.code).toBe(0);
  for (const viewport of VIEWPORTS) {
    const page = await browser.newPage({ viewport });
    await page.goto(`${api.url}/runs/${id}`);
    // A finished run is read through queries a worker answers by replaying it: slow on a busy machine.
    await page
      .locator('#answer .citations li')
      .first()
      .waitFor({ timeout: 60_000 })
      .catch(async (e: Error) => {
        throw new Error(
          `at ${viewport.width} px the page showed: ${await page.locator('main').textContent()}\n${e.message}`,
        );
      });
    // Read once the run had finished: the approvals section says so instead of standing empty.
    await page.locator('#approvals', { hasText: 'Nothing waits for approval.' }).waitFor({ timeout: 5000 });
    const sources = await page.locator('#answer .citations li').allTextContents();
    expect(sources).toHaveLength(2);
    expect(sources[0]).toContain('garden/tomatoes.md');
    expect(sources[1]).toContain('kitchen/espresso.md');
    for (const s of sources) expect(s).not.toContain(dir);
    expect(await scrollWidth(page)).toBeLessThanOrEqual(viewport.width);
    // The answer is prose in the page's type, not a small monospace block.
    const fonts = await page.evaluate<{ answer: string[]; body: string[] }>(`(() => {
      const answer = getComputedStyle(document.querySelector('#answer .answer-text'));
      const body = getComputedStyle(document.body);
      return { answer: [answer.fontFamily, answer.fontSize], body: [body.fontFamily, body.fontSize] };
    })()`);
    expect(fonts.answer).toEqual(fonts.body);
    await page.close();
  }
}, 180_000);

test('at 1366 px a run id stays on one line of the runs table; at 375 px it wraps inside the screen', async () => {
  // As the tour leaves the list: ids as `run` makes them, beside a long task and the knowledge base.
  const id = `agent-${randomUUID()}`;
  const task = 'Why do tomatoes get blossom end rot, and why does espresso taste sour? Cite the documents.';
  const run = await runCli(
    ['run', '--id', id, '--model', 'scripted:cite', '--tools', 'knowledge_base_search', task],
    dev.env,
  );
  expect(run.code).toBe(0);
  const page = await browser.newPage({ viewport: WIDE });
  await page.goto(`${api.url}/runs`);
  await page.locator(`tr[data-run="${id}"] td a`).waitFor();
  const lines = await page.evaluate<number>(
    `document.querySelector('tr[data-run="${id}"] td a').getClientRects().length`,
  );
  expect(lines).toBe(1);
  expect(await scrollWidth(page)).toBeLessThanOrEqual(WIDE.width);
  await page.close();
  // On a phone the table is a list of cards, and the id wraps within the screen.
  const phone = await browser.newPage({ viewport: PHONE });
  await phone.goto(`${api.url}/runs`);
  await phone.locator(`tr[data-run="${id}"] td a`).waitFor();
  expect(await scrollWidth(phone)).toBeLessThanOrEqual(PHONE.width);
  await phone.close();
}, 120_000);

test('/ offers the inboxes that exist', async () => {
  const users = [uid('ana'), uid('bo')];
  for (const user of users)
    expect((await runCli(['notify', `inbox:${user}`, 'hello'], dev.env)).code).toBe(0);
  for (const viewport of VIEWPORTS) {
    const page = await browser.newPage({ viewport });
    await page.goto(`${api.url}/`);
    for (const user of users) {
      const link = page.locator(`a[href="/inbox/${user}"]`);
      // Visibility lists a new inbox a moment after its start.
      for (let i = 0; (await link.count()) === 0 && i < 30; i++) {
        await new Promise((r) => setTimeout(r, 300));
        await page.reload();
      }
      expect(await link.textContent()).toBe(user);
    }
    // A heading and the names (fewer than the budget: no "more" line), nothing else.
    const listed = (await page.locator('nav.inboxes').innerText()).split('\n').filter(Boolean);
    expect(listed[0]).toBe('Inboxes');
    expect(listed.slice(1).every((l) => /^(ana|bo)-/.test(l))).toBe(true);
    expect(await scrollWidth(page)).toBeLessThanOrEqual(viewport.width);
    await page.locator(`a[href="/inbox/${users[0]}"]`).click();
    await page.waitForURL(`**/inbox/${users[0]}`);
    await page.locator('.item', { hasText: 'hello' }).waitFor();
    await page.close();
  }
}, 120_000);

test('/api/inboxes names at most its budget of inboxes, the newest, and says when there are more', async () => {
  const app = new Hono();
  registerInboxRoutes(app, dev.fx.client, 2);
  const newest = [uid('carl'), uid('dora')];
  for (const user of newest) expect((await runCli(['notify', `inbox:${user}`, 'hi'], dev.env)).code).toBe(0);
  let body = { users: [] as string[], more: false };
  for (let i = 0; i < 30 && body.users[0] !== newest[1]; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 300));
    body = (await (await app.request('/api/inboxes')).json()) as typeof body;
  }
  // The earlier tests' inboxes exist too: the two newest are named, and more are said to exist.
  expect(body).toEqual({ users: [newest[1], newest[0]], more: true });
  expect(MAX_INBOXES_LISTED).toBe(100);
}, 120_000);

test('a page on an allowed origin starts a run through /mcp and reads its id', async () => {
  const page = await browser.newPage({ viewport: WIDE });
  await page.goto(`${otherOrigin}/`);
  const answer = await page.evaluate(async (mcp) => {
    const call = async (id: number, method: string, params: object, version?: string) => {
      const res = await fetch(mcp, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          // What the SDK's client sends after initialize.
          ...(version ? { 'mcp-protocol-version': version } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      });
      return (await res.json()) as { result: Record<string, unknown> };
    };
    const init = await call(1, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'a page', version: '1' },
    });
    const version = init.result.protocolVersion as string;
    const started = await call(
      2,
      'tools/call',
      { name: 'agent_start', arguments: { task: 'Plan my trip' } },
      version,
    );
    return started.result;
  }, `${api.url}/mcp`);
  const text = (answer.content as { text: string }[])[0]!.text;
  const { workflowId } = JSON.parse(text) as { workflowId: string };
  expect(workflowId).toMatch(/^agent-/);
  await dev.fx.client.workflow.getHandle(workflowId).result();
  await page.close();
}, 120_000);
