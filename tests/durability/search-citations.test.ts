/**
 * Citations across a run on the real dev server: two knowledge-base searches and one web search
 * (Tavily's documented response, served from 127.0.0.1), with a forced continue-as-new between
 * searches and the worker killed mid-run. Cite indexes never repeat, and the final answer's marks
 * resolve through the `citations` query.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { AgentResult } from '../../shared/agent';
import { citationsQuery, eventsQuery, stateQuery, transcriptQuery } from '../../shared/agent';
import { startWorkerProcess } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { tempDir, uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const TAVILY = fs.readFileSync(
  path.join(__dirname, '..', 'fixtures', 'search', 'tavily-search.json'),
  'utf8',
);
const dev = useDevServer();
let web: http.Server;
let webCalls = 0;

beforeAll(async () => {
  web = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      webCalls += 1;
      const query = (JSON.parse(body || '{}') as { query?: string }).query ?? '';
      // A query starting "topic-" gets pages of its own; "topic-slow" answers 1.5 s late.
      const topic = /^topic-(\w+)/.exec(query)?.[1];
      const answer = topic
        ? JSON.stringify({
            query,
            results: [1, 2].map((n) => ({
              url: `https://example.test/${topic}/${n}`,
              title: `${topic} page ${n}`,
              content: `What the ${topic} page ${n} says.`,
              score: 0.9 - n / 10,
            })),
          })
        : TAVILY;
      setTimeout(
        () => {
          res.writeHead(req.url === '/search' && req.method === 'POST' ? 200 : 404, {
            'content-type': 'application/json',
          });
          res.end(answer);
        },
        topic === 'slow' ? 1_500 : 0,
      );
    });
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  dev.defer(() => new Promise((resolve) => web.close(resolve)));
});

/** A worker config whose web search is the local Tavily-shaped server. */
function writeSearchConfig(dir: string): string {
  const configFile = path.join(dir, 'config.json');
  fs.writeFileSync(
    configFile,
    JSON.stringify({
      search: {
        knowledgeBase: { dataDir: path.join(dir, 'kb') },
        web: {
          providers: {
            tavily: {
              apiKey: 'tvly-test-key-0001',
              baseUrl: `http://127.0.0.1:${(web.address() as AddressInfo).port}`,
            },
          },
          default: ['tavily'],
        },
      },
    }),
  );
  return configFile;
}

