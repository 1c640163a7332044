/**
 * The local knowledge base, in this process: its settings as the worker reads them, opening it
 * (with the folder's lock for writers), and search arguments checked as the agent's tool checks
 * them. The `kb` commands use it; only what a caller needs is loaded, and nothing of Temporal.
 */
import path from 'node:path';
import type { KnowledgeBaseConfig } from '../activities/search/config';
import { KNOWLEDGE_BASE_DEFAULTS } from '../activities/search/kb/defaults';
import type { KnowledgeBase } from '../activities/search/kb/store';
import { PROJECT_ROOT } from '../shared/project-root';
import type * as ToolDefine from '../shared/tools/define';
import type * as SearchTools from '../shared/tools/search';
import type * as WorkerConfig from '../workers/config';
import type * as KbEmbeddings from '../activities/search/kb/embeddings';
import type * as KbIndexer from '../activities/search/kb/indexer';
import type * as KbLock from '../activities/search/kb/lock';
import type * as KbPool from '../activities/search/kb/pool';
import type * as KbService from '../activities/search/kb/service';
import type * as KbSnippet from '../activities/search/kb/snippet';
import type * as KbStore from '../activities/search/kb/store';

export type { KnowledgeBaseConfig } from '../activities/search/config';
export type { IndexProgress } from '../activities/search/kb/indexer';
export type { KnowledgeBaseHit } from '../activities/search/kb/search';
export type { KnowledgeBase } from '../activities/search/kb/store';

/** The modules of the knowledge base, each loaded on first use. */
/* eslint-disable @typescript-eslint/no-require-imports -- each command loads only the code it runs */
export const kbModules = {
  embeddings: () => require('../activities/search/kb/embeddings') as typeof KbEmbeddings,
  indexer: () => require('../activities/search/kb/indexer') as typeof KbIndexer,
  lock: () => require('../activities/search/kb/lock') as typeof KbLock,
  pool: () => require('../activities/search/kb/pool') as typeof KbPool,
  service: () => require('../activities/search/kb/service') as typeof KbService,
  snippet: () => require('../activities/search/kb/snippet') as typeof KbSnippet,
  store: () => require('../activities/search/kb/store') as typeof KbStore,
  define: () => require('../shared/tools/define') as typeof ToolDefine,
  searchTools: () => require('../shared/tools/search') as typeof SearchTools,
  workerConfig: () => require('../workers/config') as typeof WorkerConfig,
};
/* eslint-enable @typescript-eslint/no-require-imports */

export interface KbOpts {
  dataDir?: string;
}

export function resolveProjectPath(p: string): string {
  return path.resolve(PROJECT_ROOT, p);
}

/**
 * The knowledge-base settings: the worker's config file when there is one (validated as the worker
 * does), else the defaults, without loading the validation code a search does not need.
 */
export function kbConfig(o: KbOpts): KnowledgeBaseConfig & { dir: string } {
  const cfg: KnowledgeBaseConfig = process.env.DURABLE_AGENT_CONFIG?.trim()
    ? kbModules.workerConfig().loadWorkerConfig().search.knowledgeBase
    : { ...KNOWLEDGE_BASE_DEFAULTS, seed: [...KNOWLEDGE_BASE_DEFAULTS.seed] };
  return { ...cfg, dir: o.dataDir ? path.resolve(o.dataDir) : resolveProjectPath(cfg.dataDir) };
}

/**
 * The validated search arguments. Plain values are checked here; anything else goes through the
 * tool's own schema, so the CLI reports exactly what the agent's tool would.
 */
export function searchArgs(query: string, max: number): { query: string; max_results: number } {
  const q = query.trim();
  if (q && q.length <= 400 && Number.isInteger(max) && max >= 1 && max <= 100)
    return { query: q, max_results: max };
  const args = kbModules.searchTools().KnowledgeBaseSearchArgs.safeParse({ query, max_results: max });
  if (!args.success) throw new Error(kbModules.define().formatZodIssues(args.error));
  return args.data;
}

export function embedderOf(cfg: KnowledgeBaseConfig) {
  return cfg.embeddings ? kbModules.embeddings().createEmbedder(cfg.embeddings) : undefined;
}

export async function withKb<T>(
  cfg: ReturnType<typeof kbConfig>,
  fn: (kb: KnowledgeBase) => Promise<T>,
): Promise<T> {
  const { LockBusyError } = kbModules.lock();
  const { vectorHook } = kbModules.service();
  try {
    return await kbModules
      .pool()
      .withKnowledgeBase(
        cfg.dir,
        { lockTimeoutMs: cfg.lockTimeoutMs, onSnapshot: vectorHook(embedderOf(cfg)) },
        fn,
      );
  } catch (err) {
    if (err instanceof LockBusyError) {
      throw new Error(
        `The knowledge base in ${cfg.dir} is being written by process ${err.holder} (a worker indexing, or another kb add); try again in a moment.`,
      );
    }
    throw err;
  }
}
