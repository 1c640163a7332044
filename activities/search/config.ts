import path from 'node:path';
import { z } from 'zod';
import { PROJECT_ROOT } from '../../shared/project-root';
import { WEB_PROVIDERS } from '../../shared/tools/search';
import { connectionUrlProblem } from '../sql/config';
import { KNOWLEDGE_BASE_DEFAULTS as KB } from './kb/defaults';

const keyed = (defaultBaseUrl: string, keyHint: string) =>
  z
    .object({
      apiKey: z
        .string({ message: `is required (${keyHint}); use "\${env:NAME}" to read it from the environment` })
        .trim()
        .min(1, { message: `must not be empty (${keyHint})` }),
      baseUrl: z.url({ message: 'must be a URL' }).default(defaultBaseUrl),
    })
    .strict();

/** Web search settings: which providers are configured, with their keys and addresses. */
export const WebSearchConfigSchema = z
  .object({
    providers: z
      .object({
        tavily: keyed('https://api.tavily.com', 'a Tavily key, tvly-…').optional(),
        exa: keyed('https://api.exa.ai', 'an Exa key').optional(),
        brave: keyed('https://api.search.brave.com', 'a Brave Search subscription token').optional(),
        searxng: z
          .object({
            url: z.url({ message: 'must be the URL of a SearXNG instance with the JSON format enabled' }),
          })
          .strict()
          .optional(),
      })
      .strict()
      .default({}),
    /**
     * Providers a call queries when the model names none; their results are merged and duplicate
     * addresses removed. Default: the first configured provider in {@link WEB_PROVIDERS} order.
     */
    default: z.array(z.enum(WEB_PROVIDERS)).min(1).optional(),
    /** Per-request timeout; a provider slower than this is retried like a network error. */
    timeoutMs: z.number().int().min(100).max(120_000).default(15_000),
  })
  .strict()
  .superRefine((web, ctx) => {
    for (const name of web.default ?? []) {
      if (!web.providers[name]) {
        ctx.addIssue({
          code: 'custom',
          path: ['default'],
          message: `"${name}" is listed as a default but search.web.providers.${name} is not configured`,
        });
      }
    }
  });

/**
 * An OpenAI-compatible embedding endpoint for semantic recall in the knowledge base. Optional: the
 * lexical ranking needs no setup; with this set, chunks are embedded when indexed and each query's
 * neighbours are fused with the lexical results.
 */
export const EmbeddingsConfigSchema = z
  .object({
    baseUrl: z.url({ message: 'must be the URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8080/v1' }),
    model: z.string({ message: 'is required: the embedding model name' }).trim().min(1),
    /** Model for queries when the server names query and passage embeddings apart (e.g. `e5-query`). */
    queryModel: z.string().trim().min(1).optional(),
    apiKey: z.string().trim().min(1).optional(),
    dimensions: z.number().int().min(1).max(65_536).optional(),
    batchSize: z.number().int().min(1).max(2048).default(64),
    timeoutMs: z.number().int().min(100).max(600_000).default(30_000),
    queryPrefix: z.string().default(''),
    documentPrefix: z.string().default(''),
  })
  .strict();

/** Knowledge-base settings. Paths are relative to the project folder. */
export const KnowledgeBaseConfigSchema = z
  .object({
    /**
     * Where the index lives: `embedded` (a folder on this machine, the zero-setup default) or
     * `postgres` (tables in a PostgreSQL database every worker and the CLI share).
     */
    engine: z
      .enum(['embedded', 'postgres'], { message: 'must be "embedded" (a folder, the default) or "postgres"' })
      .default(KB.engine),
    /** Folder of the embedded index; the worker and the CLI share it. */
    dataDir: z.string().trim().min(1).default(KB.dataDir),
    /**
     * The PostgreSQL database of the `postgres` engine. It holds a password: write
     * `"${env:NAME}"` to keep it out of the file. Workflows never see it.
     */
    url: z
      .string()
      .min(1)
      .superRefine((url, ctx) => {
        const problem = connectionUrlProblem('postgres', url);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
    /** Names of the `postgres` engine's tables start with this (`<prefix>_documents`, …). */
    tablePrefix: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,39}$/, {
        message: 'must be lower-case letters, digits and _ (at most 40), starting with a letter or _',
      })
      .default(KB.tablePrefix),
    /** Connections the `postgres` engine opens per process. */
    poolSize: z.number().int().min(1).max(50).default(KB.poolSize),
    /**
     * Folders indexed on first use when the knowledge base is empty, so the demo works with no
     * setup. Set to [] to start empty.
     */
    seed: z.array(z.string().trim().min(1)).default(() => [...KB.seed]),
    /** Target chunk size in characters: small enough to rank a passage, big enough to make sense alone. */
    chunkChars: z.number().int().min(200).max(8000).default(KB.chunkChars),
    /** How long to wait for another process (a CLI `kb add`, another worker) to finish writing the index. */
    lockTimeoutMs: z.number().int().min(0).max(600_000).default(KB.lockTimeoutMs),
    /** Semantic recall; unset keeps the knowledge base lexical-only. */
    embeddings: EmbeddingsConfigSchema.optional(),
  })
  .strict()
  .superRefine((kb, ctx) => {
    if (kb.engine === 'postgres' && kb.url === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['url'],
        message:
          'is required with engine "postgres": the database to keep the index in, e.g. "${env:KB_DATABASE_URL}"',
      });
    }
    if (kb.engine === 'embedded' && kb.url !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['url'],
        message: 'is only read by engine "postgres"; add "engine": "postgres" or remove the url',
      });
    }
  });

/** Search configuration: the knowledge base and web search providers. */
export const SearchConfigSchema = z
  .object({
    knowledgeBase: KnowledgeBaseConfigSchema.default(() => KnowledgeBaseConfigSchema.parse({})),
    web: WebSearchConfigSchema.default(() => WebSearchConfigSchema.parse({})),
  })
  .strict()
  .default(() => ({
    knowledgeBase: KnowledgeBaseConfigSchema.parse({}),
    web: WebSearchConfigSchema.parse({}),
  }));

/** Search configuration of a worker. */
export type SearchConfig = z.output<typeof SearchConfigSchema>;
/** Knowledge-base settings of a worker. */
export type KnowledgeBaseConfig = z.output<typeof KnowledgeBaseConfigSchema>;
/** Web search settings of a worker. */
export type WebSearchConfig = z.output<typeof WebSearchConfigSchema>;

/** A config path made absolute against the project folder (the worker and the CLI may start elsewhere). */
export function resolveProjectPath(p: string): string {
  return path.resolve(PROJECT_ROOT, p);
}
