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
import type { KnowledgeBaseIndex, KnowledgeBaseWriter } from './kb/engine';
import { KnowledgeBaseBusyError, KnowledgeBaseDatabaseError } from './kb/engine';
import type { IndexProgress, IndexReport } from './kb/indexer';
import { indexPath, seedIfEmpty } from './kb/indexer';
import type { KnowledgeBaseSettings } from './kb/open';
import { openKnowledgeBase } from './kb/open';
import type { KnowledgeBaseHit } from './kb/search';
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

/** The settings of `search.knowledgeBase` with the index folder resolved against the project. */
export function knowledgeBaseSettings(cfg: KnowledgeBaseConfig): KnowledgeBaseSettings {
  return { ...cfg, dir: resolveProjectPath(cfg.dataDir) };
}

/**
 * Turns the engine's errors into the search error types: another process writing the index is
 * retried; a database that refuses the settings is final, one that is down is retried.
 */
function asSearchFailure(err: unknown, secrets: readonly string[]): unknown {
  if (err instanceof KnowledgeBaseBusyError) {
    return searchFailure(
      'KnowledgeBaseBusy',
      `The knowledge base in ${err.where} is in use by ${err.holder} (a \`kb add\` still running?); retrying.`,
      secrets,
    );
  }
  if (err instanceof KnowledgeBaseDatabaseError) {
    return searchFailure(err.retryable ? 'SearchUnreachable' : 'SearchNotConfigured', err.message, secrets);
  }
  return err;
}

/**
 * Creates `knowledge_base_search` and `indexKnowledgeBase` on the configured engine. The embedded
 * engine searches the last snapshot of its folder, kept in memory between calls and re-read when
 * another process changed it; the postgres engine searches the shared tables. Writers of one
 * process take turns, so they never fight over the index's lock within one worker.
 */
export function createKnowledgeBaseActivities(
  cfg: KnowledgeBaseConfig,
  fetchImpl: typeof fetch = fetch,
): KnowledgeBaseActivities {
  const settings = knowledgeBaseSettings(cfg);
  const secrets = cfg.url ? [cfg.url] : [];
  // Opened on first use: a worker whose runs never search connects to no database.
  let index: KnowledgeBaseIndex | undefined;
  const kb = () => (index ??= openKnowledgeBase(settings, fetchImpl));

  /** Runs `fn` as the index's writer, turning "another process holds it" into a retryable failure. */
  async function write<T>(fn: (w: KnowledgeBaseWriter) => Promise<T>): Promise<T> {
    try {
      return await kb().write(fn, { signal: Context.current().cancellationSignal });
    } catch (err) {
      throw asSearchFailure(err, secrets);
    }
  }

  /** Indexes one folder, heartbeating progress and resuming from a previous attempt's heartbeat. */
  async function indexWithHeartbeats(w: KnowledgeBaseWriter, root: string): Promise<IndexReport> {
    const ctx = Context.current();
    const details = ctx.info.heartbeatDetails as IndexHeartbeat | undefined;
    const startAt = details?.root === root ? details.processedFiles : 0;
    return indexPath(w, root, {
      chunkChars: cfg.chunkChars,
      startAt,
      signal: ctx.cancellationSignal,
      onProgress: (p: IndexProgress) => ctx.heartbeat({ root: p.root, processedFiles: p.processedFiles }),
    });
  }

  return {
    async knowledge_base_search({ args }) {
      const ctx = Context.current();
      let hits: KnowledgeBaseHit[];
      try {
        if ((await kb().stats()).chunks === 0) {
          // Exclusive, so concurrent first searches seed once: the second sees a filled index.
          await write((w) =>
            seedIfEmpty(w, cfg.seed.map(resolveProjectPath), (root) => indexWithHeartbeats(w, root)),
          );
          ctx.heartbeat();
        }
        hits = await kb().search(args.query, args.max_results, {
          signal: ctx.cancellationSignal,
          onFallback: (reason) => {
            ctx.log.warn(`knowledge_base_search ranked lexically only: ${reason}`);
          },
        });
      } catch (err) {
        throw asSearchFailure(err, secrets);
      }
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
      return write((w) => indexWithHeartbeats(w, root));
    },
  };
}
