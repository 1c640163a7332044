/**
 * Adds a folder (or one file) to the knowledge base: lists supported files in a stable order,
 * skips unchanged ones, parses and stores the rest in batches, and drops documents whose files
 * were deleted. The stable order is what makes resuming possible: progress is a position in it.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { hasGenericName, isSupportedDocument, parseDocument } from './documents';
import type { KnowledgeBaseWriter } from './engine';
import type { StoredDocument } from './store';

/** Progress of an indexing run, reported after every batch. */
export interface IndexProgress {
  /** The folder or file being added (absolute). */
  root: string;
  totalFiles: number;
  /** Files handled so far, in listing order; resuming starts here. */
  processedFiles: number;
  /** Files (re)indexed in this run. */
  indexedFiles: number;
  /** Files unchanged since they were indexed. */
  unchangedFiles: number;
  /** Chunks written in this run. */
  chunks: number;
  /** Files that could not be read, with why. */
  failed: { file: string; error: string }[];
}

/** Result of an indexing run. */
export interface IndexReport extends IndexProgress {
  /** Documents removed because their files no longer exist. */
  removedFiles: number;
}

/** Options of {@link indexPath}. */
export interface IndexOptions {
  chunkChars: number;
  /** Position to resume from (a previous run's `processedFiles`). */
  startAt?: number;
  /** Files per transaction. */
  batchFiles?: number;
  onProgress?: (p: IndexProgress) => void | Promise<void>;
  /** Checked between batches; an aborted run keeps the batches already stored. */
  signal?: AbortSignal;
}

/** Folders never worth indexing: dependencies, build output, version control, our own data. */
const SKIPPED_DIRS = new Set(['node_modules', '.git', '.data', 'dist', '.temporal']);

/** Supported files under `root`, sorted, so the same tree always lists in the same order. */
export function listDocuments(root: string): string[] {
  const stat = fs.statSync(root);
  if (stat.isFile()) return isSupportedDocument(root) ? [root] : [];
  const out: string[] = [];
  const walk = (dir: string) => {
    const entries = fs
      .readdirSync(dir, { withFileTypes: true })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.name.startsWith('.') || SKIPPED_DIRS.has(e.name)) continue;
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile() && isSupportedDocument(full)) out.push(full);
    }
  };
  walk(root);
  return out;
}

/**
 * Indexes `root` into `kb`. Re-running on the same folder only re-reads changed files and removes
 * deleted ones, so it doubles as "sync".
 */
export async function indexPath(
  kb: KnowledgeBaseWriter,
  rootArg: string,
  opts: IndexOptions,
): Promise<IndexReport> {
  const root = path.resolve(rootArg);
  const files = listDocuments(root);
  const base = fs.statSync(root).isFile() ? path.dirname(root) : root;
  const known = await kb.documentHashes(root);
  const progress: IndexProgress = {
    root,
    totalFiles: files.length,
    processedFiles: Math.min(Math.max(0, opts.startAt ?? 0), files.length),
    indexedFiles: 0,
    unchangedFiles: 0,
    chunks: 0,
    failed: [],
  };
  await opts.onProgress?.({ ...progress });
  try {
    await indexFiles(kb, files, base, known, progress, opts);
  } finally {
    // Also when cancelled or failed: the batches stored so far become searchable.
    await kb.commit(opts.signal);
  }
  const present = new Set(files);
  const gone = (await kb.documentsUnder(root)).filter((p) => !present.has(p));
  const removedFiles = await kb.removeDocuments(gone);
  await kb.commit(opts.signal);
  return { ...progress, removedFiles };
}

async function indexFiles(
  kb: KnowledgeBaseWriter,
  files: readonly string[],
  base: string,
  known: ReadonlyMap<string, string>,
  progress: IndexProgress,
  opts: IndexOptions,
): Promise<void> {
  const batchFiles = opts.batchFiles ?? 25;
  while (progress.processedFiles < files.length) {
    if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('Indexing was cancelled');
    const batch = files.slice(progress.processedFiles, progress.processedFiles + batchFiles);
    const docs: StoredDocument[] = [];
    for (const file of batch) {
      let content: string;
      try {
        content = fs.readFileSync(file, 'utf8');
      } catch (err) {
        progress.failed.push({ file, error: (err as Error).message });
        continue;
      }
      const hash = createHash('sha256').update(content).digest('hex');
      if (known.get(file) === hash) {
        progress.unchangedFiles += 1;
        continue;
      }
      const filename = path.relative(base, file).split(path.sep).join('/');
      const parsed = parseDocument(filename, content, opts.chunkChars, {
        fallbackTitle:
          packageName(path.dirname(file)) ??
          (hasGenericName(file) ? path.basename(path.dirname(file)) : undefined),
      });
      docs.push({ path: file, filename, hash, title: parsed.title, chunks: parsed.chunks });
    }
    await kb.putDocuments(docs);
    progress.indexedFiles += docs.length;
    progress.chunks += docs.reduce((n, d) => n + d.chunks.length, 0);
    progress.processedFiles += batch.length;
    await opts.onProgress?.({ ...progress, failed: [...progress.failed] });
  }
}

/** The `name` of a package.json in `dir`: the best title for a README that has no heading. */
function packageName(dir: string): string | undefined {
  try {
    const name = (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown })
      .name;
    return typeof name === 'string' && name.trim() ? name.trim() : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Indexes the seed folders when the knowledge base is empty, so a fresh install answers the demo's
 * questions with no setup. Returns whether it indexed anything. Missing seed folders are skipped:
 * an installed package may ship without the examples.
 */
export async function seedIfEmpty(
  kb: KnowledgeBaseWriter,
  seedRoots: readonly string[],
  index: (root: string) => Promise<unknown>,
): Promise<boolean> {
  if ((await kb.stats()).chunks > 0) {
    // A run that died before its last commit left documents the snapshot lacks.
    await kb.commit();
    return false;
  }
  let seeded = false;
  for (const root of seedRoots) {
    if (!fs.existsSync(root)) continue;
    await index(root);
    seeded = true;
  }
  return seeded;
}
