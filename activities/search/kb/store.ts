/**
 * The knowledge-base index on disk, in a folder the worker and the CLI share:
 *
 *     kb.lock          held by the one process that writes (see lock.ts)
 *     manifest.json    every document: path → content hash and document file
 *     docs/<id>.json   one parsed and analysed document per file
 *     index.json       the searchable snapshot (snapshot.ts), rebuilt after each indexing run
 *     vectors.*        chunk embeddings, when an embedding provider is configured (vectors.ts)
 *
 * Writing takes the lock; reading does not: readers load the last snapshot, which writers replace
 * atomically. So a search never waits for a `kb add` in another process, and the CLI opens the
 * index by reading one file (tens of milliseconds) instead of starting a database.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Chunk } from './documents';
import type { KnowledgeBaseStats, KnowledgeBaseWriter } from './engine';
import { acquireLock } from './lock';
import type { HeldLock } from './lock';
import type { DocumentRecord, Snapshot } from './snapshot';
import { SNAPSHOT_VERSION, analyzeDocument, buildSnapshot, writeFileAtomic } from './snapshot';

/** A document to store, already parsed. */
export interface StoredDocument {
  /** Absolute path: the document's identity. */
  path: string;
  /** Path relative to the folder it was added from, shown to users and the model. */
  filename: string;
  /** Content hash; an unchanged file is not re-indexed. */
  hash: string;
  title: string;
  chunks: Chunk[];
}

interface Manifest {
  version: number;
  /** Snapshot generation last built; the next build gets one more. */
  generation: number;
  /** Whether documents changed since the snapshot was built. */
  stale: boolean;
  docs: Record<string, { hash: string; file: string; chunks: number }>;
}

/** Called after a snapshot is rebuilt, e.g. to embed new chunks. */
export type SnapshotHook = (dir: string, snapshot: Snapshot, signal?: AbortSignal) => Promise<void>;

const MANIFEST = 'manifest.json';
/** The snapshot file's name in the data folder. */
export const SNAPSHOT_FILE = 'index.json';

function emptyManifest(): Manifest {
  return { version: SNAPSHOT_VERSION, generation: 0, stale: false, docs: {} };
}

function docFileName(docPath: string): string {
  return `${createHash('sha1').update(docPath).digest('hex')}.json`;
}

/** Explains an index folder written by an older build, which this one cannot read. */
function olderFormatError(dir: string): Error {
  return new Error(
    `The knowledge base in ${dir} was built by an older version of durable-agent in another format: ` +
      'delete that folder and add your documents again (durable-agent kb add <folder>).',
  );
}

/**
 * The writable knowledge base. Holds the folder's lock until {@link close}; use
 * {@link KnowledgeBase.open} (or the shared handle in `pool.ts`).
 */
export class KnowledgeBase implements KnowledgeBaseWriter {
  private constructor(
    private manifest: Manifest,
    private readonly lock: HeldLock,
    /** The data folder. */
    readonly dir: string,
    private readonly onSnapshot: SnapshotHook | undefined,
  ) {}

  /** Opens (creating on first use) the knowledge base in `dir`, taking its lock. */
  static async open(
    dir: string,
    opts: { lockTimeoutMs: number; signal?: AbortSignal; onSnapshot?: SnapshotHook },
  ): Promise<KnowledgeBase> {
    fs.mkdirSync(path.join(dir, 'docs'), { recursive: true });
    const lock = await acquireLock(path.join(dir, 'kb.lock'), opts.lockTimeoutMs, opts.signal);
    try {
      const file = path.join(dir, MANIFEST);
      let manifest: Manifest;
      if (fs.existsSync(file)) {
        manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as Manifest;
        if (manifest.version !== SNAPSHOT_VERSION) throw olderFormatError(dir);
      } else {
        if (fs.existsSync(path.join(dir, 'pgdata'))) throw olderFormatError(dir);
        manifest = emptyManifest();
      }
      return new KnowledgeBase(manifest, lock, dir, opts.onSnapshot);
    } catch (err) {
      lock.release();
      throw err;
    }
  }

  /** Releases the lock. */
  async close(): Promise<void> {
    this.lock.release();
  }

  /** Number of documents and chunks stored (including any not yet in the snapshot). */
  async stats(): Promise<KnowledgeBaseStats> {
    const docs = Object.values(this.manifest.docs);
    return { documents: docs.length, chunks: docs.reduce((n, d) => n + d.chunks, 0) };
  }

