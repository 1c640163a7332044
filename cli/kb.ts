/**
 * `durable-agent kb …`: manage the knowledge base from a shell. The commands run the same indexing
 * and search code as the worker's activities, in this process, on the same index: the data folder
 * of the embedded engine, or the PostgreSQL tables every worker shares. Searching takes no lock,
 * so it never waits for a worker or a `kb add`; adding and removing take the writer's lock.
 *
 * Only what a command needs is loaded, and nothing of Temporal: `kb search` is meant to answer in a
 * fraction of a second.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { IndexProgress, KnowledgeBaseHit, KnowledgeBaseWriter } from '../client/knowledge-base';
import {
  kbConfig,
  kbModules as load,
  openKb,
  resolveProjectPath,
  searchArgs,
  withKb,
} from '../client/knowledge-base';
import type { KbOpts } from '../client/knowledge-base';

/** Files below this count finish too fast for a bar to help; a single summary line is enough. */
const BAR_MIN_FILES = 50;

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

async function addAndReport(kb: KnowledgeBaseWriter, target: string, chunkChars: number): Promise<void> {
  const bar = progressBar(process.stderr);
  const started = Date.now();
  const report = await load
    .indexer()
    .indexPath(kb, target, { chunkChars, onProgress: (p) => bar.update(p) })
    .finally(() => bar.done());
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

/** The lines printed for one hit: title, file and score, then the snippet with its matches marked. */
export function formatHit(h: KnowledgeBaseHit, i: number, tty: boolean): string {
  const heading = h.heading ? ` › ${h.heading}` : '';
  // Bold on a terminal; Markdown-style ** elsewhere, which still reads well in a file or a pipe.
  const [open, close] = tty ? ['\x1b[1m', '\x1b[22m'] : ['**', '**'];
  const snippet = load.snippet().markSnippet(h.snippet, open, close);
  return `${i + 1}. ${h.title}${heading}  (${h.filename}, score ${h.score.toFixed(3)})\n   ${snippet}`;
}

/**
 * With DURABLE_AGENT_PARSE_ONLY=1 a command line is checked (command, arguments, options and their
 * values) and the command exits 0 without running: how the README's commands are tested.
 */
export function exitAfterParsingWhenAsked(program: Command): void {
  if (process.env.DURABLE_AGENT_PARSE_ONLY !== '1') return;
  program.hook('preAction', (_program, action) => {
    console.log(`parsed: ${action.name()} ${JSON.stringify(action.args)} ${JSON.stringify(action.opts())}`);
    process.exit(0);
  });
}

/** Adds `kb add`, `kb search`, `kb list`, `kb remove` and `kb status` to the CLI. */
export function registerKbCommands(program: Command): void {
  const kb = program
    .command('kb')
    .description('The knowledge base that knowledge_base_search reads (Markdown, text, HTML)');
  const withDataDir = (cmd: Command) =>
    cmd.option(
      '--data-dir <dir>',
      "index folder of the embedded engine (default: the config's search.knowledgeBase, else .data/kb)",
    );

  withDataDir(
    kb
      .command('add')
      .description('Index a folder or file; re-running re-reads changed files and drops deleted ones')
      .argument('<path>', 'folder or file to add'),
  ).action(async (target: string, o: KbOpts) => {
    const cfg = kbConfig(o);
    const abs = path.resolve(target);
    if (!fs.existsSync(abs))
      throw new Error(
        `kb add ${target}: no such file or folder (${abs}); give a folder or a Markdown, text or HTML file`,
      );
    await withKb(cfg, (k) => addAndReport(k, abs, cfg.chunkChars));
  });

  withDataDir(
    kb
      .command('search')
      .description('Search the knowledge base as the agent would')
      .argument('<query>', 'what to search for')
      .option('-n, --max-results <n>', 'results to show, 1–100', maxResults, 5)
      .option('--json', 'print the hits as JSON'),
  ).action(async (query: string, o: KbOpts & { maxResults: number; json?: boolean }) => {
    const args = { data: searchArgs(query, o.maxResults) };
    const cfg = kbConfig(o);
    const index = openKb(cfg);
    if ((await index.stats()).chunks === 0) {
      await withKb(cfg, (k) =>
        load.indexer().seedIfEmpty(k, cfg.seed.map(resolveProjectPath), async (root) => {
          console.error(`The knowledge base is empty; indexing ${root} first.`);
          await addAndReport(k, root, cfg.chunkChars);
        }),
      );
    }
    const hits = await index.search(args.data.query, args.data.max_results, {
      onFallback: (reason) => console.error(`(lexical ranking only: ${reason})`),
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
    const tty = Boolean(process.stdout.isTTY);
    console.log(hits.map((h, i) => formatHit(h, i, tty)).join('\n'));
  });

  withDataDir(
    kb
      .command('list')
      .description('List the indexed documents: path, chunks and title')
      .option('--json', 'print them as JSON'),
  ).action(async (o: KbOpts & { json?: boolean }) => {
    const docs = await openKb(kbConfig(o)).documents();
    if (o.json) {
      console.log(JSON.stringify(docs, null, 2));
      return;
    }
    if (docs.length === 0) {
      console.log('The knowledge base is empty; add documents with durable-agent kb add <folder>.');
      return;
    }
    console.log(docs.map((d) => `${d.path}  (${d.chunks} chunks)  ${d.title}`).join('\n'));
  });

  withDataDir(
    kb
      .command('remove')
      .description('Remove a document, or every document under a folder, from the index (the files stay)')
      .argument('<path>', 'file or folder as it was added (it may no longer exist)'),
  ).action(async (target: string, o: KbOpts) => {
    const cfg = kbConfig(o);
    const abs = path.resolve(target);
    const removed = await withKb(cfg, async (k) => {
      const n = await k.removeDocuments(await k.documentsUnder(abs));
      await k.commit();
      return n;
    });
    if (removed === 0) {
      console.log(`Nothing indexed at ${abs}; durable-agent kb list shows what is.`);
      process.exitCode = 1;
      return;
    }
    console.log(`${abs}: ${removed} document${removed === 1 ? '' : 's'} removed`);
  });

  withDataDir(kb.command('status').description('Show where the index is and how big it is')).action(
    async (o: KbOpts) => {
      const cfg = kbConfig(o);
      const index = openKb(cfg);
      const s = await index.stats();
      const semantic = cfg.embeddings ? `; semantic recall with ${cfg.embeddings.model}` : '';
      console.log(`${index.where}: ${s.documents} documents, ${s.chunks} chunks${semantic}`);
    },
  );
}
