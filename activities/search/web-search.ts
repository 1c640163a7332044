import { Context, log } from '@temporalio/activity';
import type { SearchToolData, UncitedSearchRecord } from '../../shared/citations';
import { citationKey } from '../../shared/citations';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';
import type { WebProviderName, WebSearchArgs } from '../../shared/tools/search';
import { WEB_PROVIDER_SIGNS, WEB_PROVIDERS } from '../../shared/tools/search';
import type { WebSearchConfig } from './config';
import { pendingCitationContent } from './content';
import { searchFailure } from './web/http';
import type { WebHit, WebSearchProvider } from './web/providers';
import { createProvider } from './web/providers';

/** Dependencies of `web_search`; tests swap `fetchImpl`. */
export interface WebSearchDeps {
  web: WebSearchConfig;
  fetchImpl?: typeof fetch;
}

/** Providers a call uses: the one the model named, else the configured defaults, else the first configured. */
export function providersFor(
  web: WebSearchConfig,
  requested: WebProviderName | undefined,
): WebProviderName[] {
  if (requested) return [requested];
  if (web.default) return web.default;
  const first = WEB_PROVIDERS.find((name) => web.providers[name]);
  if (!first) {
    throw searchFailure(
      'SearchNotConfigured',
      'No web search provider is configured on this worker: add one of search.web.providers.' +
        `{${WEB_PROVIDERS.join(',')}} to the DURABLE_AGENT_CONFIG file (see the README), or use knowledge_base_search.`,
      [],
    );
  }
  return [first];
}

function toRecord(provider: WebSearchProvider, hit: WebHit, rank: number): UncitedSearchRecord {
  return {
    title: hit.title,
    url: hit.url,
    text: hit.text,
    published_date: hit.published_date,
    source_type: 'url',
    filename: null,
    score: hit.score,
    score_details: { provider: provider.name, rank },
    search_type: 'web_search',
    sign: WEB_PROVIDER_SIGNS[provider.name],
  };
}

/**
 * Merges several providers' ranked lists: round-robin by rank, so every provider's best results
 * come before anyone's tenth, and a page two providers found appears once, at its better rank.
 */
export function mergeRanked(lists: readonly UncitedSearchRecord[][], limit: number): UncitedSearchRecord[] {
  const out: UncitedSearchRecord[] = [];
  const seen = new Set<string>();
  const longest = Math.max(0, ...lists.map((l) => l.length));
  for (let i = 0; i < longest && out.length < limit; i++) {
    for (const list of lists) {
      const r = list[i];
      if (!r) continue;
      const key = citationKey(r);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(r);
      if (out.length >= limit) break;
    }
  }
  return out;
}

/** Creates the `web_search` activity. */
export function createWebSearch(
  deps: WebSearchDeps,
): (input: ToolActivityInput<WebSearchArgs>) => Promise<ToolResult> {
  const fetchImpl = deps.fetchImpl ?? fetch;
  return async function web_search({ args }) {
    const providers = providersFor(deps.web, args.provider).map((name) => createProvider(name, deps.web));
    const signal = Context.current().cancellationSignal;
    const settled = await Promise.allSettled(
      providers.map(async (p) => {
        const hits = await p.search(args.query, Math.min(args.max_results, p.maxResults), {
          fetchImpl,
          timeoutMs: deps.web.timeoutMs,
          signal,
        });
        return hits.map((h, i) => toRecord(p, h, i + 1));
      }),
    );
    const lists: UncitedSearchRecord[][] = [];
    const failures: unknown[] = [];
    settled.forEach((s, i) => {
      if (s.status === 'fulfilled') lists.push(s.value);
      else {
        failures.push(s.reason);
        // Messages are already redacted by the HTTP boundary.
        log.warn('web search provider failed', {
          provider: providers[i]?.name,
          error: s.reason instanceof Error ? s.reason.message : String(s.reason),
        });
      }
    });
    // With several providers, one failing still leaves an answer; with all failing, the first
    // failure decides whether the activity is retried.
    if (lists.length === 0) throw failures[0];
    const records = mergeRanked(lists, args.max_results);
    const data: SearchToolData = { records };
    return { content: pendingCitationContent(args.query, records.length), data };
  };
}
