/**
 * `web_search` against a local HTTP server per provider that answers in that provider's documented
 * format (fixtures in tests/fixtures/search), including its error responses.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { DefaultLogger } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { SearchToolData } from '../../shared/citations';
import type { ToolResult } from '../../shared/tools/define';
import type { WebProviderName } from '../../shared/tools/search';
import { SearchConfigSchema } from '../../activities/search/config';
import { createSearchActivities } from '../../activities/search';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'search');
const fixture = (name: string): unknown => JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8'));
interface ErrorCase {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  text?: string;
}
const ERRORS = fixture('errors.json') as Record<string, Record<string, ErrorCase>>;
const KEY = 'sk-secret-key-4242';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A local server whose next answers are set per test; it records every request. */
let server: http.Server;
let base: string;
let answer: ErrorCase = { status: 200 };
let seen: Seen[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const text = answer.text ?? JSON.stringify(answer.body ?? {});
      res.writeHead(answer.status, {
        'content-type': answer.text ? 'text/html' : 'application/json',
        ...answer.headers,
      });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  seen = [];
});

function providersConfig(names: WebProviderName[], defaults?: WebProviderName[]) {
  const providers: Record<string, unknown> = {};
  for (const n of names) providers[n] = n === 'searxng' ? { url: base } : { apiKey: KEY, baseUrl: base };
  return SearchConfigSchema.parse({ web: { providers, ...(defaults ? { default: defaults } : {}) } });
}

async function webSearch(
  config: ReturnType<typeof providersConfig>,
  args: { query: string; max_results: number; provider?: WebProviderName },
): Promise<ToolResult & { data: SearchToolData }> {
  const { web_search } = createSearchActivities({ search: config });
  // Failures are what these tests expect: keep the SDK from logging each one.
  const env = new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });
  const result: ToolResult = await env.run(web_search, { toolCallId: 'call-1', args });
  return result as ToolResult & { data: SearchToolData };
}

async function failure(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ApplicationFailure))
    throw new Error(`expected an ApplicationFailure, got ${String(err)}`);
  expect(err.message).not.toContain(KEY);
  return err;
}

const OK: Record<WebProviderName, string> = {
  tavily: 'tavily-search.json',
  exa: 'exa-search.json',
  brave: 'brave-web-search.json',
  searxng: 'searxng-search.json',
};

describe('each provider, in its own response format', () => {
  it('Tavily: POST /search with a bearer key; content, score and its letter d', async () => {
    answer = { status: 200, body: fixture(OK.tavily) };
    const r = await webSearch(providersConfig(['tavily']), { query: 'durable execution', max_results: 50 });
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/search' });
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    // Tavily returns at most 20: the request is clamped rather than refused.
    expect(JSON.parse(seen[0]!.body)).toMatchObject({ query: 'durable execution', max_results: 20 });
    expect(r.data.records[0]).toMatchObject({
      title: 'Temporal Workflow | Temporal Platform Documentation',
      url: 'https://docs.temporal.io/workflows',
      score: 0.91,
      sign: 'd',
      source_type: 'url',
      search_type: 'web_search',
      score_details: { provider: 'tavily', rank: 1 },
    });
    expect(r.content).toBe(
      'Found 2 results for "durable execution"; the agent workflow numbers them for citation.',
    );
  });

  it('Exa: POST /search with x-api-key and inline text; published date kept; letter x', async () => {
    answer = { status: 200, body: fixture(OK.exa) };
    const r = await webSearch(providersConfig(['exa']), { query: 'durable execution', max_results: 5 });
    expect(seen[0]!.headers['x-api-key']).toBe(KEY);
    expect(JSON.parse(seen[0]!.body)).toMatchObject({
      numResults: 5,
      contents: { text: { maxCharacters: 2000 } },
    });
    expect(r.data.records.map((x) => [x.sign, x.published_date, x.score])).toEqual([
      ['x', '2024-05-02T00:00:00.000Z', 0.4601],
      ['x', null, null],
    ]);
    expect(r.data.records[1]!.text).toMatch(/^Durable execution makes/);
  });

  it('Brave: GET /res/v1/web/search with the subscription token; <strong> stripped; letter r', async () => {
    answer = { status: 200, body: fixture(OK.brave) };
    const r = await webSearch(providersConfig(['brave']), { query: 'durable execution', max_results: 3 });
    const url = new URL(seen[0]!.url, base);
    expect(url.pathname).toBe('/res/v1/web/search');
    expect(url.searchParams.get('q')).toBe('durable execution');
    expect(url.searchParams.get('count')).toBe('3');
    expect(seen[0]!.headers['x-subscription-token']).toBe(KEY);
    expect(r.data.records[0]).toMatchObject({
      title: 'Temporal Workflow | Temporal Platform Documentation',
      text: 'A Temporal Workflow defines the overall flow of the application and is durable.',
      sign: 'r',
    });
    expect(r.data.records[1]!.text).toContain('It records progress so a crash does not lose work.');
  });

  it('SearXNG: GET /search?format=json on the instance, cut to max_results; letter s', async () => {
    answer = { status: 200, body: fixture(OK.searxng) };
    const r = await webSearch(providersConfig(['searxng']), { query: 'durable execution', max_results: 1 });
    const url = new URL(seen[0]!.url, base);
    expect(url.pathname).toBe('/search');
    expect(url.searchParams.get('format')).toBe('json');
    expect(r.data.records).toHaveLength(1);
    expect(r.data.records[0]).toMatchObject({
      sign: 's',
      score: 3,
      url: 'https://docs.temporal.io/workflows',
    });
  });
});

