import { pathToFileURL } from 'node:url';
import fs from 'node:fs';
import { Context } from '@temporalio/activity';
import type { SearchToolData, UncitedSearchRecord } from '../../shared/citations';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';
import type { KnowledgeBaseSearchArgs } from '../../shared/tools/search';
import { KNOWLEDGE_BASE_SIGN } from '../../shared/tools/search';
import type { KnowledgeBaseConfig } from './config';
import { pendingCitationContent } from './content';
import { resolveProjectPath } from './config';
import { createEmbedder } from './kb/embeddings';
import type { IndexProgress, IndexReport } from './kb/indexer';
import { indexPath, seedIfEmpty } from './kb/indexer';
import { LockBusyError } from './kb/lock';
import { withKnowledgeBase } from './kb/pool';
import type { KnowledgeBaseHit } from './kb/search';
import { searchKnowledgeBase, vectorHook } from './kb/service';
import type { KnowledgeBase } from './kb/store';
import { snapshotStats } from './kb/store';
import { searchFailure } from './web/http';

/** Input of the `indexKnowledgeBase` activity. */
export interface IndexKnowledgeBaseInput {
  /** Folder or file to add; relative paths are taken from the project folder. */
  path: string;
}

/** Heartbeat details of `indexKnowledgeBase`: where a retry resumes. */
interface IndexHeartbeat {
  root: string;
  processedFiles: number;
}

/** The knowledge-base activities, bound to the worker's knowledge-base settings. */
export interface KnowledgeBaseActivities {
  knowledge_base_search: (input: ToolActivityInput<KnowledgeBaseSearchArgs>) => Promise<ToolResult>;
  indexKnowledgeBase: (input: IndexKnowledgeBaseInput) => Promise<IndexReport>;
}

/** Turns a chunk hit into the shared search record (cite index still to be assigned by the workflow). */
export function knowledgeBaseRecord(hit: KnowledgeBaseHit, rank: number): UncitedSearchRecord {
  const details: Record<string, string | number> = { rank, chunk: hit.chunkNo, ranking: hit.ranking };
  if (hit.lexicalRank !== undefined) details.lexical_rank = hit.lexicalRank;
  if (hit.semanticRank !== undefined) details.semantic_rank = hit.semanticRank;
  return {
    title: hit.heading ? `${hit.title} › ${hit.heading}` : hit.title,
    url: `${pathToFileURL(hit.path).href}#chunk-${hit.chunkNo}`,
    text: hit.text,
    published_date: null,
    source_type: 'file',
    filename: hit.filename,
    score: Math.round(hit.score * 10_000) / 10_000,
    score_details: details,
    search_type: 'knowledge_base_search',
    sign: KNOWLEDGE_BASE_SIGN,
  };
}

/**
 * Creates `knowledge_base_search` and `indexKnowledgeBase`. Searches read the last snapshot of the
 * index, kept in memory between calls and re-read when another process changed it; writers share
 * one handle per process, so they never fight over the folder's lock within one worker.
 */
export function createKnowledgeBaseActivities(
  cfg: KnowledgeBaseConfig,
  fetchImpl: typeof fetch = fetch,
): KnowledgeBaseActivities {
  const dataDir = resolveProjectPath(cfg.dataDir);
  const embedder = cfg.embeddings ? createEmbedder(cfg.embeddings, fetchImpl) : undefined;

  /** Runs `fn` on the writable index, turning "another process holds it" into a retryable failure. */
  async function write<T>(fn: (kb: KnowledgeBase) => Promise<T>): Promise<T> {
    const signal = Context.current().cancellationSignal;
    try {
      return await withKnowledgeBase(
        dataDir,
        { lockTimeoutMs: cfg.lockTimeoutMs, signal, onSnapshot: vectorHook(embedder) },
        fn,
      );
    } catch (err) {
      if (err instanceof LockBusyError) {
        throw searchFailure(
          'KnowledgeBaseBusy',
          `The knowledge base in ${dataDir} is in use by process ${err.holder} (a \`kb add\` still running?); retrying.`,
          [],
        );
      }
      throw err;
    }
  }

  /** Indexes one folder, heartbeating progress and resuming from a previous attempt's heartbeat. */
  async function indexWithHeartbeats(kb: KnowledgeBase, root: string): Promise<IndexReport> {
    const ctx = Context.current();
    const details = ctx.info.heartbeatDetails as IndexHeartbeat | undefined;
    const startAt = details?.root === root ? details.processedFiles : 0;
    return indexPath(kb, root, {
      chunkChars: cfg.chunkChars,
      startAt,
      signal: ctx.cancellationSignal,
      onProgress: (p: IndexProgress) => ctx.heartbeat({ root: p.root, processedFiles: p.processedFiles }),
    });
  }

  return {
    async knowledge_base_search({ args }) {
      const ctx = Context.current();
      if (snapshotStats(dataDir).chunks === 0) {
        // Exclusive, so concurrent first searches seed once: the second sees a filled index.
        await write((kb) =>
          seedIfEmpty(kb, cfg.seed.map(resolveProjectPath), (root) => indexWithHeartbeats(kb, root)),
        );
        ctx.heartbeat();
      }
      const hits = await searchKnowledgeBase(dataDir, args.query, args.max_results, {
        embedder,
        signal: ctx.cancellationSignal,
        onFallback: (reason) => {
          ctx.log.warn(`knowledge_base_search ranked lexically only: ${reason}`);
        },
      });
      const records = hits.map((h, i) => knowledgeBaseRecord(h, i + 1));
      const data: SearchToolData = { records };
      return { content: pendingCitationContent(args.query, records.length), data };
    },

    async indexKnowledgeBase({ path: p }) {
      const root = resolveProjectPath(p);
      if (!fs.existsSync(root)) {
        throw searchFailure(
          'KnowledgeBasePathNotFound',
          `Cannot add ${root} to the knowledge base: no such file or folder.`,
          [],
        );
      }
      return write((kb) => indexWithHeartbeats(kb, root));
    },
  };
}
