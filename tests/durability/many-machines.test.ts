/**
 * Many machines on the real dev server: three worker processes, each with a folder of its own
 * (config, scripts) and nothing on local disk that another needs: the content store, the knowledge
 * base and the live-token channel in PostgreSQL. Several runs at once, each with large tool
 * results (a 40 KB query result, twenty search passages) kept by reference, and searches on the
 * shared knowledge base, which the workers seed together on first use. One worker is SIGKILLed
 * while it runs a step; every run finishes with the right answer, whichever worker took which step.
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { AgentInput, AgentResult } from '../../shared/agent';
import { eventsQuery } from '../../shared/agent';
import { closeKnowledgeBases } from '../../activities/search/kb/open';
import { PG_URL, dropKbTables, kbTablePrefix } from '../../testkit/knowledge-base';
import type { WorkerProcess } from '../../testkit/processes';
import { startWorkerProcess } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { tempDir, uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const dev = useDevServer({ queue: 'many' });
const RUNS = 6;
const ROWS = 400;
const prefix = kbTablePrefix();
const corpus = tempDir('many-corpus');
let workers: WorkerProcess[] = [];

/** A made-up word per run, so each run's searches find its own document and nothing else first. */
const marker = (i: number) => `zorblax${i}quint`;

/** The shared knowledge base's documents: one per run, and filler that matches no query. */
function writeCorpus(): void {
  for (let i = 0; i < RUNS; i++) {
    fs.writeFileSync(
      path.join(corpus, `run-${i}.md`),
      `# Logbook ${i}\n\n## Findings\n\nThe ${marker(i)} reading of station ${i} was ${i * 11} units. ` +
        `${'Calibration notes follow the usual procedure. '.repeat(15)}\n\n## Follow-up\n\n` +
        `Station ${i} reports the second ${marker(i)} check passed.`,
    );
  }
  for (let j = 0; j < 20; j++) {
    fs.writeFileSync(
      path.join(corpus, `filler-${j}.md`),
      `# Filler ${j}\n\n${'Nothing to see in this routine weather log entry. '.repeat(30)}`,
    );
  }
}

/** A worker's own folder (config and scripts), with every shared thing in PostgreSQL. */
function workerEnv(n: number): Record<string, string> {
  const home = tempDir(`many-worker-${n}`);
  fs.mkdirSync(path.join(home, 'scripts'));
  fs.writeFileSync(
    path.join(home, 'config.json'),
    JSON.stringify({
      search: {
        knowledgeBase: {
          engine: 'postgres',
          url: '${env:KB_DATABASE_URL}',
          tablePrefix: prefix,
          seed: [corpus],
          lockTimeoutMs: 60_000,
        },
      },
      databases: {
        shared: {
          engine: 'postgres',
          url: '${env:SQL_DATABASE_URL}',
          allowPrivilegedRole: true,
          maxRows: 500,
        },
      },
    }),
  );
  return {
    ...dev.env,
    DURABLE_AGENT_CONFIG: path.join(home, 'config.json'),
    DURABLE_AGENT_SCRIPTS_DIR: path.join(home, 'scripts'),
    DURABLE_AGENT_CONTENT_STORE: PG_URL,
    DURABLE_AGENT_STREAM: PG_URL,
    KB_DATABASE_URL: PG_URL,
    SQL_DATABASE_URL: PG_URL,
  };
}

/** Run i: a big query and a wide search, a wait (the window for the kill), a narrow search, the answer. */
function input(i: number): AgentInput {
  return {
    task: `many machines ${i}`,
    tools: ['knowledge_base_search', 'sql_query', 'wait', 'calculator'],
    model: {
      provider: 'scripted',
      turns: [
        callTurn(
          ['knowledge_base_search', { query: `${marker(i)} reading`, max_results: 20 }, 'k1'],
          [
            'sql_query',
            {
              connection: 'shared',
              sql: `SELECT g AS n, repeat('row${i}-', 12) || g AS filler FROM generate_series(1, ${ROWS}) AS g`,
            },
            'q1',
          ],
        ),
        callTurn(['wait', { seconds: 4 }, 'w1'], ['calculator', { expression: `${i} * 1000 + 7` }, 'c1']),
        callTurn(['knowledge_base_search', { query: `second ${marker(i)} check`, max_results: 3 }, 'k2']),
        answerTurn('k1={{result:k1}}\nq1={{result:q1}}\nc1={{result:c1}}\nk2={{result:k2}}'),
      ],
    },
  };
}

