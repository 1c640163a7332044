/**
 * `durable-agent kb …`: manage the local knowledge base from a shell. The commands run the same
 * indexing and search code as the worker's activities, in this process, on the same data folder
 * (the folder's lock keeps the two from writing at once).
 */
import path from 'node:path';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { formatZodIssues } from '../shared/tools/define';
import { KnowledgeBaseSearchArgs } from '../shared/tools/search';
import type { KnowledgeBaseConfig } from '../activities/search/config';
import { resolveProjectPath } from '../activities/search/config';
import type { IndexProgress } from '../activities/search/kb/indexer';
import type { KnowledgeBase } from '../activities/search/kb/store';
import { loadWorkerConfig } from '../workers/config';
import type * as KbPool from '../activities/search/kb/pool';
import type * as KbLock from '../activities/search/kb/lock';
import type * as KbIndexer from '../activities/search/kb/indexer';

interface KbOpts {
  dataDir?: string;
}

/** Files below this count finish too fast for a bar to help; a single summary line is enough. */
const BAR_MIN_FILES = 50;

function kbConfig(o: KbOpts): KnowledgeBaseConfig & { dir: string } {
  const cfg = loadWorkerConfig().search.knowledgeBase;
  // The CLI closes the index as soon as it is done, so a running worker can take the lock back.
  return {
    ...cfg,
    idleCloseMs: 0,
    dir: o.dataDir ? path.resolve(o.dataDir) : resolveProjectPath(cfg.dataDir),
  };
}

async function withKb<T>(
  cfg: ReturnType<typeof kbConfig>,
  fn: (kb: KnowledgeBase) => Promise<T>,
): Promise<T> {
  // The index code is loaded by the kb commands only, not by every CLI start.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
  const { withKnowledgeBase } = require('../activities/search/kb/pool') as typeof KbPool;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
  const { LockBusyError } = require('../activities/search/kb/lock') as typeof KbLock;
  try {
    return await withKnowledgeBase(
      cfg.dir,
      { lockTimeoutMs: cfg.lockTimeoutMs, idleCloseMs: 0, exclusive: true },
      fn,
    );
  } catch (err) {
    if (err instanceof LockBusyError) {
      throw new Error(
        `The knowledge base in ${cfg.dir} is in use by process ${err.holder} (a worker mid-search or another kb command); try again in a moment.`,
      );
    }
    throw err;
  }
}

/**
 * A one-line progress bar on stderr for terminals, redrawn in place; silent elsewhere (CI logs
 * would fill with carriage returns), where the final summary says it all.
 */
function progressBar(stream: NodeJS.WriteStream): { update(p: IndexProgress): void; done(): void } {
  let drawn = false;
  return {
    update(p) {
      if (!stream.isTTY || p.totalFiles < BAR_MIN_FILES) return;
      const width = 30;
      const ratio = p.totalFiles === 0 ? 1 : p.processedFiles / p.totalFiles;
      const filled = Math.round(ratio * width);
      stream.write(
        `\r[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${p.processedFiles}/${p.totalFiles} files, ${p.chunks} chunks`,
      );
      drawn = true;
    },
    done() {
      if (drawn) stream.write('\n');
    },
  };
}

async function addAndReport(kb: KnowledgeBase, target: string, chunkChars: number): Promise<void> {
  const bar = progressBar(process.stderr);
  const started = Date.now();
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
  const { indexPath } = require('../activities/search/kb/indexer') as typeof KbIndexer;
  const report = await indexPath(kb, target, { chunkChars, onProgress: (p) => bar.update(p) }).finally(() =>
    bar.done(),
  );
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  console.log(
    `${report.root}: ${report.indexedFiles} indexed (${report.chunks} chunks), ${report.unchangedFiles} unchanged, ` +
      `${report.removedFiles} removed, ${report.failed.length} failed, in ${secs} s`,
  );
  for (const f of report.failed) console.log(`  failed: ${f.file}: ${f.error}`);
}

function maxResults(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100)
    throw new InvalidArgumentError('must be a whole number from 1 to 100');
  return n;
}

/** Adds `kb add`, `kb search` and `kb status` to the CLI. */
export function registerKbCommands(program: Command): void {
  const kb = program
    .command('kb')
    .description('The local knowledge base that knowledge_base_search reads (Markdown, text, HTML)');
  const withDataDir = (cmd: Command) =>
    cmd.option(
      '--data-dir <dir>',
      'index folder (default: search.knowledgeBase.dataDir of the config, .data/kb)',
    );

  withDataDir(
    kb
      .command('add')
      .description('Index a folder or file; re-running re-reads changed files and drops deleted ones')
      .argument('<path>', 'folder or file to add'),
  ).action(async (target: string, o: KbOpts) => {
    const cfg = kbConfig(o);
    const abs = path.resolve(target);
    await withKb(cfg, (k) => addAndReport(k, abs, cfg.chunkChars));
  });

  withDataDir(
    kb
      .command('search')
      .description('Search the knowledge base as the agent would')
      .argument('<query>', 'what to search for')
      .option('-n, --max-results <n>', 'results to show, 1–100', maxResults, 5)
      .option('--json', 'print the full records as JSON'),
  ).action(async (query: string, o: KbOpts & { maxResults: number; json?: boolean }) => {
    const args = KnowledgeBaseSearchArgs.safeParse({ query, max_results: o.maxResults });
    if (!args.success) throw new Error(formatZodIssues(args.error));
    const cfg = kbConfig(o);
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
    const { seedIfEmpty } = require('../activities/search/kb/indexer') as typeof KbIndexer;
    const hits = await withKb(cfg, async (k) => {
      await seedIfEmpty(k, cfg.seed.map(resolveProjectPath), async (root) => {
        console.error(`The knowledge base is empty; indexing ${root} first.`);
        await addAndReport(k, root, cfg.chunkChars);
      });
      return k.search(args.data.query, args.data.max_results);
    });
    if (o.json) {
      console.log(JSON.stringify(hits, null, 2));
      return;
    }
    if (hits.length === 0) {
      console.log(`No results for "${args.data.query}". Try a shorter or broader query.`);
      process.exitCode = 1;
      return;
    }
    hits.forEach((h, i) => {
      const heading = h.heading ? ` › ${h.heading}` : '';
      const snippet = h.text.replace(/\s+/g, ' ');
      console.log(`${i + 1}. ${h.title}${heading}  (${h.filename}, score ${h.score.toFixed(3)})`);
      console.log(`   ${snippet.length > 200 ? `${snippet.slice(0, 200)}…` : snippet}`);
    });
  });

  withDataDir(kb.command('status').description('Show where the index is and how big it is')).action(
    async (o: KbOpts) => {
      const cfg = kbConfig(o);
      const s = await withKb(cfg, (k) => k.stats());
      console.log(`${cfg.dir}: ${s.documents} documents, ${s.chunks} chunks`);
    },
  );
}
