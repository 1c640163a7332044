/**
 * Opening the configured knowledge base: the embedded engine (a folder) or PostgreSQL, each
 * loaded only when chosen, so `kb search` on a folder loads no database driver.
 */
import type * as Embeddings from './embeddings';
import type { EmbeddingsSettings } from './embeddings';
import { EmbeddedKnowledgeBase } from './embedded';
import type { KnowledgeBaseIndex } from './engine';
import { closeAllKnowledgeBases } from './pool';
import type * as PostgresEngine from './postgres/knowledge-base';

/** What opening a knowledge base needs of its settings (`search.knowledgeBase`, paths resolved). */
export interface KnowledgeBaseSettings {
  engine: 'embedded' | 'postgres';
  /** The embedded engine's folder, absolute. */
  dir: string;
  /** The postgres engine's database. */
  url?: string | undefined;
  tablePrefix: string;
  poolSize: number;
  lockTimeoutMs: number;
  embeddings?: EmbeddingsSettings | undefined;
}

/**
 * PostgreSQL indexes open in this process, one per database, tables and embedder, so the search
 * activity, indexing and a CLI command in one process share a connection pool.
 */
const opened = new Map<string, KnowledgeBaseIndex>();

/** The knowledge base these settings name. */
export function openKnowledgeBase(
  s: KnowledgeBaseSettings,
  fetchImpl: typeof fetch = fetch,
): KnowledgeBaseIndex {
  const embedder = s.embeddings
    ? // eslint-disable-next-line @typescript-eslint/no-require-imports -- its client loads only when configured
      (require('./embeddings') as typeof Embeddings).createEmbedder(s.embeddings, fetchImpl)
    : undefined;
  if (s.engine === 'embedded') {
    return new EmbeddedKnowledgeBase({ dir: s.dir, lockTimeoutMs: s.lockTimeoutMs, embedder });
  }
  if (!s.url) throw new Error('search.knowledgeBase.url is required with engine "postgres"');
  const key = JSON.stringify([s.url, s.tablePrefix, s.poolSize, s.lockTimeoutMs, embedder?.key ?? null]);
  let kb = opened.get(key);
  if (!kb) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the driver loads only when chosen
    const { PostgresKnowledgeBase } = require('./postgres/knowledge-base') as typeof PostgresEngine;
    kb = new PostgresKnowledgeBase({
      url: s.url,
      tablePrefix: s.tablePrefix,
      poolSize: s.poolSize,
      lockTimeoutMs: s.lockTimeoutMs,
      embedder,
    });
    opened.set(key, kb);
  }
  return kb;
}

/** Closes every open knowledge base (worker shutdown, the end of a command or a test). */
export async function closeKnowledgeBases(): Promise<void> {
  const all = [...opened.values()];
  opened.clear();
  await Promise.all([closeAllKnowledgeBases(), ...all.map((kb) => kb.close().catch(() => undefined))]);
}
