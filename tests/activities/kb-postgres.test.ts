/**
 * The knowledge base's PostgreSQL engine with other processes, on the machine's server (tables
 * under this file's own prefix): one index shared by processes (a `kb add` in a child process
 * searched here, and back), the writer's advisory lock naming its holder, three stores' concurrent
 * first use on empty tables, database errors that are final or retried and never show the URL, and
 * the settings' checks. What both engines do alike is in kb.test.ts.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { ApplicationFailure } from '@temporalio/common';
import type { KnowledgeBaseConfig } from '../../activities/search/config';
import { KnowledgeBaseConfigSchema, SearchConfigSchema } from '../../activities/search/config';
import { createKnowledgeBaseActivities } from '../../activities/search/knowledge-base';
import type { IndexReport } from '../../activities/search/kb/indexer';
import { listDocuments } from '../../activities/search/kb/indexer';
import { closeKnowledgeBases } from '../../activities/search/kb/open';
import { lockKeys } from '../../activities/search/kb/postgres/schema';
import { PROJECT_ROOT } from '../../shared/project-root';
import {
  PG_URL,
  dropKbTables,
  kbActivityEnv as env,
  kbTablePrefix,
  searchKb as searchWith,
  writeFiles,
  writeKbConfigFile,
} from '../../testkit/knowledge-base';
import { CLI, tempDir } from '../../testkit/temporal';

const SEED = path.join(PROJECT_ROOT, 'examples', 'kb');
const prefix = kbTablePrefix();
const prefixes = [prefix];
/** The worker config file of this index, for the CLI in child processes. */
const configFile = writeKbConfigFile(tempDir('kb-pg-config'), prefix, { seed: [SEED] });

function kbConfig(extra: Record<string, unknown> = {}): KnowledgeBaseConfig {
  return SearchConfigSchema.parse({
    knowledgeBase: {
      engine: 'postgres',
      url: PG_URL,
      tablePrefix: prefix,
      seed: [SEED],
      lockTimeoutMs: 500,
      ...extra,
    },
  }).knowledgeBase;
}

afterAll(async () => {
  await closeKnowledgeBases();
  for (const p of prefixes) await dropKbTables(p);
});