describe('provider errors', () => {
  const cases: [WebProviderName, string, string, boolean, number | undefined][] = [
    ['tavily', 'badKey', 'SearchAuthError', true, undefined],
    ['tavily', 'rateLimit', 'SearchRateLimited', false, 7000],
    ['tavily', 'planLimit', 'SearchQuotaExceeded', true, undefined],
    ['tavily', 'serverError', 'SearchServerError', false, undefined],
    ['exa', 'badKey', 'SearchAuthError', true, undefined],
    ['exa', 'rateLimit', 'SearchRateLimited', false, 3000],
    ['exa', 'noCredits', 'SearchQuotaExceeded', true, undefined],
    ['exa', 'serverError', 'SearchServerError', false, undefined],
    ['brave', 'badKey', 'SearchAuthError', true, undefined],
    // Brave reports each window's reset; the exhausted one (remaining 0) resets in 2 s.
    ['brave', 'rateLimit', 'SearchRateLimited', false, 2000],
    ['brave', 'serverError', 'SearchServerError', false, undefined],
    ['searxng', 'jsonDisabled', 'SearchNotConfigured', true, undefined],
    ['searxng', 'rateLimit', 'SearchRateLimited', false, 5000],
    ['searxng', 'serverError', 'SearchServerError', false, undefined],
  ];

  it.each(cases)(
    '%s %s → %s (non-retryable: %s, retry delay %s ms)',
    async (provider, kase, type, final, delay) => {
      answer = ERRORS[provider]![kase]!;
      const err = await failure(webSearch(providersConfig([provider]), { query: 'q', max_results: 5 }));
      expect(err.type).toBe(type);
      expect(err.nonRetryable).toBe(final);
      expect(err.nextRetryDelay).toBe(delay);
    },
  );

  it('a bad key names the config field to fix and never shows the key', async () => {
    answer = ERRORS.tavily!.badKey!;
    const err = await failure(webSearch(providersConfig(['tavily']), { query: 'q', max_results: 5 }));
    expect(err.message).toMatch(
      /Tavily at http:\/\/127\.0\.0\.1:\d+ answered 401: Unauthorized: missing or invalid API key\. Check search\.web\.providers\.tavily\.apiKey/,
    );
  });

  it('a SearXNG instance without the JSON format says how to enable it', async () => {
    answer = ERRORS.searxng!.jsonDisabled!;
    const err = await failure(webSearch(providersConfig(['searxng']), { query: 'q', max_results: 5 }));
    expect(err.message).toMatch(/add "json" to search\.formats in the instance's settings\.yml/);
  });

  it('an unreachable provider is retried', async () => {
    const config = SearchConfigSchema.parse({
      web: { providers: { exa: { apiKey: KEY, baseUrl: 'http://127.0.0.1:9' } } },
    });
    const err = await failure(webSearch(config, { query: 'q', max_results: 5 }));
    expect(err.type).toBe('SearchUnreachable');
    expect(err.nonRetryable).toBe(false);
  });

  it('an answer in the wrong shape is a final SearchBadResponse', async () => {
    answer = { status: 200, body: { hits: [] } };
    const err = await failure(webSearch(providersConfig(['tavily']), { query: 'q', max_results: 5 }));
    expect(err.type).toBe('SearchBadResponse');
    expect(err.message).toMatch(/results: /);
  });
});

describe('choosing providers', () => {
  it('a provider that is not configured fails naming the config entry to add', async () => {
    const err = await failure(
      webSearch(providersConfig(['tavily']), { query: 'q', max_results: 5, provider: 'exa' }),
    );
    expect(err.type).toBe('SearchNotConfigured');
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toMatch(/"exa" is not configured on this worker: add search\.web\.providers\.exa/);
    expect(seen).toHaveLength(0);
  });

  it('no provider at all fails saying how to configure one', async () => {
    const err = await failure(webSearch(SearchConfigSchema.parse({}), { query: 'q', max_results: 5 }));
    expect(err.message).toMatch(
      /No web search provider is configured on this worker: add one of search\.web\.providers/,
    );
  });

  it('several default providers are queried and merged, a page found by both appearing once', async () => {
    // Both answer from the same fixture server: the Tavily and SearXNG fixtures share two pages.
    let calls = 0;
    const fixtures = [fixture(OK.tavily), fixture(OK.searxng)];
    const original = server.listeners('request')[0] as http.RequestListener;
    server.removeAllListeners('request');
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      answer = { status: 200, body: req.url?.startsWith('/search?') ? fixtures[1] : fixtures[0] };
      calls += 1;
      original(req, res);
    });
    try {
      const r = await webSearch(providersConfig(['tavily', 'searxng'], ['tavily', 'searxng']), {
        query: 'durable execution',
        max_results: 10,
      });
      expect(calls).toBe(2);
      expect(r.data.records.map((x) => [x.sign, x.url])).toEqual([
        ['d', 'https://docs.temporal.io/workflows'],
        ['d', 'https://en.wikipedia.org/wiki/Workflow_engine'],
      ]);
    } finally {
      server.removeAllListeners('request');
      server.on('request', original);
    }
  });
});
