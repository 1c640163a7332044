/**
 * What a knowledge-base engine offers its users (the search activity, the `kb` commands, the
 * bench), whichever engine holds the index: the embedded one (a folder per machine, see store.ts)
 * or PostgreSQL (tables every worker and the CLI share, see postgres/). Both analyse text the same
 * way and rank with the same BM25F, so they return the same hits in the same shapes.
 */
import type { KnowledgeBaseHit } from './search';
import type { StoredDocument } from './store';

/** Size of the index. */
export interface KnowledgeBaseStats {
  documents: number;
  chunks: number;
}

/** One stored document, as `kb list` shows it. */
export interface DocumentSummary {
  /** Absolute path on the machine that added it: the document's identity. */
  path: string;
  filename: string;
  title: string;
  chunks: number;
}

/**
 * The writer's side of an index, held by one process at a time (the indexer writes through it).
 * Batches are durable when {@link putDocuments} returns; searches see them after {@link commit}
 * at the latest.
 */
export interface KnowledgeBaseWriter {
  /** Documents and chunks stored, including any a search does not see yet. */
  stats(): Promise<KnowledgeBaseStats>;
  /** Content hashes of the stored documents under `root` (a folder or a file), by absolute path. */
  documentHashes(root: string): Promise<Map<string, string>>;
  /** Stores a batch of parsed documents, replacing earlier versions of the same paths. */
  putDocuments(docs: readonly StoredDocument[]): Promise<void>;
  /** Removes documents by absolute path; returns how many were stored. */
  removeDocuments(paths: readonly string[]): Promise<number>;
  /** Paths of the stored documents under a folder (or that file). */
  documentsUnder(folder: string): Promise<string[]>;
  /** Makes what was stored searchable and embeds new chunks when embeddings are configured. */
  commit(signal?: AbortSignal): Promise<void>;
}

/** Options of {@link KnowledgeBaseIndex.search}. */
export interface SearchOptions {
  signal?: AbortSignal;
  /** Told why a search fell back to lexical ranking (vectors missing, provider failing). */
  onFallback?: (reason: string) => void;
}

/** A knowledge base as its users see it. */
export interface KnowledgeBaseIndex {
  readonly engine: 'embedded' | 'postgres';
  /** Where the index lives, for messages: a folder, or a database without user or password. */
  readonly where: string;
  /** Documents and chunks a search sees. */
  stats(): Promise<KnowledgeBaseStats>;
  /** The best `limit` chunks for `query`, semantic neighbours fused in when embeddings are configured. */
  search(query: string, limit: number, opts?: SearchOptions): Promise<KnowledgeBaseHit[]>;
  /** Every stored document, by path. */
  documents(): Promise<DocumentSummary[]>;
  /**
   * Runs `fn` as the index's one writer, after the other writers of this process; throws
   * {@link KnowledgeBaseBusyError} when another process keeps writing past the lock timeout.
   */
  write<T>(fn: (w: KnowledgeBaseWriter) => Promise<T>, opts?: { signal?: AbortSignal }): Promise<T>;
  /** Releases what the index holds (a connection pool); further calls open it again. */
  close(): Promise<void>;
}

/** Another process is writing the index (a `kb add`, or a worker indexing) and did not finish in time. */
export class KnowledgeBaseBusyError extends Error {
  override readonly name = 'KnowledgeBaseBusyError';
  constructor(
    /** Who holds it, e.g. `process 1234` or `process 1234 on host-b`. */
    readonly holder: string,
    readonly where: string,
  ) {
    super(`The knowledge base in ${where} is in use by ${holder}`);
  }
}

/**
 * The index's database failed (the `postgres` engine): `retryable` when trying again may help (the
 * server is down or restarting), not when the settings are wrong (password, database, privileges,
 * tables of another format). The message says where, never the URL.
 */
export class KnowledgeBaseDatabaseError extends Error {
  override readonly name = 'KnowledgeBaseDatabaseError';
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}
