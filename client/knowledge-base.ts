/**
 * The knowledge base, from this process: its settings as the worker reads them, opening it on the
 * configured engine (a folder, or the PostgreSQL tables the workers share), and search arguments
 * checked as the agent's tool checks them. The `kb` commands use it; only what a caller needs is
 * loaded, and nothing of Temporal.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { KnowledgeBaseConfig } from '../activities/search/config';
import { KNOWLEDGE_BASE_DEFAULTS } from '../activities/search/kb/defaults';
import type { KnowledgeBaseIndex, KnowledgeBaseWriter } from '../activities/search/kb/engine';
import type { KnowledgeBaseSettings } from '../activities/search/kb/open';
import { PROJECT_ROOT } from '../shared/project-root';
import { formatZodIssues } from '../shared/zod-issues';
import type * as SearchTools from '../shared/tools/search';
import type * as SearchConfig from '../activities/search/config';
import type * as ConfigErrors from '../workers/config-error';
import type * as EnvRefs from '../workers/env-refs';
import type * as KbEngine from '../activities/search/kb/engine';
import type * as KbIndexer from '../activities/search/kb/indexer';
import type * as KbOpen from '../activities/search/kb/open';
import type * as KbSnippet from '../activities/search/kb/snippet';

export type { KnowledgeBaseConfig } from '../activities/search/config';
export type { KnowledgeBaseIndex, KnowledgeBaseWriter } from '../activities/search/kb/engine';
export type { IndexProgress } from '../activities/search/kb/indexer';
export type { KnowledgeBaseHit } from '../activities/search/kb/search';

/** The modules of the knowledge base, each loaded on first use. */
/* eslint-disable @typescript-eslint/no-require-imports -- each command loads only the code it runs */
export const kbModules = {
  engine: () => require('../activities/search/kb/engine') as typeof KbEngine,
  indexer: () => require('../activities/search/kb/indexer') as typeof KbIndexer,
  open: () => require('../activities/search/kb/open') as typeof KbOpen,
  snippet: () => require('../activities/search/kb/snippet') as typeof KbSnippet,
  searchTools: () => require('../shared/tools/search') as typeof SearchTools,
  searchConfig: () => require('../activities/search/config') as typeof SearchConfig,
  configError: () => require('../workers/config-error') as typeof ConfigErrors,
  envRefs: () => require('../workers/env-refs') as typeof EnvRefs,
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** Options every `kb` command takes. */
export interface KbOpts {
  /** An index folder: the embedded engine there, whatever the config says. */
  dataDir?: string;
}

/** A path of the config made absolute against the project folder. */
export function resolveProjectPath(p: string): string {
  return path.resolve(PROJECT_ROOT, p);
}

/**
 * `search.knowledgeBase` of the worker's config file, its `${env:…}` references resolved and
 * validated as the worker validates it. Only that section is read: building every setting's
 * schema (and loading what they import) would double a `kb search`'s start-up.
 */
function knowledgeBaseSection(file: string): KnowledgeBaseConfig {
  const { ConfigError } = kbModules.configError();
  let raw: { search?: { knowledgeBase?: unknown } };
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof raw;
  } catch (err) {
    throw new ConfigError(`DURABLE_AGENT_CONFIG: cannot read ${file}: ${(err as Error).message}`);
  }
  const where = 'search.knowledgeBase';
  const section = kbModules.envRefs().resolveEnvRefs(raw?.search?.knowledgeBase ?? {}, process.env, where);
  const parsed = kbModules.searchConfig().KnowledgeBaseConfigSchema.safeParse(section);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((i) => `${[where, ...i.path].join('.')}: ${i.message}`)
      .join('; ');
    throw new ConfigError(`Invalid config file ${file}: ${problems}`);
  }
  return parsed.data;
}

/**
 * The knowledge-base settings: the worker's config file when there is one, else the defaults,
 * without loading the validation code a search with no config does not need. A `--data-dir` picks
 * the embedded engine in that folder.
 */
export function kbConfig(o: KbOpts): KnowledgeBaseConfig & KnowledgeBaseSettings {
  const file = process.env.DURABLE_AGENT_CONFIG?.trim();
  const cfg: KnowledgeBaseConfig = file
    ? knowledgeBaseSection(file)
    : { ...KNOWLEDGE_BASE_DEFAULTS, seed: [...KNOWLEDGE_BASE_DEFAULTS.seed] };
  if (o.dataDir) return { ...cfg, engine: 'embedded', url: undefined, dir: path.resolve(o.dataDir) };
  return { ...cfg, dir: resolveProjectPath(cfg.dataDir) };
}

/** The knowledge base the settings name (one per process and database). */
export function openKb(cfg: KnowledgeBaseSettings): KnowledgeBaseIndex {
  return kbModules.open().openKnowledgeBase(cfg);
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
  if (!args.success) throw new Error(formatZodIssues(args.error));
  return args.data;
}

/** Runs `fn` as the index's writer, explaining a busy index in words a shell user can act on. */
export async function withKb<T>(
  cfg: KnowledgeBaseSettings,
  fn: (kb: KnowledgeBaseWriter) => Promise<T>,
): Promise<T> {
  const { KnowledgeBaseBusyError } = kbModules.engine();
  const kb = openKb(cfg);
  try {
    return await kb.write(fn);
  } catch (err) {
    if (err instanceof KnowledgeBaseBusyError) {
      throw new Error(
        `The knowledge base in ${kb.where} is being written by ${err.holder} (a worker indexing, or another kb add); try again in a moment.`,
      );
    }
    throw err;
  }
}

/** Closes what the commands opened (a PostgreSQL pool), so a command's process ends with its work. */
export async function closeKbs(): Promise<void> {
  await kbModules.open().closeKnowledgeBases();
}
