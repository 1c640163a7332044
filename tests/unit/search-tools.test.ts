/** Search tool definitions, argument errors the model sees, and the search config schema. */
import { toolParametersJsonSchema } from '../../shared/tools/define';
import { formatZodIssues } from '../../shared/zod-issues';
import { findTool } from '../../shared/tools/registry';
import {
  KnowledgeBaseSearchArgs,
  WEB_PROVIDER_SIGNS,
  WEB_PROVIDERS,
  WebSearchArgs,
  knowledgeBaseSearchTool,
  webSearchTool,
} from '../../shared/tools/search';
import { SearchConfigSchema } from '../../activities/search/config';

const argError = (schema: typeof WebSearchArgs | typeof KnowledgeBaseSearchArgs, args: unknown) => {
  const r = schema.safeParse(args);
  if (r.success) throw new Error(`expected ${JSON.stringify(args)} to be rejected`);
  return formatZodIssues(r.error);
};

describe('search tool definitions', () => {
  it('are registered, in category search, with English and Chinese descriptions', () => {
    for (const tool of [knowledgeBaseSearchTool, webSearchTool]) {
      expect(findTool(tool.name)).toBe(tool);
      expect(tool.category).toBe('search');
      expect(tool.description_zh).toMatch(/[\u4e00-\u9fff]/);
      expect(tool.description).toMatch(/reference_mark/);
    }
    expect(knowledgeBaseSearchTool.sign).toBe('a');
  });

  it('give every web provider its own letter, distinct from the knowledge base and each other', () => {
    const letters = WEB_PROVIDERS.map((p) => WEB_PROVIDER_SIGNS[p]);
    expect(new Set([...letters, knowledgeBaseSearchTool.sign]).size).toBe(WEB_PROVIDERS.length + 1);
    for (const l of letters) expect(l).toMatch(/^[a-z]$/);
  });

  it('expose max_results bounds and both languages in the JSON Schema the model sees', () => {
    const schema = toolParametersJsonSchema(webSearchTool) as {
      properties: Record<
        string,
        { minimum?: number; maximum?: number; description?: string; enum?: string[] }
      >;
      required?: string[];
    };
    expect(schema.properties.max_results).toMatchObject({ minimum: 1, maximum: 100 });
    expect(schema.properties.query!.description).toMatch(/搜索/);
    expect(schema.properties.provider!.enum).toEqual([...WEB_PROVIDERS]);
    expect(schema.required).toEqual(['query']);
  });
});

describe('search tool arguments', () => {
  it('default max_results to 5 and trim the query', () => {
    expect(KnowledgeBaseSearchArgs.parse({ query: '  espresso  ' })).toEqual({
      query: 'espresso',
      max_results: 5,
    });
  });

  it('reject an empty or missing query with a message that says what to give', () => {
    expect(argError(KnowledgeBaseSearchArgs, { query: '   ' })).toBe(
      'query: query must not be empty: give the words to search for',
    );
    expect(argError(WebSearchArgs, {})).toBe('query: query is required: give the words to search for');
  });

  it('reject max_results 0, 500 and 2.5 naming the bound', () => {
    expect(argError(WebSearchArgs, { query: 'x', max_results: 0 })).toBe(
      'max_results: max_results must be at least 1',
    );
    expect(argError(WebSearchArgs, { query: 'x', max_results: 500 })).toBe(
      'max_results: max_results must be at most 100',
    );
    expect(argError(KnowledgeBaseSearchArgs, { query: 'x', max_results: 2.5 })).toBe(
      'max_results: max_results must be a whole number from 1 to 100',
    );
  });

  it('reject an unknown provider listing the known ones', () => {
    expect(argError(WebSearchArgs, { query: 'x', provider: 'google' })).toBe(
      'provider: provider must be one of tavily, exa, brave, searxng; omit it to use the configured default',
    );
  });
});

describe('SearchConfigSchema', () => {
  const issues = (value: unknown) => {
    const r = SearchConfigSchema.safeParse(value);
    if (r.success) throw new Error('expected the config to be rejected');
    return r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('defaults to the demo knowledge base and no web provider', () => {
    const cfg = SearchConfigSchema.parse(undefined);
    expect(cfg.knowledgeBase).toMatchObject({ dataDir: '.data/kb', seed: ['examples/kb'], chunkChars: 1000 });
    expect(cfg.web.providers).toEqual({});
  });

  it('fills each provider’s public base URL', () => {
    const cfg = SearchConfigSchema.parse({ web: { providers: { brave: { apiKey: 'k' } } } });
    expect(cfg.web.providers.brave).toEqual({ apiKey: 'k', baseUrl: 'https://api.search.brave.com' });
  });

  it('names the field when a key is missing or a provider is unknown', () => {
    expect(issues({ web: { providers: { tavily: {} } } })[0]).toMatch(
      /^web\.providers\.tavily\.apiKey: is required \(a Tavily key/,
    );
    expect(issues({ web: { providers: { google: { apiKey: 'k' } } } })[0]).toMatch(
      /^web\.providers: .*google/,
    );
    expect(issues({ web: { providers: { searxng: { url: 'not a url' } } } })[0]).toMatch(
      /^web\.providers\.searxng\.url: /,
    );
  });

  it('refuses a default provider that is not configured', () => {
    expect(issues({ web: { default: ['exa'], providers: { tavily: { apiKey: 'k' } } } })).toEqual([
      'web.default: "exa" is listed as a default but search.web.providers.exa is not configured',
    ]);
  });
});
