/**
 * The knowledge base on both engines, the embedded one (a folder) and PostgreSQL (the machine's
 * server, tables under this file's own prefix): first-use seeding, relevance on labelled queries,
 * Chinese and Japanese queries, incremental re-indexing, heartbeats and resume, cancellation, the
 * CLI; then the embedded folder's lock file. What PostgreSQL does about other processes is in
 * kb-postgres.test.ts.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { applyCitations, createCitationState, noResultsMessage } from '../../shared/citations';
import type { ToolResult } from '../../shared/tools/define';
import type { KnowledgeBaseConfig } from '../../activities/search/config';
import { SearchConfigSchema } from '../../activities/search/config';
import { createKnowledgeBaseActivities } from '../../activities/search/knowledge-base';
import type { IndexReport } from '../../activities/search/kb/indexer';
import { closeKnowledgeBases } from '../../activities/search/kb/open';
import { KnowledgeBase } from '../../activities/search/kb/store';
import { LockBusyError } from '../../activities/search/kb/lock';
import { registerKbCommands } from '../../cli/kb';
import { PROJECT_ROOT } from '../../shared/project-root';
import {
  PG_URL,
  dropKbTables,
  type KbSearchResult,
  kbActivityEnv as env,
  kbTablePrefix,
  searchKb as searchWith,
  writeFiles,
  writeKbConfigFile,
} from '../../testkit/knowledge-base';
import { tempDir } from '../../testkit/temporal';

const LABELS = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'search', 'kb-relevance.json'), 'utf8'),
) as { queries: { query: string; expected: string }[] };

const ENGINES = ['embedded', 'postgres'] as const;
type Engine = (typeof ENGINES)[number];

const SEED = path.join(PROJECT_ROOT, 'examples', 'kb');
const dataDir = tempDir('kb-data');
const prefix = kbTablePrefix();
const configDir = tempDir('kb-config');
/** The worker config file of the postgres engine, for the CLI (in this process and in children). */
const configFile = writeKbConfigFile(configDir, prefix, { seed: [SEED] });

function kbConfig(engine: Engine, extra: Record<string, unknown> = {}): KnowledgeBaseConfig {
  return SearchConfigSchema.parse({
    knowledgeBase:
      engine === 'embedded'
        ? { dataDir, seed: [SEED], lockTimeoutMs: 500, ...extra }
        : { engine, url: PG_URL, tablePrefix: prefix, seed: [SEED], lockTimeoutMs: 500, ...extra },
  }).knowledgeBase;
}

const activitiesOf = {
  embedded: createKnowledgeBaseActivities(kbConfig('embedded')),
  postgres: createKnowledgeBaseActivities(kbConfig('postgres')),
};

afterAll(async () => {
  await closeKnowledgeBases();
  await dropKbTables(prefix);
});