test('cite indexes are unique across searches, continue-as-new and a worker restart, and resolve', async () => {
  const dir = tempDir('search-run');
  const configFile = writeSearchConfig(dir);
  fs.writeFileSync(
    path.join(dir, 'search.json'),
    JSON.stringify({
      turns: [
        callTurn(['knowledge_base_search', { query: 'continue as new history', max_results: 2 }, 'kb1']),
        callTurn(['web_search', { query: 'durable execution workflow engine', max_results: 3 }, 'web1']),
        callTurn(['wait', { seconds: 3 }, 'pause']),
        callTurn(['knowledge_base_search', { query: 'continue as new history', max_results: 3 }, 'kb2']),
        answerTurn('Workflows survive crashes [[a1]] and replay their history [[d3]].'),
      ],
    }),
  );
  const env = {
    TEMPORAL_ADDRESS: dev.fx.address,
    DURABLE_AGENT_TASK_QUEUE: uid('search'),
    DURABLE_AGENT_SCRIPTS_DIR: dir,
    DURABLE_AGENT_CONFIG: configFile,
  };
  const first = await startWorkerProcess(env);
  const workflowId = uid('cite');
  const handle = await dev.fx.client.workflow.start('agentWorkflow', {
    taskQueue: env.DURABLE_AGENT_TASK_QUEUE,
    workflowId,
    args: [
      {
        task: 'research',
        tools: ['knowledge_base_search', 'web_search', 'wait'],
        model: { provider: 'scripted', script: 'search' },
        policy: { continueAsNewAfterSteps: 2 },
      },
    ],
  });
  const latest = dev.fx.client.workflow.getHandle(workflowId);
  for (let i = 0; i < 900; i++) {
    const events = await latest.query(eventsQuery, {}).catch(() => []);
    if (events.some((e) => e.kind === 'tool_started' && e.tool === 'wait')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  first.child.kill('SIGKILL');
  await first.exited;
  const second = await startWorkerProcess(env);
  try {
    const result = (await handle.result()) as AgentResult;
    expect(result.answer).toBe('Workflows survive crashes [[a1]] and replay their history [[d3]].');
    expect(webCalls).toBe(1);
    expect((await latest.query(stateQuery)).continuations).toBeGreaterThanOrEqual(1);

    const citations = await latest.query(citationsQuery);
    const indexes = citations.map((c) => c.record.cite_index);
    expect(new Set(indexes).size).toBe(indexes.length);
    expect(indexes).toEqual([...indexes].sort((a, b) => a - b));
    const byMark = Object.fromEntries(citations.map((c) => [c.reference_mark, c.record]));
    expect(byMark['[[a1]]']).toMatchObject({ sign: 'a', source_type: 'file', cite_index: 1 });
    expect(byMark['[[d3]]']).toMatchObject({
      sign: 'd',
      source_type: 'url',
      url: 'https://docs.temporal.io/workflows',
    });

    // The second knowledge-base search kept the indexes of chunks seen before and numbered new ones after.
    const transcript = (await latest.query(transcriptQuery)).entries;
    // The transcript shows each search result as "[a1] title; [a2] title" (the model read the
    // passages, rendered from the content store).
    const shownIndexes = (id: string): { index: string }[] => {
      const text = transcript.find((t) => t.toolCallId === id)?.text ?? '';
      return [...text.matchAll(/\[([a-z]\d+)\] /g)].map((m) => ({ index: m[1] as string }));
    };
    const kb2 = shownIndexes('kb2');
    const kb1 = shownIndexes('kb1');
    expect(kb1.map((r) => r.index)).toEqual(['a1', 'a2']);
    const webCount = citations.filter((c) => c.record.sign === 'd').length;
    expect(webCount).toBeGreaterThanOrEqual(1);
    expect(kb2).toHaveLength(3);
    for (const r of kb2) {
      const n = Number(r.index.slice(1));
      expect(n <= 2 || n > 2 + webCount).toBe(true);
    }
    // At least one chunk was new to this search and got the next free number.
    expect(kb2.some((r) => Number(r.index.slice(1)) === 3 + webCount)).toBe(true);
  } finally {
    second.child.kill('SIGTERM');
    await second.exited;
  }
}, 240_000);

test('parallel searches number their results in the order the calls started, not the order they finished', async () => {
  const dir = tempDir('search-order');
  const configFile = writeSearchConfig(dir);
  fs.writeFileSync(
    path.join(dir, 'order.json'),
    JSON.stringify({
      turns: [
        callTurn(
          ['web_search', { query: 'topic-slow', max_results: 2 }, 'slow'],
          ['web_search', { query: 'topic-fast', max_results: 2 }, 'fast'],
        ),
        answerTurn('Slow first [[d1]], fast after [[d3]].'),
      ],
    }),
  );
  const env = {
    TEMPORAL_ADDRESS: dev.fx.address,
    DURABLE_AGENT_TASK_QUEUE: uid('search-order'),
    DURABLE_AGENT_SCRIPTS_DIR: dir,
    DURABLE_AGENT_CONFIG: configFile,
  };
  const worker = await startWorkerProcess(env);
  try {
    const handle = await dev.fx.client.workflow.start('agentWorkflow', {
      taskQueue: env.DURABLE_AGENT_TASK_QUEUE,
      workflowId: uid('cite-order'),
      args: [
        {
          task: 'research',
          tools: ['web_search'],
          model: { provider: 'scripted', script: 'order' },
        },
      ],
    });
    const result = (await handle.result()) as AgentResult;
    expect(result.answer).toBe('Slow first [[d1]], fast after [[d3]].');
    // The fast search finished first, yet the slow one (called first) holds d1 and d2.
    const events = await handle.query(eventsQuery, {});
    const took: Record<string, number> = Object.fromEntries(
      events.filter((e) => e.kind === 'tool_finished').map((e) => [e.toolCallId, e.durationMs ?? 0]),
    );
    expect(took.slow).toBeGreaterThanOrEqual((took.fast ?? 0) + 1_000);
    const citations = await handle.query(citationsQuery);
    expect(citations.map((c) => [c.reference_mark, c.record.url])).toEqual([
      ['[[d1]]', 'https://example.test/slow/1'],
      ['[[d2]]', 'https://example.test/slow/2'],
      ['[[d3]]', 'https://example.test/fast/1'],
      ['[[d4]]', 'https://example.test/fast/2'],
    ]);
  } finally {
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
}, 240_000);
