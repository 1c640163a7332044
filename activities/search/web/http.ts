/**
 * The HTTP boundary of the web search providers. Every way a request can fail leaves this module
 * as an `ApplicationFailure` typed with a {@link SearchErrorType}: a bad key or exhausted plan is
 * final, a rate limit is retried after the delay the provider asked for, a server error or a
 * network problem is retried with backoff. Keys are redacted from every message.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import { NON_RETRYABLE_SEARCH_ERRORS } from '../../../shared/tools/search';
import type { SearchErrorType } from '../../../shared/tools/search';

/** One request to a provider. */
export interface ProviderRequest<T> {
  /** Provider name as users know it, for messages: `Tavily`, `Brave Search`. */
  provider: string;
  /** The config entry to fix when the key is wrong, e.g. `search.web.providers.tavily.apiKey`. */
  keyField?: string;
  method: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  body?: unknown;
  responseSchema: z.ZodType<T>;
  timeoutMs: number;
  signal?: AbortSignal;
  fetchImpl: typeof fetch;
  /** Values never to show in a message. */
  secrets: string[];
  /** Extra statuses that mean "quota or plan exhausted" (final), e.g. Tavily's 432/433. */
  quotaStatuses?: number[];
}

/** Sends the request and returns the parsed answer, or throws a typed, redacted failure. */
export async function requestProvider<T>(req: ProviderRequest<T>): Promise<T> {
  const timeout = AbortSignal.timeout(req.timeoutMs);
  const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
  const where = `${req.provider} at ${origin(req.url)}`;
  let response: Response;
  let text: string;
  try {
    response = await req.fetchImpl(req.url, {
      method: req.method,
      headers: {
        accept: 'application/json',
        ...(req.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...req.headers,
      },
      ...(req.body === undefined ? {} : { body: JSON.stringify(req.body) }),
      signal,
    });
    text = await response.text();
  } catch (error) {
    // Cancellation of the activity is not a provider failure: let Temporal see it as such.
    if (req.signal?.aborted) throw error;
    const message = timeout.aborted
      ? `${where} did not answer within ${req.timeoutMs} ms; retrying.`
      : `${where} could not be reached (${networkReason(error)}); retrying. Check the base URL and the network.`;
    throw searchFailure('SearchUnreachable', message, req.secrets);
  }
  if (!response.ok) throw failureFromResponse(req, where, response, text);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw searchFailure(
      'SearchServerError',
      `${where} answered ${response.status} with a body that is not JSON (${excerpt(text)}); retrying.`,
      req.secrets,
    );
  }
  const parsed = req.responseSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const problem = issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'unexpected shape';
    throw searchFailure(
      'SearchBadResponse',
      `${where} answered in a shape this client does not understand (${problem}). Check that the base URL points at the ${req.provider} API.`,
      req.secrets,
    );
  }
  return parsed.data;
}

/** A failure with a search error type; `secrets` are replaced by `[redacted]` in the message. */
export function searchFailure(
  type: SearchErrorType,
  message: string,
  secrets: readonly string[],
  extra: { nextRetryDelay?: number; details?: Record<string, unknown> } = {},
): ApplicationFailure {
  let safe = message;
  for (const s of secrets) if (s) safe = safe.split(s).join('[redacted]');
  return ApplicationFailure.create({
    type,
    message: safe,
    nonRetryable: (NON_RETRYABLE_SEARCH_ERRORS as readonly string[]).includes(type),
    ...(extra.details ? { details: [extra.details] } : {}),
    ...(extra.nextRetryDelay === undefined ? {} : { nextRetryDelay: extra.nextRetryDelay }),
  });
}