beforeAll(async () => {
  writeCorpus();
  workers = await Promise.all([0, 1, 2].map((n) => startWorkerProcess(workerEnv(n))));
}, 300_000);

afterAll(async () => {
  for (const w of workers) {
    if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGTERM');
    await w.exited;
  }
  await closeKnowledgeBases();
  await dropKbTables(prefix);
});

/** The worker process running a `wait` step right now, by the identity Temporal records (`<pid>@<host>`). */
async function workerInWait(runIds: string[]): Promise<WorkerProcess> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    for (const id of runIds) {
      const pending = (await dev.fx.client.workflow.getHandle(id).describe()).raw.pendingActivities ?? [];
      for (const a of pending) {
        const pid = Number(/^(\d+)@/.exec(a.lastWorkerIdentity ?? '')?.[1]);
        const w = workers.find((x) => x.child.pid === pid);
        if (a.activityType?.name === 'wait' && a.lastStartedTime && w) return w;
      }
    }
    if (Date.now() > deadline) throw new Error('no worker was seen running a wait step');
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('three workers share one content store, knowledge base and channel: runs finish right whichever worker takes each step, one SIGKILLed midway', async () => {
  const runIds = Array.from({ length: RUNS }, () => uid('many-run'));
  const handles = await Promise.all(
    runIds.map((workflowId, i) =>
      dev.fx.client.workflow.start('agentWorkflow', {
        taskQueue: dev.taskQueue,
        workflowId,
        args: [input(i)],
      }),
    ),
  );

  const victim = await workerInWait(runIds);
  const victimDid = victim.lines.filter((l) => l.msg === 'activity completed').length;
  victim.child.kill('SIGKILL');
  await victim.exited;

  const results = (await Promise.all(handles.map((h) => h.result()))) as AgentResult[];
  results.forEach((r, i) => {
    const answer = r.answer ?? '';
    // The wide search found this run's document first (its passages, from the shared index).
    const k1 = answer.slice(answer.indexOf('k1='), answer.indexOf('\nq1='));
    expect(k1).toContain(`Logbook ${i}`);
    expect(k1).toContain(`The ${marker(i)} reading of station ${i} was ${i * 11} units.`);
    expect(/Logbook (\d+)/.exec(k1)?.[1]).toBe(String(i));
    // The whole query result reached the model, not the preview history keeps: its last row.
    expect(answer).toContain(`row${i}-`.repeat(12) + String(ROWS));
    expect(answer).toContain(`c1=${i * 1000 + 7}`);
    expect(answer.slice(answer.indexOf('k2='))).toContain(
      `Station ${i} reports the second ${marker(i)} check passed.`,
    );
    expect(r.steps).toBe(4);
  });

  // The killed worker had taken steps, and the others took over: some run's steps ran on several workers.
  expect(victimDid).toBeGreaterThan(0);
  const completedBy = (workflowId: string) =>
    new Set(
      workers
        .filter((w) => w.lines.some((l) => l.msg === 'activity completed' && l.workflowId === workflowId))
        .map((w) => w.child.pid),
    );
  expect(Math.max(...runIds.map((id) => completedBy(id).size))).toBeGreaterThanOrEqual(2);
  for (const id of runIds) {
    const events = await dev.fx.client.workflow.getHandle(id).query(eventsQuery, {});
    expect(events.filter((e) => e.kind === 'tool_started').map((e) => e.tool)).toEqual(
      expect.arrayContaining(['knowledge_base_search', 'sql_query', 'wait', 'calculator']),
    );
  }

  // Three workers seeding at once indexed the corpus once: one row per file, the sums agreeing.
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const r = await client.query<{ docs: number; meta: number }>(
      `SELECT (SELECT count(*)::int FROM ${prefix}_documents) AS docs, documents::int AS meta FROM ${prefix}_meta`,
    );
    expect(r.rows[0]).toEqual({ docs: fs.readdirSync(corpus).length, meta: fs.readdirSync(corpus).length });
  } finally {
    await client.end();
  }
}, 300_000);
