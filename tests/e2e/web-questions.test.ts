/**
 * A question answered from the web UI in a real browser (Debian's chromium, playwright-core) at a
 * desktop width (1366 px) and a phone's (375 px), against a real dev server, worker and API
 * server: the inbox notice links the form; the form is built from the question's JSON Schema
 * (text, number, a choice as radio buttons, a long choice as a list, a date, a checkbox, a nested
 * object); missing fields and the run's own refusal are shown beside their fields; the answer goes
 * in, the run continues with it, and HTML typed in a text field comes back as text. Screenshots go
 * to docs/screenshots/ (run-question-*.png) when missing or WEB_UI_SCREENSHOTS=1.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { PROJECT_ROOT } from '../../shared/project-root';
import { startApiServer } from '../../server/api/server';
import type { RunningApiServer } from '../../server/api/server';
import { startAgentRun } from '../../client/start-run';
import type { AgentInput, AgentResult } from '../../shared/agent';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { uid } from '../../testkit/temporal';
import { closeApiAfterStreams, launchChromium } from '../support/browser';
import { useDevServer } from '../support/environments';

const dev = useDevServer({ worker: true, queue: 'web-questions' });
let api: RunningApiServer;
let browser: Browser;

beforeAll(async () => {
  api = await startApiServer({ client: dev.fx.client, taskQueue: dev.taskQueue, host: '127.0.0.1', port: 0 });
  dev.defer(() => closeApiAfterStreams(api));
  browser = await launchChromium();
  dev.defer(() => browser.close());
}, 180_000);

const FORM = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name' },
    seats: { type: 'integer', minimum: 1, maximum: 9, title: 'Seats' },
    city: { enum: ['Lisbon', 'Porto', 'Faro'], title: 'City' },
    airport: { enum: ['LIS', 'OPO', 'FAO', 'MAD', 'BCN', 'CDG'], title: 'Airport' },
    date: { type: 'string', format: 'date', title: 'Date' },
    window: { type: 'boolean', title: 'Window seat' },
    contact: {
      type: 'object',
      title: 'Contact',
      properties: { email: { type: 'string', format: 'email' }, phone: { type: 'string' } },
      required: ['email'],
    },
  },
  required: ['name', 'seats', 'city', 'date', 'contact'],
};

/** Saves a screenshot when it is missing or WEB_UI_SCREENSHOTS=1. */
async function screenshot(page: Page, name: string): Promise<void> {
  const file = path.join(PROJECT_ROOT, 'docs', 'screenshots', `${name}.png`);
  if (fs.existsSync(file) && process.env.WEB_UI_SCREENSHOTS !== '1') return;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  await page.screenshot({ path: file, fullPage: true });
}

test.each([
  { name: 'desktop', viewport: { width: 1366, height: 800 } },
  { name: 'phone', viewport: { width: 375, height: 812 } },
])(
  'at $viewport.width px: the inbox links the form, refusals show beside their fields, the answer goes in',
  async ({ name, viewport }) => {
    const user = uid('web-ask');
    const id = uid('web-ask-run');
    const input: AgentInput = {
      task: 'book a trip',
      tools: ['ask_user'],
      notify: { user },
      model: {
        provider: 'scripted',
        turns: [
          callTurn(['ask_user', { question: 'Who travels, and where to?', schema: FORM }, 'q1']),
          answerTurn('Booked: {{last_tool_results}}'),
        ],
      },
    };
    const handle = await startAgentRun(dev.fx.client, input, { workflowId: id, taskQueue: dev.taskQueue });
    const page = await browser.newPage({ viewport });
    page.setDefaultTimeout(45_000);
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on('pageerror', (err) => console.error(`page error: ${err.message}`));
    try {
      // The inbox notice links the form that answers it.
      await page.goto(`${api.url}/inbox/${user}`);
      const item = page.locator('#notifications li', { hasText: 'Question: Who travels, and where to?' });
      await item.waitFor();
      await item.getByRole('link', { name: 'Answer in the form' }).click();
      await page.waitForURL(`**/runs/${encodeURIComponent(id)}#question-q1`);
      const card = page.locator('#question-q1');
      await card.waitFor();
      // The link opened the form: its first field has the focus.
      await page.waitForFunction("document.activeElement?.id === 'q-q1-name'");
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
        viewport.width,
      );

      // Every kind of field the schema asks for.
      await expect(card.locator('input#q-q1-name[type=text]').count()).resolves.toBe(1);
      await expect(card.locator('input#q-q1-seats[type=number]').count()).resolves.toBe(1);
      await expect(card.locator('input[type=radio][name=q-q1-city]').count()).resolves.toBe(3);
      await expect(card.locator('select#q-q1-airport option').count()).resolves.toBe(7);
      await expect(card.locator('input#q-q1-date[type=date]').count()).resolves.toBe(1);
      await expect(card.locator('input#q-q1-window[type=checkbox]').count()).resolves.toBe(1);
      await expect(
        card.locator('fieldset.object input#q-q1-contact_email[type=email]').count(),
      ).resolves.toBe(1);

      // Sent empty: the page says what is missing, beside each field; nothing is sent.
      await card.getByRole('button', { name: 'Send answer' }).click();
      await card.locator('#q-q1-name-msg', { hasText: 'is required' }).waitFor();
      await card.locator('#q-q1-contact_email-msg', { hasText: 'is required' }).waitFor();
      expect(await card.locator('#q-q1-name').getAttribute('aria-invalid')).toBe('true');

      const html = '<img src=x onerror=alert(1)>Ann';
      await card.locator('#q-q1-name').fill(html);
      await card.locator('#q-q1-seats').fill('0');
      await card.locator('label[for="q-q1-city-1"]').click();
      await card.locator('#q-q1-airport').selectOption({ label: 'OPO' });
      await card.locator('#q-q1-date').fill('2027-01-15');
      await card.locator('label[for="q-q1-window"]').click();
      await card.locator('#q-q1-contact_email').fill('ann@example.com');
      // The run refuses seats 0 with its reason, shown beside the field; the run keeps waiting.
      await card.getByRole('button', { name: 'Send answer' }).click();
      await card.locator('#q-q1-seats-msg', { hasText: 'must be at least 1; got 0' }).waitFor();
      await card.locator('p.error', { hasText: 'The answer to q1 was refused' }).waitFor();
      await screenshot(page, `run-question-refused-${name}`);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(
        viewport.width,
      );

      await card.locator('#q-q1-seats').fill('2');
      await card.getByRole('button', { name: 'Send answer' }).click();
      await card.getByText('Answered.').waitFor();
      const result = (await handle.result()) as AgentResult;
      const answer = {
        name: html,
        seats: 2,
        city: 'Porto',
        airport: 'OPO',
        date: '2027-01-15',
        window: true,
        contact: { email: 'ann@example.com' },
      };
      expect(result.answer).toBe(`Booked: ${JSON.stringify(answer)}`);
      // The answer is shown back as text: the tag never became an element, nothing ran.
      await page.locator('#answer', { hasText: 'Booked:' }).waitFor();
      expect(await page.locator('#answer').innerText()).toContain(html);
      expect(await page.locator('main img').count()).toBe(0);
      expect(dialogs).toEqual([]);
      // The inbox notice now says it was answered from the web.
      await page.goto(`${api.url}/inbox/${user}`);
      await page.locator('#notifications li', { hasText: 'Answered: Who travels, and where to?' }).waitFor();
      expect(await page.locator('#notifications li a', { hasText: 'Answer in the form' }).count()).toBe(0);
      expect(await page.locator('main img').count()).toBe(0);
    } finally {
      await page.close();
    }
  },
  240_000,
);
