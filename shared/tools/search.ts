import { z } from 'zod';
import { schemaOnce } from '../schema-once';
import { defineTool } from './define';

/**
 * Every error type the search activities raise (a closed union, so retry policies, workflows and
 * UIs can match on it). Retryable: `SearchRateLimited` (with the provider's `nextRetryDelay`),
 * `SearchServerError`, `SearchUnreachable`, `KnowledgeBaseBusy`. All others are final.
 */
export type SearchErrorType =
  | 'SearchNotConfigured'
  | 'SearchAuthError'
  | 'SearchQuotaExceeded'
  | 'SearchBadRequest'
  | 'SearchBadResponse'
  | 'SearchRateLimited'
  | 'SearchServerError'
  | 'SearchUnreachable'
  | 'KnowledgeBaseBusy'
  | 'KnowledgeBasePathNotFound';

/** Error types that retrying the same call cannot fix; listed in the tools' retry policies. */
export const NON_RETRYABLE_SEARCH_ERRORS = [
  'SearchNotConfigured',
  'SearchAuthError',
  'SearchQuotaExceeded',
  'SearchBadRequest',
  'SearchBadResponse',
  'KnowledgeBasePathNotFound',
] as const satisfies readonly SearchErrorType[];

/** Web search providers, in the order used when none is configured as the default. */
export const WEB_PROVIDERS = ['tavily', 'exa', 'brave', 'searxng'] as const;
/** A web search provider name. */
export type WebProviderName = (typeof WEB_PROVIDERS)[number];

/** Citation letter of the knowledge base. */
export const KNOWLEDGE_BASE_SIGN = 'a';

/**
 * Citation letter of each web provider, so `[[d2]]` tells a reader the passage came from Tavily.
 * Tavily keeps its letter from the tool conventions these follow (Exa's `b` there is `web_search`'s
 * own badge here); the others take free letters that hint at the name.
 */
export const WEB_PROVIDER_SIGNS: Readonly<Record<WebProviderName, string>> = Object.freeze({
  tavily: 'd',
  exa: 'x',
  brave: 'r',
  searxng: 's',
});

const query = schemaOnce('shared/tools/search#query', () =>
  z
    .string({ message: 'query is required: give the words to search for' })
    .trim()
    .min(1, { message: 'query must not be empty: give the words to search for' })
    .max(400, { message: 'query is too long (over 400 characters): use the key words only' })
    .describe('What to search for, in a few key words / 搜索内容（几个关键词）'),
);

const maxResults = schemaOnce('shared/tools/search#maxResults', () =>
  z
    .number({ message: 'max_results must be a whole number from 1 to 100' })
    .int({ message: 'max_results must be a whole number from 1 to 100' })
    .min(1, { message: 'max_results must be at least 1' })
    .max(100, { message: 'max_results must be at most 100' })
    .default(5)
    .describe('How many results to return, 1–100 (default 5) / 返回结果数量，1–100（默认 5）'),
);

/** Arguments of `knowledge_base_search`. */
export const KnowledgeBaseSearchArgs = schemaOnce('shared/tools/search#KnowledgeBaseSearchArgs', () =>
  z.object({ query, max_results: maxResults }),
);
/** Validated arguments of `knowledge_base_search`. */
export type KnowledgeBaseSearchArgs = z.output<typeof KnowledgeBaseSearchArgs>;

/** `knowledge_base_search`: full-text search over the documents indexed into the local knowledge base. */
export const knowledgeBaseSearchTool = defineTool({
  name: 'knowledge_base_search',
  description:
    'Searches the local knowledge base (documents the user indexed: policies, notes, manuals) and ' +
    'returns the best-matching passages with their titles. Use it first for questions about the ' +
    "user's own or internal information. Cite a passage with its reference_mark, e.g. [[a1]].",
  description_zh:
    '搜索本地知识库（用户已索引的文档：制度、笔记、手册等），返回最相关的段落及其标题。' +
    '涉及用户自身或内部信息的问题应优先使用。引用段落时使用其 reference_mark，例如 [[a1]]。',
  category: 'search',
  sign: KNOWLEDGE_BASE_SIGN,
  inputs: KnowledgeBaseSearchArgs,
  output:
    'a JSON array of passages {title, text, index, reference_mark}, or advice to try a broader query when nothing matched',
  // A read of the local index; a local call that builds the index does not heartbeat to the server.
  local: true,
  activity: {
    // The first search may build the demo index (seconds), hence a heartbeat rather than a short timeout.
    startToCloseTimeout: '5 minutes',
    heartbeatTimeout: '30 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes: [...NON_RETRYABLE_SEARCH_ERRORS],
  },
});

/** Arguments of `web_search`. */
export const WebSearchArgs = schemaOnce('shared/tools/search#WebSearchArgs', () =>
  z.object({
    query,
    max_results: maxResults,
    provider: z
      .enum(WEB_PROVIDERS, {
        message: `provider must be one of ${WEB_PROVIDERS.join(', ')}; omit it to use the configured default`,
      })
      .optional()
      .describe(
        `Search provider (${WEB_PROVIDERS.join(', ')}); omit for the configured default / ` +
          '搜索服务提供方；省略则使用配置的默认提供方',
      ),
  }),
);
/** Validated arguments of `web_search`. */
export type WebSearchArgs = z.output<typeof WebSearchArgs>;

/** `web_search`: searches the web through the providers configured on the worker. */
export const webSearchTool = defineTool({
  name: 'web_search',
  description:
    'Searches the public web for current information, news and general knowledge, and returns ' +
    'titles and text excerpts of the best pages. Cite a page with its reference_mark, e.g. [[d2]].',
  description_zh:
    '在公共互联网上搜索实时信息、新闻和通用知识，返回最相关网页的标题和文本摘录。' +
    '引用网页时使用其 reference_mark，例如 [[d2]]。',
  category: 'search',
  sign: 'b',
  inputs: WebSearchArgs,
  output:
    'a JSON array of pages {title, text, index, reference_mark}, or advice to try a broader query when nothing matched',
  activity: {
    startToCloseTimeout: '1 minute',
    maximumAttempts: 5,
    initialInterval: '2 seconds',
    nonRetryableErrorTypes: [...NON_RETRYABLE_SEARCH_ERRORS],
  },
});
