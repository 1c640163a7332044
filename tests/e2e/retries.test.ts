/**
 * While the server retries a model call (an OpenAI-compatible endpoint where nothing listens) or a
 * tool call (`web_search` on a SearXNG address where nothing listens), `run`, `status`, the run's
 * API answer and the run page say so: the activity, the attempt, the last error, when the next
 * attempt is due. A real dev server, a worker process, and Debian's chromium for the page.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startApiServer } from '../../server/api/server';
import type { RunningApiServer } from '../../server/api/server';
import type { AgentInput } from '../../shared/agent';
import type { RetryingActivityView } from '../../shared/api-shapes';
import { runCli, startCli } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { tempDir, uid } from '../../testkit/temporal';
import { closeApiAfterStreams, launchChromium } from '../support/browser';
import { useDevServer } from '../support/environments';

// Port 9 (discard) has no listener here, and fetch refuses it at once: every attempt fails fast.
const NOBODY = 'http://127.0.0.1:9';
const work = tempDir('retries');
const config = path.join(work, 'config.json');
fs.writeFileSync(config, JSON.stringify({ search: { web: { providers: { searxng: { url: NOBODY } } } } }));

const dev = useDevServer({
  queue: 'retries',
  worker: {
    OPENAI_API_KEY: 'sk-test-retries',
    OPENAI_BASE_URL: `${NOBODY}/v1`,
    DURABLE_AGENT_CONFIG: config,
  },
});
let api: RunningApiServer;
let browser: Browser;

beforeAll(async () => {
  api = await startApiServer({ client: dev.fx.client, taskQueue: dev.taskQueue, host: '127.0.0.1', port: 0 });
  dev.defer(() => closeApiAfterStreams(api));
  browser = await launchChromium();
  dev.defer(() => browser.close());
}, 180_000);

/** The run's retrying activities as the API answers them (what the run page draws). */
async function retrying(id: string): Promise<RetryingActivityView[]> {
  const res = await fetch(`${api.url}/api/runs/${encodeURIComponent(id)}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { retrying: RetryingActivityView[] }).retrying;
}

test.concurrent(
  'a model call being retried shows its attempt, last error and next attempt in run, status and the API',
  async () => {
    const id = uid('retries-model');
    const run = startCli(dev.env, ['run', 'hello', '--model', 'openai:gpt-test', '--id', id]);
    try {
      await run.waitFor('stdout', 'callModel is being retried: attempt');
      const line =
        run
          .stdout()
          .split('\n')
          .find((l) => l.includes('is being retried')) ?? '';
      expect(line).toMatch(
        /↻ callModel is being retried: attempt \d+ \(the last failed: OpenAI API at http:\/\/127\.0\.0\.1:9 could not be reached/,
      );
      expect(line).toMatch(/next attempt (in \d+ s|now)/);

      const status = await runCli(['status', id], dev.env);
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(/↻ callModel is being retried: attempt \d+/);

      const detail = await retrying(id);
      expect(detail).toEqual([
        expect.objectContaining({
          activity: 'callModel',
          lastError: expect.stringContaining('could not be reached'),
        }),
      ]);
      expect(detail[0]!.attempt).toBeGreaterThan(1);
    } finally {
      await runCli(['cancel', id], dev.env);
      run.child.kill('SIGINT');
      await run.exited;
    }
  },
  120_000,
);

test.concurrent(
  'a tool call being retried shows its attempt, last error and next attempt in run, status, the API and the run page',
  async () => {
    const id = uid('retries-tool');
    const input: AgentInput = {
      task: 'search the web',
      tools: ['web_search'],
      model: {
        provider: 'scripted',
        turns: [callTurn(['web_search', { query: 'durable execution' }, 'ws']), answerTurn('{{result:ws}}')],
      },
    };
    const file = path.join(work, `${id}.json`);
    fs.writeFileSync(file, JSON.stringify(input));
    const run = startCli(dev.env, ['run', '--input', file, '--id', id]);
    try {
      await run.waitFor('stdout', 'web_search is being retried: attempt');
      const line =
        run
          .stdout()
          .split('\n')
          .find((l) => l.includes('is being retried')) ?? '';
      expect(line).toMatch(
        /↻ web_search is being retried: attempt \d+ \(the last failed: SearXNG .*could not be reached/,
      );
      expect(line).toMatch(/next attempt (in \d+ s|now)/);

      const status = await runCli(['status', id], dev.env);
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(/↻ web_search is being retried: attempt \d+ \(the last failed: /);

      const detail = await retrying(id);
      expect(detail).toEqual([
        expect.objectContaining({
          activity: 'web_search',
          lastError: expect.stringContaining('could not be reached'),
        }),
      ]);
      expect(detail[0]!.attempt).toBeGreaterThan(1);

      // The run page's state has a Retrying line: the tool, the attempt, the last error, the next attempt.
      const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
      page.setDefaultTimeout(45_000);
      try {
        await page.goto(`${api.url}/runs/${encodeURIComponent(id)}`);
        const retry = page.locator('#run-state .retrying');
        await retry.filter({ hasText: /^web_search: attempt \d+ \(the last failed: / }).waitFor();
        const text = await retry.innerText();
        expect(text).toContain('could not be reached');
        expect(text).toMatch(/, (next attempt .+|attempt running)$/);
        const label = page.locator('#run-state dt', { hasText: 'Retrying' });
        expect(await label.count()).toBe(1);
      } finally {
        await page.close();
      }
    } finally {
      await runCli(['cancel', id], dev.env);
      run.child.kill('SIGINT');
      await run.exited;
    }
  },
  120_000,
);
