/**
 * An answer that cites two sources, as people see it: a scripted run on a real dev server searches
 * the knowledge base twice and answers with two marks; `run`, `run --json`, `status`, `transcript`
 * (text and Markdown, rebuilt from history) and the HTTP API all show numbered references with each
 * source's title and file path.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createNotificationsApp } from '../../server/api/app';
import { PROJECT_ROOT } from '../../shared/project-root';
import { runCli } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { tempDir, uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const KB = path.join(PROJECT_ROOT, 'examples', 'kb');
const TOMATOES = path.join(KB, 'garden', 'tomatoes.md');
const ESPRESSO = path.join(KB, 'kitchen', 'espresso.md');

const dir = tempDir('cite-cli');
const config = path.join(dir, 'config.json');

beforeAll(() => {
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
});
const dev = useDevServer({
  worker: { DURABLE_AGENT_SCRIPTS_DIR: dir, DURABLE_AGENT_CONFIG: config },
  queue: 'cite-cli',
});

/** The sources block as `run`, `status` and the text transcript print it. */
const sources = (indent: string) =>
  new RegExp(
    `Sources:\\n${indent} {2}\\[1\\] Growing Tomatoes › Blossom end rot — ${TOMATOES.replace(/[.]/g, '\\.')}\\n` +
      `${indent} {2}\\[2\\] .+ — ${ESPRESSO.replace(/[.]/g, '\\.')}`,
    'i',
  );

test('run, status, transcript and the API show the two cited sources, numbered, with title and path', async () => {
  const id = uid('cite-run');
  const run = await runCli(
    [
      'run',
      '--id',
      id,
      '--model',
      'scripted:cite',
      '--tools',
      'knowledge_base_search',
      'Two garden and kitchen questions',
    ],
    dev.env,
  );
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(run.stdout).toContain(
    'Blossom end rot comes from a calcium shortage [1]; sour espresso wants a finer grind [2].',
  );
  // Live progress shows the model's raw turn; the answer printed under it has no raw marks left.
  expect(run.stdout.split('\n\n').slice(1).join('\n\n')).not.toContain('[[');
  expect(run.stdout).toMatch(sources(''));

  const json = await runCli(
    ['run', '--json', '--model', 'scripted:cite', '--tools', 'knowledge_base_search', 'Again, as JSON'],
    dev.env,
  );
  const parsed = JSON.parse(json.stdout) as {
    result: { answer: string };
    citations: Record<string, unknown>[];
  };
  expect(parsed.result.answer).toContain('[[a1]]');
  expect(parsed.citations).toEqual([
    expect.objectContaining({ n: 1, index: 'a1', location: TOMATOES, filename: 'garden/tomatoes.md' }),
    expect.objectContaining({ n: 2, index: 'a2', location: ESPRESSO, filename: 'kitchen/espresso.md' }),
  ]);

  const status = await runCli(['status', id], dev.env);
  expect(status.code).toBe(0);
  expect(status.stdout).toContain('answer: Blossom end rot comes from a calcium shortage [1]');
  expect(status.stdout).toMatch(sources(''));

  const transcript = await runCli(['transcript', id], dev.env);
  expect(transcript.code).toBe(0);
  expect(transcript.stdout).toMatch(
    /answer: Blossom end rot comes from a calcium shortage \[1\]; .* \[2\]\./,
  );
  expect(transcript.stdout).toMatch(
    new RegExp(
      `sources:\\n {4}\\[1\\] Growing Tomatoes › Blossom end rot — ${TOMATOES.replace(/[.]/g, '\\.')}\\n {4}\\[2\\] .+ — ${ESPRESSO.replace(/[.]/g, '\\.')}`,
    ),
  );
  const markdown = await runCli(['transcript', id, '--format', 'markdown'], dev.env);
  expect(markdown.stdout).toContain(`  - [1] Growing Tomatoes › Blossom end rot — ${TOMATOES}`);
  expect(markdown.stdout).toMatch(/ {2}- \[2\] .+ — .*espresso\.md/);

  const app = createNotificationsApp({ client: dev.fx.client, taskQueue: dev.env.DURABLE_AGENT_TASK_QUEUE! });
  // As a local client sends it: the API without a token answers loopback hosts only.
  const local = { headers: { host: '127.0.0.1:8787' } };
  const res = await app.request(`/api/runs/${encodeURIComponent(id)}/answer`, local);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { text: string; markdown: string; citations: { location: string }[] };
  expect(body.text).toMatch(sources(''));
  expect(body.markdown).toContain('**Sources**\n\n1. [Growing Tomatoes › Blossom end rot]');
  expect(body.citations.map((c) => c.location)).toEqual([TOMATOES, ESPRESSO]);
  expect((await app.request('/api/runs/no-such-run/answer', local)).status).toBe(404);
}, 240_000);