describe('the postgres engine shared between processes', () => {
  const pgActivities = createKnowledgeBaseActivities(kbConfig());
  const childEnv = { ...process.env, DURABLE_AGENT_CONFIG: configFile, KB_DATABASE_URL: PG_URL };

  /** `durable-agent kb …` in a process of its own, on this file's PostgreSQL index. */
  function kbCli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
    return spawnSync(CLI[0]!, [...CLI.slice(1), 'kb', ...args], { encoding: 'utf8', env: childEnv });
  }

  it('is one index for every process: a kb add elsewhere is searched here, and what this process adds is found there', async () => {
    const theirs = tempDir('kb-pg-theirs');
    writeFiles(theirs, { 'comet.md': '# Comet Logbook\n\nThe comet tail always points away from the sun.' });
    const add = kbCli('add', theirs);
    expect(add.stderr).toBe('');
    expect(add.stdout).toMatch(/: 1 indexed \(1 chunks\)/);
    expect((await searchWith(pgActivities, 'comet tail sun')).data.records[0]?.filename).toBe('comet.md');

    const ours = tempDir('kb-pg-ours');
    writeFiles(ours, { 'aurora.md': '# Aurora Notes\n\nAn aurora borealis glows green above the fjord.' });
    await env().run(pgActivities.indexKnowledgeBase, { path: ours });
    const found = kbCli('search', 'aurora borealis fjord', '-n', '1', '--json');
    expect(found.status).toBe(0);
    expect((JSON.parse(found.stdout) as { filename: string; path: string }[])[0]).toMatchObject({
      filename: 'aurora.md',
      path: path.join(ours, 'aurora.md'),
    });
  });

  it('lets one writer in at a time: a busy index is retried naming its holder, searches go on, and a dead holder’s lock goes with its session', async () => {
    const mine = tempDir('kb-pg-lock');
    writeFiles(mine, { 'nebula.md': '# Nebula Atlas\n\nThe crab nebula glows after a supernova.' });
    await env().run(pgActivities.indexKnowledgeBase, { path: mine });
    const [k1, k2] = lockKeys(prefix, 'writer');
    // Another machine's writer, as the engine names itself in pg_stat_activity.
    const other = new pg.Client({
      connectionString: PG_URL,
      application_name: 'durable-agent kb: process 4242 on host-b',
    });
    await other.connect();
    try {
      await other.query('SELECT pg_advisory_lock($1, $2)', [k1, k2]);
      expect((await searchWith(pgActivities, 'crab nebula')).data.records[0]?.filename).toBe('nebula.md');
      const err = (await env()
        .run(pgActivities.indexKnowledgeBase, { path: SEED })
        .catch((x: unknown) => x)) as ApplicationFailure;
      expect(err).toBeInstanceOf(ApplicationFailure);
      expect(err.type).toBe('KnowledgeBaseBusy');
      expect(err.nonRetryable).toBe(false);
      expect(err.message).toContain('in use by process 4242 on host-b');
    } finally {
      // The holder's connection ends as a killed process's would; its lock goes with it.
      await other.end();
    }
    const report: IndexReport = await env().run(pgActivities.indexKnowledgeBase, { path: SEED });
    expect(report.totalFiles).toBeGreaterThan(0);
    expect(report.indexedFiles).toBe(report.totalFiles);
    expect((await searchWith(pgActivities, 'espresso sour')).data.records[0]?.filename).toBe(
      'kitchen/espresso.md',
    );
  });

  it('survives concurrent first use: three workers searching empty tables create them once and seed once', async () => {
    const fresh = kbTablePrefix();
    prefixes.push(fresh);
    // Three store objects with pools of their own, as three worker processes would have.
    const workers = [2, 3, 4].map((poolSize) =>
      createKnowledgeBaseActivities(kbConfig({ tablePrefix: fresh, poolSize, lockTimeoutMs: 30_000 })),
    );
    const results = await Promise.all(workers.map((w) => searchWith(w, 'blossom end rot calcium', 1)));
    for (const r of results) expect(r.data.records[0]?.filename).toBe('garden/tomatoes.md');

    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      const counts = await client.query<{
        docs: number;
        chunks: number;
        meta_docs: number;
        meta_chunks: number;
      }>(
        `SELECT (SELECT count(*)::int FROM ${fresh}_documents) AS docs, (SELECT count(*)::int FROM ${fresh}_chunks) AS chunks,
                documents::int AS meta_docs, chunks::int AS meta_chunks FROM ${fresh}_meta`,
      );
      const seedFiles = listDocuments(SEED).length;
      expect(counts.rows[0]).toMatchObject({ docs: seedFiles });
      // The running sums the ranking reads agree with the rows.
      expect(counts.rows[0]!.meta_docs).toBe(counts.rows[0]!.docs);
      expect(counts.rows[0]!.meta_chunks).toBe(counts.rows[0]!.chunks);
    } finally {
      await client.end();
    }
  });

  it('fails for good when the settings cannot work, retries a server that is down, and never shows the URL', async () => {
    const secret = 'hunter2-kb-secret';
    const failureOf = async (url: string) =>
      (await searchWith(createKnowledgeBaseActivities(kbConfig({ url, seed: [] })), 'anything').catch(
        (x: unknown) => x,
      )) as ApplicationFailure;

    const noDb = await failureOf(`postgres://postgres:${secret}@127.0.0.1:5432/kb_no_such_database`);
    expect(noDb).toBeInstanceOf(ApplicationFailure);
    expect(noDb.type).toBe('SearchNotConfigured');
    expect(noDb.nonRetryable).toBe(true);
    expect(noDb.message).toContain('database "kb_no_such_database" does not exist');
    expect(noDb.message).toContain('check search.knowledgeBase.url');

    const down = await failureOf(`postgres://postgres:${secret}@127.0.0.1:1/test`);
    expect(down.type).toBe('SearchUnreachable');
    expect(down.nonRetryable).toBe(false);
    expect(down.message).toContain('PostgreSQL 127.0.0.1:1/test');
    for (const e of [noDb, down]) expect(`${e.message} ${JSON.stringify(e)}`).not.toContain(secret);
  });

  it('checks its settings: a url with engine postgres only, never echoed', () => {
    const problems = (kb: unknown) =>
      KnowledgeBaseConfigSchema.safeParse(kb).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ??
      [];
    expect(problems({ engine: 'postgres' })).toEqual([
      'url: is required with engine "postgres": the database to keep the index in, e.g. "${env:KB_DATABASE_URL}"',
    ]);
    expect(problems({ url: PG_URL })).toEqual([
      'url: is only read by engine "postgres"; add "engine": "postgres" or remove the url',
    ]);
    const wrong = problems({ engine: 'postgres', url: 'mysql://root:sekrit-pw@db/kb' });
    expect(wrong).toEqual([expect.stringMatching(/^url: the URL scheme must be postgres: or postgresql:/)]);
    expect(wrong.join()).not.toContain('sekrit-pw');
    expect(problems({ engine: 'postgres', url: PG_URL, tablePrefix: 'Bad-Prefix' })[0]).toMatch(
      /^tablePrefix: must be lower-case letters/,
    );
  });
});