function failureFromResponse(
  req: ProviderRequest<unknown>,
  where: string,
  response: Response,
  text: string,
): ApplicationFailure {
  const { status } = response;
  const said = `${where} answered ${status}: ${providerMessage(text).replace(/[.\s]+$/, '')}`;
  const details = { provider: req.provider, status };
  if (status === 401 || status === 403 || isBraveAuthError(text)) {
    const fix = req.keyField ? `Check ${req.keyField} in the worker's config` : 'Check the instance settings';
    return searchFailure('SearchAuthError', `${said}. ${fix}.`, req.secrets, { details });
  }
  if (status === 402 || req.quotaStatuses?.includes(status) || isQuotaError(text)) {
    return searchFailure(
      'SearchQuotaExceeded',
      `${said}. The plan's quota is used up: raise it with ${req.provider} or configure another provider.`,
      req.secrets,
      { details },
    );
  }
  if (status === 429) {
    const nextRetryDelay = retryDelayMs(response.headers, Date.now());
    return searchFailure(
      'SearchRateLimited',
      `${said}; retrying${nextRetryDelay === undefined ? ' with backoff' : ` in ${nextRetryDelay / 1000} s as asked`}.`,
      req.secrets,
      { details, ...(nextRetryDelay === undefined ? {} : { nextRetryDelay }) },
    );
  }
  if (status >= 400 && status < 500 && status !== 408) {
    return searchFailure('SearchBadRequest', `${said}.`, req.secrets, { details });
  }
  return searchFailure('SearchServerError', `${said}; retrying.`, req.secrets, { details });
}

/**
 * Brave answers an invalid subscription token with 422 rather than 401; its body names the case
 * (`SUBSCRIPTION_TOKEN_INVALID`), and retrying cannot fix it.
 */
function isBraveAuthError(text: string): boolean {
  return /"code"\s*:\s*"SUBSCRIPTION_TOKEN_INVALID"/.test(text);
}

/** Brave's `OPTION_NOT_IN_PLAN` / quota codes, and Exa's credit tags, are plan limits, not request errors. */
function isQuotaError(text: string): boolean {
  return /"(code|tag)"\s*:\s*"(OPTION_NOT_IN_PLAN|QUOTA_LIMITED|NO_MORE_CREDITS|API_KEY_BUDGET_EXCEEDED)"/.test(
    text,
  );
}

/**
 * How long the provider asked us to wait, in ms: `Retry-After` (seconds or an HTTP date), else
 * Brave's `X-RateLimit-Reset` (seconds until each window resets, e.g. `1, 1419704`) for the
 * windows whose `X-RateLimit-Remaining` is 0.
 */
export function retryDelayMs(headers: Headers, now: number): number | undefined {
  const retryAfter = headers.get('retry-after');
  if (retryAfter !== null) {
    const t = retryAfter.trim();
    const ms = /^\d+(\.\d+)?$/.test(t) ? Number(t) * 1000 : Date.parse(t) - now;
    if (Number.isFinite(ms) && ms > 0) return Math.ceil(ms);
  }
  const reset = headers.get('x-ratelimit-reset');
  if (reset !== null) {
    const resets = reset.split(',').map((s) => Number(s.trim()));
    const remaining = (headers.get('x-ratelimit-remaining') ?? '').split(',').map((s) => Number(s.trim()));
    const exhausted = resets.filter((r, i) => Number.isFinite(r) && r > 0 && remaining[i] === 0);
    const pick = exhausted.length ? Math.max(...exhausted) : resets.find((r) => Number.isFinite(r) && r > 0);
    if (pick !== undefined) return Math.ceil(pick * 1000);
  }
  return undefined;
}

/**
 * The provider's own error message: Tavily `{detail:{error}}`, Exa `{error, tag}`, Brave
 * `{type:'ErrorResponse', error:{code, detail}}`, SearXNG plain text or HTML (an excerpt).
 */
function providerMessage(text: string): string {
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    const detail = j.detail;
    if (detail && typeof detail === 'object' && typeof (detail as { error?: unknown }).error === 'string') {
      return (detail as { error: string }).error;
    }
    if (typeof detail === 'string') return detail;
    const error = j.error;
    if (typeof error === 'string') return typeof j.tag === 'string' ? `${error} (${j.tag})` : error;
    if (error && typeof error === 'object') {
      const e = error as { code?: unknown; detail?: unknown; message?: unknown };
      const msg = typeof e.detail === 'string' ? e.detail : typeof e.message === 'string' ? e.message : '';
      return typeof e.code === 'string' ? `${msg} (${e.code})` : msg || excerpt(text);
    }
    if (typeof j.message === 'string') return j.message;
  } catch {
    // Not JSON: fall through to an excerpt.
  }
  return excerpt(text);
}

function excerpt(text: string): string {
  const flat = text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return flat ? (flat.length > 200 ? `${flat.slice(0, 200)}…` : flat) : '(empty body)';
}

function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'the configured URL';
  }
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