describe.each(ENGINES)('the %s engine', (engine) => {
  const activities = activitiesOf[engine];
  const search = (query: string, max_results = 5) => searchWith(activities, query, max_results);

  describe('knowledge_base_search', () => {
    it('builds the demo index on first use and returns cited-ready records with titles and file names', async () => {
      const beats: unknown[] = [];
      const e = env();
      e.on('heartbeat', (d: unknown) => beats.push(d));
      const result: ToolResult = await e.run(activities.knowledge_base_search, {
        toolCallId: 't',
        args: { query: 'blossom end rot calcium', max_results: 3 },
      });
      const r = result as KbSearchResult;

      expect(beats.length).toBeGreaterThan(0);
      const top = r.data.records[0]!;
      expect(top).toMatchObject({
        title: 'Growing Tomatoes › Blossom end rot',
        filename: 'garden/tomatoes.md',
        source_type: 'file',
        sign: 'a',
        search_type: 'knowledge_base_search',
        published_date: null,
      });
      expect(top.url).toMatch(/^file:\/\/.*\/examples\/kb\/garden\/tomatoes\.md#chunk-\d+$/);
      expect(top.text).toMatch(/calcium shortage/);
      expect(top.score_details).toMatchObject({ rank: 1 });
      expect(r.content).toMatch(/^Found \d results for "blossom end rot calcium"/);
    });

    it(`puts the right document in the top 3 for at least 90 % of ${LABELS.queries.length} labelled queries`, async () => {
      let top3 = 0;
      let top1 = 0;
      const misses: string[] = [];
      for (const { query, expected } of LABELS.queries) {
        const r = await search(query, 10);
        const docs = [...new Set(r.data.records.map((x) => x.filename))];
        const pos = docs.indexOf(expected);
        if (pos === 0) top1 += 1;
        if (pos >= 0 && pos < 3) top3 += 1;
        else misses.push(`${query} → ${expected} (got ${docs.slice(0, 3).join(', ')})`);
      }
      const n = LABELS.queries.length;
      console.log(
        `knowledge base relevance: top-3 ${top3}/${n} = ${((100 * top3) / n).toFixed(1)} %, ` +
          `top-1 ${top1}/${n} = ${((100 * top1) / n).toFixed(1)} %${misses.length ? `\nmisses:\n${misses.join('\n')}` : ''}`,
      );
      expect(n).toBeGreaterThanOrEqual(20);
      expect(top3 / n).toBeGreaterThanOrEqual(0.9);
    });

    it('answers a query that matches nothing with advice to broaden it', async () => {
      const r = await search('zyxwvut qqqq');
      expect(r.data.records).toEqual([]);
      expect(r.content).toBe(noResultsMessage('zyxwvut qqqq'));
      // Stop words alone carry no search terms: the same advice, not an error.
      expect((await search('the and of')).data.records).toEqual([]);
    });

    it('feeds the citation module: two searches are numbered a1… and continue without repeats', async () => {
      const first = applyCitations(
        createCitationState(),
        (await search('sourdough starter feeding', 2)).data.records,
      );
      const second = applyCitations(
        first.state,
        (await search('espresso grind extraction time', 2)).data.records,
      );
      const marks = [...first.records, ...second.records].map((r) => `${r.sign}${r.cite_index}`);
      expect(marks).toEqual(['a1', 'a2', 'a3', 'a4']);
    });
    it('finds Chinese and Japanese passages by Chinese and Japanese queries (CJK bigrams)', async () => {
      const folder = tempDir('kb-cjk');
      writeFiles(folder, {
        'orchid-zh.md': '# 兰花养护\n\n兰花每周浇水一次，把树皮浸泡十分钟，然后让多余的水流走。',
        'bonsai-ja.md': '# 盆栽の手入れ\n\n松の盆栽は春に剪定します。芽摘みは五月に行います。',
        'orchid-en.md': '# Orchid care\n\nWater orchids weekly by soaking the bark for ten minutes.',
      });
      await env().run(activities.indexKnowledgeBase, { path: folder });
      const zh = (await search('兰花浇水', 3)).data.records;
      expect(zh[0]).toMatchObject({ filename: 'orchid-zh.md', title: '兰花养护' });
      expect(zh.map((r) => r.filename)).not.toContain('bonsai-ja.md');
      const ja = (await search('盆栽の剪定', 3)).data.records;
      expect(ja[0]?.filename).toBe('bonsai-ja.md');
      // One character alone still finds the passages that hold it.
      expect((await search('松', 3)).data.records[0]?.filename).toBe('bonsai-ja.md');
    });
  });

  describe('indexKnowledgeBase', () => {
    const docs = tempDir('kb-docs');

    it('indexes a folder, skips unchanged files, re-reads changed ones and drops deleted ones', async () => {
      writeFiles(docs, {
        'alpha.md': '# Alpha Protocol\n\nThe alpha protocol uses quasar beacons.',
        'beta.txt': 'Beta Notes\n\nBeta notes mention nebula lanterns.',
        'sub/gamma.html':
          '<html><head><title>Gamma</title></head><body><p>Gamma covers pulsar clocks.</p></body></html>',
        'ignored.pdf': 'not supported',
      });
      const run = (): Promise<IndexReport> => env().run(activities.indexKnowledgeBase, { path: docs });
      const first = await run();
      expect(first).toMatchObject({ totalFiles: 3, indexedFiles: 3, unchangedFiles: 0, removedFiles: 0 });
      expect((await search('pulsar clocks')).data.records[0]?.filename).toBe('sub/gamma.html');

      fs.writeFileSync(
        path.join(docs, 'alpha.md'),
        '# Alpha Protocol\n\nThe alpha protocol now uses magnetar sails.',
      );
      fs.rmSync(path.join(docs, 'beta.txt'));
      const second = await run();
      expect(second).toMatchObject({ totalFiles: 2, indexedFiles: 1, unchangedFiles: 1, removedFiles: 1 });
      expect((await search('magnetar sails')).data.records[0]?.filename).toBe('alpha.md');
      expect((await search('quasar beacons')).data.records).toEqual([]);
      expect((await search('nebula lanterns')).data.records).toEqual([]);
    });

    it('heartbeats its position and resumes from a previous attempt’s heartbeat', async () => {
      const folder = tempDir('kb-resume');
      const files: Record<string, string> = {};
      for (let i = 0; i < 30; i++)
        files[`doc-${String(i).padStart(2, '0')}.md`] = `# Doc ${i}\n\nResume marker ${i}.`;
      writeFiles(folder, files);
      const beats: { root: string; processedFiles: number }[] = [];
      const e = env({ heartbeatDetails: { root: folder, processedFiles: 25 } });
      e.on('heartbeat', (d: { root: string; processedFiles: number }) => beats.push(d));
      const report: IndexReport = await e.run(activities.indexKnowledgeBase, { path: folder });
      expect(beats[0]).toEqual({ root: folder, processedFiles: 25 });
      expect(beats.at(-1)).toEqual({ root: folder, processedFiles: 30 });
      expect(report.indexedFiles).toBe(5);
    });

    it('stops between batches when cancelled, keeping the batches already stored', async () => {
      const folder = tempDir('kb-cancel');
      const files: Record<string, string> = {};
      for (let i = 0; i < 60; i++)
        files[`c-${String(i).padStart(2, '0')}.txt`] = `Cancel test ${i} zircon${i}`;
      writeFiles(folder, files);
      const e = env();
      e.on('heartbeat', (d: { processedFiles: number }) => {
        if (d.processedFiles >= 25) e.cancel();
      });
      await expect(e.run(activities.indexKnowledgeBase, { path: folder })).rejects.toBeInstanceOf(
        CancelledFailure,
      );
      expect((await search('zircon3')).data.records[0]?.filename).toBe('c-03.txt');
      expect((await search('zircon59')).data.records).toEqual([]);
    });

    it('refuses a path that does not exist, finally', async () => {
      const err = (await env()
        .run(activities.indexKnowledgeBase, { path: '/no/such/folder' })
        .catch((x: unknown) => x)) as ApplicationFailure;
      expect(err).toBeInstanceOf(ApplicationFailure);
      expect(err.type).toBe('KnowledgeBasePathNotFound');
      expect(err.nonRetryable).toBe(true);
    });
  });

  describe('durable-agent kb', () => {
    async function cli(...args: string[]): Promise<string> {
      // Commander reports usage errors on stderr before throwing; the test reads the thrown error.
      const program = new Command().exitOverride().configureOutput({ writeErr: () => undefined });
      registerKbCommands(program);
      const lines: string[] = [];
      const log = jest
        .spyOn(console, 'log')
        .mockImplementation((...a: unknown[]) => void lines.push(a.join(' ')));
      try {
        // The embedded engine is picked by its folder; the postgres one by the worker's config file.
        if (engine === 'postgres')
          Object.assign(process.env, { DURABLE_AGENT_CONFIG: configFile, KB_DATABASE_URL: PG_URL });
        await program.parseAsync([
          'node',
          'durable-agent',
          ...args,
          ...(engine === 'embedded' ? ['--data-dir', dataDir] : []),
        ]);
      } finally {
        delete process.env.DURABLE_AGENT_CONFIG;
        log.mockRestore();
      }
      return lines.join('\n');
    }

    it('adds a folder and searches it, printing titles, files and snippets with the matches marked', async () => {
      const folder = tempDir('kb-cli');
      writeFiles(folder, {
        'orchids.md': '# Orchid Care\n\n## Watering\n\nWater orchids weekly by soaking the bark.',
      });
      expect(await cli('kb', 'add', folder)).toMatch(
        /: 1 indexed \(1 chunks\), 0 unchanged, 0 removed, 0 failed, in [\d.]+ s/,
      );
      const out = await cli('kb', 'search', 'how often to water orchids', '-n', '1');
      expect(out).toMatch(
        /^1\. Orchid Care › Watering {2}\(orchids\.md, score [\d.]+\)\n {3}\*\*Water\*\* \*\*orchids\*\* weekly/,
      );
      expect(await cli('kb', 'status')).toMatch(
        engine === 'embedded'
          ? /: \d+ documents, \d+ chunks$/
          : new RegExp(
              `^PostgreSQL 127\\.0\\.0\\.1:5432/test \\(tables ${prefix}_\\*\\): \\d+ documents, \\d+ chunks$`,
            ),
      );
      expect(await cli('kb', 'list')).toContain(
        `${path.join(folder, 'orchids.md')}  (1 chunks)  Orchid Care`,
      );
      expect(await cli('kb', 'remove', folder)).toBe(`${folder}: 1 document removed`);
      expect(await cli('kb', 'list')).not.toContain('orchids.md');
      expect(await cli('kb', 'search', 'how often to water orchids', '-n', '5')).not.toContain('(orchids.md');
      process.exitCode = undefined;
    });

    it('rejects an empty query and an out-of-range result count clearly', async () => {
      await expect(cli('kb', 'search', '  ')).rejects.toThrow(
        'query: query must not be empty: give the words to search for',
      );
      await expect(cli('kb', 'search', 'x', '-n', '500')).rejects.toThrow(
        /must be a whole number from 1 to 100/,
      );
    });
  });
});

describe('the embedded engine shared between processes', () => {
  let holder: ChildProcess | undefined;
  afterEach(() => {
    holder?.kill();
    holder = undefined;
  });

  it('searches while another process writes, reports that writer to indexing, and takes over a dead one’s lock', async () => {
    await closeKnowledgeBases();
    holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    const lockFile = path.join(dataDir, 'kb.lock');
    fs.writeFileSync(lockFile, String(holder.pid));

    // Searches read the last snapshot: a writer elsewhere does not hold them up.
    expect((await searchWith(activitiesOf.embedded, 'espresso sour')).data.records[0]?.filename).toBe(
      'kitchen/espresso.md',
    );
    await expect(KnowledgeBase.open(dataDir, { lockTimeoutMs: 300 })).rejects.toBeInstanceOf(LockBusyError);
    const err = (await env()
      .run(activitiesOf.embedded.indexKnowledgeBase, { path: SEED })
      .catch((x: unknown) => x)) as ApplicationFailure;
    expect(err.type).toBe('KnowledgeBaseBusy');
    expect(err.nonRetryable).toBe(false);
    expect(err.message).toContain(`process ${holder.pid}`);

    holder.kill('SIGKILL');
    await new Promise((resolve) => holder!.once('exit', resolve));
    const report: IndexReport = await env().run(activitiesOf.embedded.indexKnowledgeBase, {
      path: SEED,
    });
    expect(report.indexedFiles + report.unchangedFiles).toBe(report.totalFiles);
    await closeKnowledgeBases();
    expect(fs.existsSync(lockFile)).toBe(false);
  });
});
