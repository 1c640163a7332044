/**
 * Knowledge-base benchmark: index build time, query latency (p50/p95) and what opening the index
 * costs a fresh process, at 1,000 and 10,000 chunks of synthetic documents, plus the relevance
 * figure on the labelled demo queries (bench/kb-relevance.ts measures documents nobody here wrote).
 *
 *   npx tsx bench/search.ts
 *
 * Synthetic text draws words from a Zipf-like distribution, as natural language does, so common
 * words match thousands of chunks and rare ones a few: both cases the ranking query must handle.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../shared/project-root';
import { indexPath } from '../activities/search/kb/indexer';
import { searchKnowledgeBase } from '../activities/search/kb/service';
import { KnowledgeBase, SNAPSHOT_FILE } from '../activities/search/kb/store';

const CHUNK_CHARS = 1000;
const SECTIONS_PER_DOC = 10;
const QUERIES = 200;

/** Deterministic PRNG (mulberry32), so every run indexes the same corpus. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = [
  'ka',
  'ro',
  'mi',
  'ten',
  'sul',
  'bar',
  'vo',
  'lin',
  'qua',
  'dre',
  'po',
  'zan',
  'fel',
  'ith',
  'gor',
  'um',
];

function vocabulary(size: number, rand: () => number): string[] {
  const words = new Set<string>();
  while (words.size < size) {
    const n = 2 + Math.floor(rand() * 3);
    let w = '';
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(rand() * SYLLABLES.length)];
    words.add(w);
  }
  return [...words];
}

/** Picks word i with probability ∝ 1/(i+1): a Zipf distribution. */
function zipfPicker(words: string[], rand: () => number): () => string {
  const cumulative: number[] = [];
  let sum = 0;
  for (let i = 0; i < words.length; i++) cumulative.push((sum += 1 / (i + 1)));
  return () => {
    const x = rand() * sum;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cumulative[mid] as number) < x) lo = mid + 1;
      else hi = mid;
    }
    return words[lo] as string;
  };
}

/** Writes docs whose sections each fit one chunk, so `chunks` documents × sections land in the index. */
function writeCorpus(dir: string, chunks: number, pick: () => string, rand: () => number): void {
  const sentence = () => {
    const n = 8 + Math.floor(rand() * 10);
    const ws = Array.from({ length: n }, pick);
    return `${ws.join(' ')}.`;
  };
  const docs = Math.ceil(chunks / SECTIONS_PER_DOC);
  for (let d = 0; d < docs; d++) {
    const parts = [`# ${pick()} ${pick()} ${pick()}`];
    for (let s = 0; s < SECTIONS_PER_DOC && d * SECTIONS_PER_DOC + s < chunks; s++) {
      let body = '';
      while (body.length < CHUNK_CHARS * 0.7) body += `${sentence()} `;
      parts.push(`## ${pick()} ${pick()}`, body.trim());
    }
    const sub = path.join(dir, `part-${Math.floor(d / 100)}`);
    fs.mkdirSync(sub, { recursive: true });
    fs.writeFileSync(path.join(sub, `doc-${d}.md`), parts.join('\n\n'));
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function benchSize(chunks: number): Promise<void> {
  const rand = rng(chunks);
  const words = vocabulary(20_000, rand);
  const pick = zipfPicker(words, rand);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `kb-bench-${chunks}-`));
  const docs = path.join(root, 'docs');
  writeCorpus(docs, chunks, pick, rand);

  const kb = await KnowledgeBase.open(path.join(root, 'data'), { lockTimeoutMs: 1000 });
  let t: number;
  try {
    t = performance.now();
    const report = await indexPath(kb, docs, { chunkChars: CHUNK_CHARS });
    const buildMs = performance.now() - t;
    const stats = await kb.stats();
    // What a fresh process (the CLI) pays to open the index: read and parse the snapshot file.
    const snapshotFile = path.join(kb.dir, SNAPSHOT_FILE);
    t = performance.now();
    JSON.parse(fs.readFileSync(snapshotFile, 'utf8'));
    const loadMs = performance.now() - t;
    const snapshotMb = fs.statSync(snapshotFile).size / 1e6;

    // Queries of 2–4 words: common words (many matches) mixed with rarer ones, as real queries are.
    const latencies: number[] = [];
    let withHits = 0;
    for (let q = 0; q < QUERIES; q++) {
      const n = 2 + Math.floor(rand() * 3);
      const query = Array.from({ length: n }, () =>
        rand() < 0.5 ? pick() : (words[Math.floor(rand() * 2000)] as string),
      ).join(' ');
      const start = performance.now();
      const hits = await searchKnowledgeBase(kb.dir, query, 10);
      latencies.push(performance.now() - start);
      if (hits.length > 0) withHits += 1;
    }
    latencies.sort((a, b) => a - b);
    console.log(
      `${String(stats.chunks).padStart(6)} chunks (${report.indexedFiles} files): ` +
        `build ${(buildMs / 1000).toFixed(2)} s (${Math.round(stats.chunks / (buildMs / 1000))} chunks/s), ` +
        `query p50 ${percentile(latencies, 50).toFixed(1)} ms, p95 ${percentile(latencies, 95).toFixed(1)} ms ` +
        `(${QUERIES} queries, ${withHits} with hits); snapshot ${snapshotMb.toFixed(1)} MB, opened in ${loadMs.toFixed(0)} ms`,
    );
  } finally {
    await kb.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

async function relevance(): Promise<void> {
  const labels = JSON.parse(
    fs.readFileSync(path.join(PROJECT_ROOT, 'tests', 'fixtures', 'search', 'kb-relevance.json'), 'utf8'),
  ) as { queries: { query: string; expected: string }[] };
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kb-bench-relevance-'));
  const kb = await KnowledgeBase.open(root, { lockTimeoutMs: 1000 });
  try {
    await indexPath(kb, path.join(PROJECT_ROOT, 'examples', 'kb'), { chunkChars: CHUNK_CHARS });
    let top1 = 0;
    let top3 = 0;
    let reciprocal = 0;
    for (const { query, expected } of labels.queries) {
      const docs = [...new Set((await searchKnowledgeBase(kb.dir, query, 10)).map((h) => h.filename))];
      const pos = docs.indexOf(expected);
      if (pos === 0) top1 += 1;
      if (pos >= 0 && pos < 3) top3 += 1;
      if (pos >= 0) reciprocal += 1 / (pos + 1);
    }
    const n = labels.queries.length;
    const pct = (k: number) => `${((100 * k) / n).toFixed(1)} %`;
    console.log(
      `relevance on ${n} labelled queries over examples/kb: top-3 ${top3}/${n} = ${pct(top3)}, ` +
        `top-1 ${pct(top1)}, MRR ${(reciprocal / n).toFixed(3)}`,
    );
  } finally {
    await kb.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(`knowledge base (BM25F snapshot index), Node ${process.version}, ${os.cpus().length} CPUs`);
  await relevance();
  for (const chunks of [1_000, 10_000]) await benchSize(chunks);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