  /** Hashes of the stored documents under `root`, by absolute path, for skipping unchanged files. */
  async documentHashes(root: string): Promise<Map<string, string>> {
    const under = new Set(await this.documentsUnder(root));
    return new Map(
      Object.entries(this.manifest.docs)
        .filter(([p]) => under.has(p))
        .map(([p, d]) => [p, d.hash]),
    );
  }

  /**
   * Stores a batch of documents, replacing earlier versions of the same paths. The batch is durable
   * when this returns; searches see it after the next {@link commit}.
   */
  async putDocuments(docs: readonly StoredDocument[]): Promise<void> {
    if (docs.length === 0) return;
    for (const doc of docs) {
      const file = docFileName(doc.path);
      writeFileAtomic(path.join(this.dir, 'docs', file), JSON.stringify(analyzeDocument(doc)));
      this.manifest.docs[doc.path] = { hash: doc.hash, file, chunks: doc.chunks.length };
    }
    this.manifest.stale = true;
    this.saveManifest();
  }

  /** Removes documents by absolute path (files deleted since they were added). */
  async removeDocuments(paths: readonly string[]): Promise<number> {
    let removed = 0;
    for (const p of paths) {
      const entry = this.manifest.docs[p];
      if (!entry) continue;
      delete this.manifest.docs[p];
      fs.rmSync(path.join(this.dir, 'docs', entry.file), { force: true });
      removed += 1;
    }
    if (removed) {
      this.manifest.stale = true;
      this.saveManifest();
    }
    return removed;
  }

  /** Paths of stored documents under a folder. */
  async documentsUnder(folder: string): Promise<string[]> {
    const prefix = folder.endsWith(path.sep) ? folder : folder + path.sep;
    return Object.keys(this.manifest.docs).filter((p) => p.startsWith(prefix) || p === folder);
  }

  /**
   * Rebuilds the snapshot when documents changed since the last one, making them searchable.
   * Done once per indexing run (and when a run stops early), not per batch: it reads every
   * document file.
   */
  async commit(signal?: AbortSignal): Promise<void> {
    const snapshotFile = path.join(this.dir, SNAPSHOT_FILE);
    let snapshot: Snapshot | undefined;
    if (this.manifest.stale || !fs.existsSync(snapshotFile)) {
      const records: DocumentRecord[] = [];
      for (const entry of Object.values(this.manifest.docs)) {
        const text = fs.readFileSync(path.join(this.dir, 'docs', entry.file), 'utf8');
        records.push(JSON.parse(text) as DocumentRecord);
      }
      snapshot = buildSnapshot(records, this.manifest.generation + 1);
      writeFileAtomic(snapshotFile, JSON.stringify(snapshot));
      this.manifest.generation = snapshot.generation;
      this.manifest.stale = false;
      this.saveManifest();
    }
    // A cancelled run still gets its lexical snapshot, but does not start embedding.
    if (!this.onSnapshot || signal?.aborted) return;
    snapshot ??= loadSnapshot(this.dir);
    if (snapshot) await this.onSnapshot(this.dir, snapshot, signal);
  }

  private saveManifest(): void {
    writeFileAtomic(path.join(this.dir, MANIFEST), JSON.stringify(this.manifest));
  }
}

interface CachedSnapshot {
  key: string;
  snapshot: Snapshot;
}

const snapshots = new Map<string, CachedSnapshot>();

/**
 * The last snapshot of the knowledge base in `dir`, or undefined when nothing was indexed yet.
 * Kept in memory and re-read only when the file changed, so a worker searches an open index and
 * picks up a `kb add` made by another process at its next search.
 */
export function loadSnapshot(dir: string): Snapshot | undefined {
  const file = path.join(dir, SNAPSHOT_FILE);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    snapshots.delete(dir);
    return undefined;
  }
  const key = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  const cached = snapshots.get(dir);
  if (cached?.key === key) return cached.snapshot;
  const snapshot = JSON.parse(fs.readFileSync(file, 'utf8')) as Snapshot;
  if (snapshot.version !== SNAPSHOT_VERSION) throw olderFormatError(dir);
  snapshots.set(dir, { key, snapshot });
  return snapshot;
}

/** Number of documents and chunks a reader sees (the last snapshot). */
export function snapshotStats(dir: string): KnowledgeBaseStats {
  const snap = loadSnapshot(dir);
  return { documents: snap?.docs.length ?? 0, chunks: snap?.chunks.length ?? 0 };
}
