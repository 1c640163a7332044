/**
 * Web search providers behind one interface. Each maps its own API (request shape, auth header,
 * result fields, result cap) onto {@link WebHit}; everything else (errors, retries, citations)
 * is shared. Response schemas accept what each API documents and ignore the rest, so a provider
 * adding fields does not break us.
 */
import { z } from 'zod';
import type { WebProviderName } from '../../../shared/tools/search';
import type { WebSearchConfig } from '../config';
import { requestProvider, searchFailure } from './http';

/** One web result, before citation. */
export interface WebHit {
  title: string;
  url: string;
  text: string;
  published_date: string | null;
  /** The provider's own relevance score, when it gives one. */
  score: number | null;
}

/** What a search call needs besides the query. */
export interface ProviderCallContext {
  fetchImpl: typeof fetch;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** A configured web search provider. */
export interface WebSearchProvider {
  name: WebProviderName;
  /** Name shown in messages. */
  label: string;
  /** Most results the API returns per request; asking for more is clamped. */
  maxResults: number;
  search(query: string, maxResults: number, ctx: ProviderCallContext): Promise<WebHit[]>;
}

const strip = (s: string) =>
  s
    .replace(/<[^>]*>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
const joinUrl = (base: string, p: string) => `${base.replace(/\/+$/, '')}${p}`;
/** Keeps a date only when it parses, as an ISO string: providers mix ISO, RFC 2822 and "3 days ago". */
const isoDate = (s: string | null | undefined): string | null => {
  if (!s) return null;
  const t = Date.parse(s);
  return Number.isFinite(t) ? new Date(t).toISOString() : null;
};

// Tavily: POST /search, `Authorization: Bearer tvly-…`, up to 20 results.
const TavilyResponse = z.object({
  results: z.array(
    z.object({
      title: z.string().nullish(),
      url: z.string(),
      content: z.string().nullish(),
      score: z.number().nullish(),
      published_date: z.string().nullish(),
    }),
  ),
});

function tavily(cfg: { apiKey: string; baseUrl: string }): WebSearchProvider {
  return {
    name: 'tavily',
    label: 'Tavily',
    maxResults: 20,
    async search(query, maxResults, ctx) {
      const body = await requestProvider({
        provider: 'Tavily',
        keyField: 'search.web.providers.tavily.apiKey',
        method: 'POST',
        url: joinUrl(cfg.baseUrl, '/search'),
        headers: { authorization: `Bearer ${cfg.apiKey}` },
        body: { query, max_results: maxResults, search_depth: 'basic', include_answer: false },
        responseSchema: TavilyResponse,
        // 432: plan limit, 433: pay-as-you-go limit; both final until the account changes.
        quotaStatuses: [432, 433],
        secrets: [cfg.apiKey],
        ...ctx,
      });
      return body.results.map((r) => ({
        title: r.title?.trim() || r.url,
        url: r.url,
        text: r.content?.trim() ?? '',
        published_date: isoDate(r.published_date),
        score: r.score ?? null,
      }));
    },
  };
}

// Exa: POST /search, `x-api-key`, page text requested inline, up to 100 results.
const ExaResponse = z.object({
  results: z.array(
    z.object({
      title: z.string().nullish(),
      url: z.string(),
      text: z.string().nullish(),
      summary: z.string().nullish(),
      highlights: z.array(z.string()).nullish(),
      publishedDate: z.string().nullish(),
      score: z.number().nullish(),
    }),
  ),
});

function exa(cfg: { apiKey: string; baseUrl: string }): WebSearchProvider {
  return {
    name: 'exa',
    label: 'Exa',
    maxResults: 100,
    async search(query, maxResults, ctx) {
      const body = await requestProvider({
        provider: 'Exa',
        keyField: 'search.web.providers.exa.apiKey',
        method: 'POST',
        url: joinUrl(cfg.baseUrl, '/search'),
        headers: { 'x-api-key': cfg.apiKey },
        // Cap the text server-side: citations keep 1,500 characters, more is wasted transfer.
        body: { query, numResults: maxResults, type: 'auto', contents: { text: { maxCharacters: 2000 } } },
        responseSchema: ExaResponse,
        secrets: [cfg.apiKey],
        ...ctx,
      });
      return body.results.map((r) => ({
        title: r.title?.trim() || r.url,
        url: r.url,
        text: (r.text ?? r.summary ?? r.highlights?.join(' … ') ?? '').trim(),
        published_date: isoDate(r.publishedDate),
        score: r.score ?? null,
      }));
    },
  };
}

// Brave Search: GET /res/v1/web/search, `X-Subscription-Token`, up to 20 results.
const BraveResponse = z.object({
  web: z
    .object({
      results: z.array(
        z.object({
          title: z.string().nullish(),
          url: z.string(),
          description: z.string().nullish(),
          extra_snippets: z.array(z.string()).nullish(),
          page_age: z.string().nullish(),
        }),
      ),
    })
    .nullish(),
});

function brave(cfg: { apiKey: string; baseUrl: string }): WebSearchProvider {
  return {
    name: 'brave',
    label: 'Brave Search',
    maxResults: 20,
    async search(query, maxResults, ctx) {
      const params = new URLSearchParams({ q: query, count: String(maxResults) });
      const body = await requestProvider({
        provider: 'Brave Search',
        keyField: 'search.web.providers.brave.apiKey',
        method: 'GET',
        url: joinUrl(cfg.baseUrl, `/res/v1/web/search?${params}`),
        headers: { 'x-subscription-token': cfg.apiKey },
        responseSchema: BraveResponse,
        secrets: [cfg.apiKey],
        ...ctx,
      });
      // Brave marks query words in snippets with <strong>; the model needs plain text.
      return (body.web?.results ?? []).map((r) => ({
        title: strip(r.title ?? '') || r.url,
        url: r.url,
        text: strip([r.description ?? '', ...(r.extra_snippets ?? [])].join(' ')),
        published_date: isoDate(r.page_age),
        score: null,
      }));
    },
  };
}

// SearXNG: GET /search?format=json on a self-hosted instance, no key; one page of results.
const SearxngResponse = z.object({
  results: z.array(
    z.object({
      title: z.string().nullish(),
      url: z.string().nullish(),
      content: z.string().nullish(),
      publishedDate: z.string().nullish(),
      score: z.number().nullish(),
    }),
  ),
});

function searxng(cfg: { url: string }): WebSearchProvider {
  return {
    name: 'searxng',
    label: 'SearXNG',
    maxResults: 100,
    async search(query, maxResults, ctx) {
      const params = new URLSearchParams({ q: query, format: 'json' });
      const body = await requestProvider({
        provider: 'SearXNG',
        method: 'GET',
        url: joinUrl(cfg.url, `/search?${params}`),
        responseSchema: SearxngResponse,
        secrets: [],
        ...ctx,
      }).catch((err: unknown) => {
        // The instance refuses format=json unless `search.formats` in its settings.yml lists json.
        if (err instanceof Error && /answered 403/.test(err.message)) {
          throw searchFailure(
            'SearchNotConfigured',
            `${err.message.replace(/\. Check the instance settings\.$/, '')}. Enable the JSON format: add "json" to search.formats in the instance's settings.yml.`,
            [],
          );
        }
        throw err;
      });
      // SearXNG has no result-count parameter: it answers one page, which we cut to size.
      return body.results
        .filter((r): r is typeof r & { url: string } => !!r.url)
        .slice(0, maxResults)
        .map((r) => ({
          title: strip(r.title ?? '') || r.url,
          url: r.url,
          text: strip(r.content ?? ''),
          published_date: isoDate(r.publishedDate),
          score: r.score ?? null,
        }));
    },
  };
}

/**
 * The provider `name`, built from the worker's config, or a final `SearchNotConfigured` failure that
 * names the config entry to add.
 */
export function createProvider(name: WebProviderName, web: WebSearchConfig): WebSearchProvider {
  const p = web.providers;
  switch (name) {
    case 'tavily':
      if (p.tavily) return tavily(p.tavily);
      break;
    case 'exa':
      if (p.exa) return exa(p.exa);
      break;
    case 'brave':
      if (p.brave) return brave(p.brave);
      break;
    case 'searxng':
      if (p.searxng) return searxng(p.searxng);
      break;
  }
  const what = name === 'searxng' ? '{ "url": "https://your-instance" }' : '{ "apiKey": "${env:…}" }';
  throw searchFailure(
    'SearchNotConfigured',
    `Web search provider "${name}" is not configured on this worker: add search.web.providers.${name} = ${what} ` +
      'to the DURABLE_AGENT_CONFIG file, or search with another provider.',
    [],
  );
}
