/**
 * The embedded engine behind the {@link KnowledgeBaseIndex} interface: a folder on this machine
 * (store.ts), searched from its last snapshot without a lock, written by one process at a time.
 */
import type { Embedder } from './embeddings';
import type {
  DocumentSummary,
  KnowledgeBaseIndex,
  KnowledgeBaseStats,
  KnowledgeBaseWriter,
  SearchOptions,
} from './engine';
import { KnowledgeBaseBusyError } from './engine';
import { LockBusyError } from './lock';
import { withKnowledgeBase } from './pool';
import type { KnowledgeBaseHit } from './search';
import { searchKnowledgeBase, vectorHook } from './service';
import { loadSnapshot, snapshotStats } from './store';

/** Settings of the embedded engine. */
export interface EmbeddedSettings {
  /** The index folder (absolute). */
  dir: string;
  lockTimeoutMs: number;
  embedder?: Embedder | undefined;
}

/** The knowledge base in a folder of this machine. */
export class EmbeddedKnowledgeBase implements KnowledgeBaseIndex {
  readonly engine = 'embedded';
  readonly where: string;

  constructor(private readonly settings: EmbeddedSettings) {
    this.where = settings.dir;
  }

  async stats(): Promise<KnowledgeBaseStats> {
    return snapshotStats(this.settings.dir);
  }

  search(query: string, limit: number, opts: SearchOptions = {}): Promise<KnowledgeBaseHit[]> {
    return searchKnowledgeBase(this.settings.dir, query, limit, {
      ...opts,
      embedder: this.settings.embedder,
    });
  }

  async documents(): Promise<DocumentSummary[]> {
    const snap = loadSnapshot(this.settings.dir);
    if (!snap) return [];
    const chunks = new Array<number>(snap.docs.length).fill(0);
    for (const c of snap.chunks) chunks[c.d] = (chunks[c.d] ?? 0) + 1;
    return snap.docs.map((d, i) => ({
      path: d.path,
      filename: d.filename,
      title: d.title,
      chunks: chunks[i] ?? 0,
    }));
  }

  async write<T>(
    fn: (w: KnowledgeBaseWriter) => Promise<T>,
    opts: { signal?: AbortSignal } = {},
  ): Promise<T> {
    try {
      return await withKnowledgeBase(
        this.settings.dir,
        {
          lockTimeoutMs: this.settings.lockTimeoutMs,
          ...(opts.signal ? { signal: opts.signal } : {}),
          onSnapshot: vectorHook(this.settings.embedder),
        },
        fn,
      );
    } catch (err) {
      if (err instanceof LockBusyError) throw new KnowledgeBaseBusyError(`process ${err.holder}`, this.where);
      throw err;
    }
  }

  async close(): Promise<void> {
    // Writers release the folder's lock when they finish; readers hold nothing.
  }
}
