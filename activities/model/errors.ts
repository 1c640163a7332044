/**
 * The HTTP boundary of the model APIs. Every way a model call can fail (an HTTP error status, an
 * unreachable server, a timeout, a body we cannot read) leaves this module as an `ApplicationFailure`
 * with a type from {@link MODEL_ERROR_TYPES}, so retry policies and workflows decide on a closed set of
 * names instead of on vendor error shapes. Failure messages are redacted: API keys never reach
 * workflow history or logs.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import type { SseEvent } from './sse';
import { createSseParser } from './sse';

/** Every error type the model providers fail with. */
export const MODEL_ERROR_TYPES = [
  /** 401/403: the key is missing, wrong or lacks access. Not retried. */
  'ModelAuthError',
  /** 400/404/422 and other 4xx: the API rejected the request itself (model name, schema, size). Not retried. */
  'ModelBadRequest',
  /** A 2xx answer whose JSON does not have the documented shape: an incompatible server. Not retried. */
  'ModelBadResponse',
  /** 429: throttled. Retried, after the delay the API asked for when it said one. */
  'ModelRateLimited',
  /** 408/409/5xx (Anthropic's 529 "overloaded" included), or a body that is not JSON. Retried. */
  'ModelServerError',
  /** Connection refused or reset, DNS failure, or no answer in time. Retried. */
  'ModelUnreachable',
  /** The worker has no configuration for this provider (e.g. no API key). Not retried. */
  'ModelNotConfigured',
] as const;

/** An error type a model provider fails with; see {@link MODEL_ERROR_TYPES}. */
export type ModelErrorType = (typeof MODEL_ERROR_TYPES)[number];

/** The APIs this module talks to, as named in failure messages. */
export type ModelApi = 'OpenAI' | 'Anthropic';

/** One JSON POST to a model API. */
export interface ModelApiRequest<T> {
  api: ModelApi;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  /** The documented shape of a successful answer; anything else is a `ModelBadResponse`. */
  responseSchema: z.ZodType<T>;
  timeoutMs: number;
  /** The activity's cancellation signal. */
  signal?: AbortSignal;
  fetchImpl: typeof fetch;
  /** Values that must never appear in a failure message: the API key. */
  secrets: string[];
}

/**
 * POSTs `body` as JSON and returns the parsed answer, or throws an `ApplicationFailure` typed with a
 * {@link ModelErrorType}. Cancellation through `signal` is rethrown untouched so Temporal reports the
 * activity as cancelled rather than failed.
 */
export async function postModelApi<T>(req: ModelApiRequest<T>): Promise<T> {
  const timeout = AbortSignal.timeout(req.timeoutMs);
  const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
  let response: Response;
  let text: string;
  try {
    response = await req.fetchImpl(req.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...req.headers },
      body: JSON.stringify(req.body),
      signal,
    });
    // Read inside the same try: a connection can drop, or the timeout fire, while the body streams in.
    text = await response.text();
  } catch (error) {
    if (req.signal?.aborted) throw error;
    throw unreachable(req, timeout, error);
  }
  if (!response.ok) throw failureFromResponse(req, response, text);
  return parseAnswer(req, response.status, text);
}

/** The failure for a request that got no (whole) answer: the timeout fired, or the connection failed. */
function unreachable(
  req: ModelApiRequest<unknown>,
  timeout: AbortSignal,
  error: unknown,
  during = '',
): ApplicationFailure {
  const where = `${req.api} API at ${origin(req.url)}`;
  const message = timeout.aborted
    ? `${where} did not answer within ${req.timeoutMs} ms${during}; retrying. A large max_tokens on a slow server may need a longer timeout.`
    : during
      ? `${where} cut the connection${during} (${describeNetworkError(error)}); retrying.`
      : `${where} could not be reached (${describeNetworkError(error)}); retrying. Check that the server is running and the base URL is right.`;
  return modelFailure(
    'ModelUnreachable',
    message,
    req.secrets,
    error instanceof Error ? { cause: error } : {},
  );
}

/** A 2xx body as JSON of the documented shape: `ModelServerError` when it is not JSON, `ModelBadResponse` when not the shape. */
function parseAnswer<T>(req: ModelApiRequest<T>, status: number, text: string): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw modelFailure(
      'ModelServerError',
      `${req.api} API at ${origin(req.url)} answered ${status} with a body that is not JSON (${excerpt(text)}); retrying.`,
      req.secrets,
    );
  }
  const parsed = req.responseSchema.safeParse(json);
  if (!parsed.success) throw badShape(req, parsed.error);
  return parsed.data;
}

function badShape(req: ModelApiRequest<unknown>, error: z.ZodError | string): ApplicationFailure {
  const issue = typeof error === 'string' ? undefined : error.issues[0];
  const problem =
    typeof error === 'string'
      ? error
      : issue
        ? `${issue.path.join('.') || 'body'}: ${issue.message}`
        : 'unexpected shape';
  return modelFailure(
    'ModelBadResponse',
    `${req.api} API at ${origin(req.url)} answered in a shape this provider does not understand (${problem}). Check that the base URL points at a ${req.api}-compatible API.`,
    req.secrets,
  );
}

/**
 * A streamed answer being read: its events in order, and the failures a provider reading them may
 * need, classified and redacted like those of {@link postModelApi}. Iterating it throws a typed
 * `ApplicationFailure` when the connection drops or the timeout fires mid-stream, and the signal's
 * reason when the activity is cancelled.
 */
export interface ModelEventStream {
  events: AsyncIterable<SseEvent>;
  /** One event's data as JSON of `schema`: `ModelServerError` when it is not JSON, `ModelBadResponse` when not the shape. */
  parse<T>(data: string, schema: z.ZodType<T>): T;
  /** `ModelBadResponse` for a stream whose events do not add up to an answer (`problem` says why). */
  badResponse(problem: string): ApplicationFailure;
  /**
   * For an error the API reported inside the stream (after its 200): classified as an HTTP answer
   * with `status` and `body` would have been, so an overloaded server mid-stream is retried the same.
   */
  apiError(status: number, body: string): ApplicationFailure;
  /** A retryable `ModelServerError` for a stream that ended before its last event (`after` says what came). */
  cut(after: string): ApplicationFailure;
}

/** The answer to a streaming request: events, or a whole JSON answer from a server that does not stream. */
export type ModelStreamAnswer<T> = { stream: ModelEventStream } | { json: T };

/**
 * POSTs `body` (which asks for a stream) and opens the `text/event-stream` answer. An HTTP error
 * status comes before any stream and fails exactly as with {@link postModelApi}; so do an
 * unreachable server and a timeout, which covers the whole stream (one model call, as without
 * streaming). A server that ignores the request for a stream and answers JSON is read as without
 * streaming (`responseSchema`).
 */
export async function streamModelApi<T>(req: ModelApiRequest<T>): Promise<ModelStreamAnswer<T>> {
  const timeout = AbortSignal.timeout(req.timeoutMs);
  const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
  let response: Response;
  try {
    response = await req.fetchImpl(req.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream, application/json',
        ...req.headers,
      },
      body: JSON.stringify(req.body),
      signal,
    });
  } catch (error) {
    if (req.signal?.aborted) throw error;
    throw unreachable(req, timeout, error);
  }
  const contentType = response.headers.get('content-type') ?? '';
  if (!response.ok || !contentType.includes('text/event-stream') || !response.body) {
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      if (req.signal?.aborted) throw error;
      throw unreachable(req, timeout, error);
    }
    if (!response.ok) throw failureFromResponse(req, response, text);
    return { json: parseAnswer(req, response.status, text) };
  }
  const body = response.body;
  const where = `${req.api} API at ${origin(req.url)}`;
  let count = 0;
  async function* events(): AsyncGenerator<SseEvent> {
    const parser = createSseParser();
    const decoder = new TextDecoder();
    const reader = body.getReader();
    try {
      for (;;) {
        let chunk: { done: true; value?: undefined } | { done: false; value: Uint8Array };
        try {
          chunk = await reader.read();
        } catch (error) {
          if (req.signal?.aborted) throw req.signal.reason;
          throw unreachable(req, timeout, error, ` while streaming its answer (after ${count} events)`);
        }
        const parsed = chunk.done
          ? [...parser.push(decoder.decode()), ...parser.end()]
          : parser.push(decoder.decode(chunk.value, { stream: true }));
        for (const event of parsed) {
          count++;
          yield event;
        }
        if (chunk.done) return;
      }
    } finally {
      // Stopping early (an error, or the last event read) must not leave the connection open.
      reader.cancel().catch(() => undefined);
    }
  }
  return {
    stream: {
      events: events(),
      parse: (data, schema) => {
        let json: unknown;
        try {
          json = JSON.parse(data);
        } catch {
          throw modelFailure(
            'ModelServerError',
            `${where} streamed an event that is not JSON (${excerpt(data)}); retrying.`,
            req.secrets,
          );
        }
        const parsed = schema.safeParse(json);
        if (!parsed.success) throw badShape(req, parsed.error);
        return parsed.data;
      },
      badResponse: (problem) => badShape(req, problem),
      apiError: (status, text) =>
        failureFromResponse(req, new Response(null, { status, statusText: 'in stream' }), text),
      cut: (after) =>
        modelFailure(
          'ModelServerError',
          `${where} ended its streamed answer early, ${after}; retrying.`,
          req.secrets,
        ),
    },
  };
}

/** The failure for a provider the worker has no configuration for; `what` says what to set. */
export function modelNotConfigured(api: ModelApi, what: string): ApplicationFailure {
  return modelFailure('ModelNotConfigured', `${api} is not configured on this worker: ${what}`, []);
}

/** Maps an HTTP error status to a failure carrying the API's own message and any retry delay it asked for. */
function failureFromResponse(
  req: ModelApiRequest<unknown>,
  response: Response,
  text: string,
): ApplicationFailure {
  const { status } = response;
  const where = `${req.api} API at ${origin(req.url)}`;
  const said = `${where} answered ${status}${response.statusText ? ` ${response.statusText}` : ''}: ${apiErrorMessage(text)}`;
  const requestId = response.headers.get('x-request-id') ?? response.headers.get('request-id');
  const details = { api: req.api, status, ...(requestId ? { requestId } : {}) };

  if (status === 401 || status === 403) {
    return modelFailure(
      'ModelAuthError',
      `${said}. Check the ${req.api} API key the worker is configured with${status === 403 ? ' and that it may use this model' : ''}.`,
      req.secrets,
      { details },
    );
  }
  if (status >= 400 && status < 500 && status !== 408 && status !== 409 && status !== 429) {
    const hint =
      status === 404
        ? 'Check the model name and the base URL.'
        : 'Check the model name, the tool schemas and max tokens.';
    return modelFailure('ModelBadRequest', `${said}. ${hint}`, req.secrets, { details });
  }
  const nextRetryDelay = retryDelayMs(response.headers, Date.now());
  const retrying =
    nextRetryDelay === undefined ? 'retrying' : `retrying in ${nextRetryDelay / 1000} s as asked`;
  return modelFailure(
    status === 429 ? 'ModelRateLimited' : 'ModelServerError',
    `${said}; ${retrying}.`,
    req.secrets,
    {
      details,
      ...(nextRetryDelay === undefined ? {} : { nextRetryDelay }),
    },
  );
}

/**
 * How long the API asked us to wait, in ms. An explicit `retry-after-ms` (OpenAI) or `Retry-After`
 * (seconds or HTTP date) wins; otherwise the latest reset time of any rate limit reported exhausted
 * (`x-ratelimit-remaining-tokens: 0` with `x-ratelimit-reset-tokens: 1m30s` from OpenAI,
 * `anthropic-ratelimit-tokens-remaining: 0` with an RFC 3339 `…-reset` from Anthropic).
 */
function retryDelayMs(headers: Headers, now: number): number | undefined {
  const explicitMs = Number(headers.get('retry-after-ms') ?? NaN);
  if (explicitMs > 0) return Math.ceil(explicitMs);
  const retryAfter = headers.get('retry-after');
  if (retryAfter !== null) {
    const delay = parseDelayMs(retryAfter, now);
    if (delay !== undefined) return delay;
  }
  let latestReset: number | undefined;
  headers.forEach((value, name) => {
    if (!name.includes('ratelimit') || !name.includes('remaining') || value.trim() !== '0') return;
    const reset = headers.get(name.replace('remaining', 'reset'));
    const delay = reset === null ? undefined : parseDelayMs(reset, now);
    if (delay !== undefined && (latestReset === undefined || delay > latestReset)) latestReset = delay;
  });
  return latestReset;
}

const DURATION_UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

/** Parses seconds (`7`), a Go-style duration (`1m30s`, `20ms`) or a date (HTTP date, RFC 3339) into a positive delay. */
function parseDelayMs(value: string, now: number): number | undefined {
  const text = value.trim();
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(text)) {
    ms = Number(text) * 1000;
  } else if (/^(\d+(\.\d+)?(ms|h|m|s))+$/.test(text)) {
    ms = 0;
    for (const [, amount, unit] of text.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) {
      ms += Number(amount) * (DURATION_UNIT_MS[unit ?? ''] ?? 0);
    }
  } else {
    ms = Date.parse(text) - now;
  }
  return Number.isFinite(ms) && ms > 0 ? Math.ceil(ms) : undefined;
}

/**
 * The API's own error message. OpenAI and vLLM send `{error:{message}}`, Anthropic
 * `{type:'error', error:{type, message}}`, Ollama `{error:'…'}`, older vLLM `{message}`; a proxy may
 * send HTML, of which a short excerpt is kept.
 */
function apiErrorMessage(text: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return excerpt(text);
  }
  if (isRecord(body)) {
    const { error } = body;
    if (typeof error === 'string') return excerpt(error);
    if (isRecord(error) && typeof error.message === 'string') {
      return excerpt(typeof error.type === 'string' ? `${error.message} (${error.type})` : error.message);
    }
    if (typeof body.message === 'string') return excerpt(body.message);
  }
  return excerpt(text);
}

/** Builds the failure, redacting secrets from the message on the way out. */
function modelFailure(
  type: ModelErrorType,
  message: string,
  secrets: string[],
  extra: { details?: Record<string, unknown>; nextRetryDelay?: number; cause?: Error } = {},
): ApplicationFailure {
  const retryable = type === 'ModelRateLimited' || type === 'ModelServerError' || type === 'ModelUnreachable';
  return ApplicationFailure.create({
    type,
    message: redact(message, secrets),
    nonRetryable: !retryable,
    ...(extra.details ? { details: [extra.details] } : {}),
    ...(extra.nextRetryDelay === undefined ? {} : { nextRetryDelay: extra.nextRetryDelay }),
    ...(extra.cause ? { cause: extra.cause } : {}),
  });
}

/**
 * Patterns of credentials APIs are known to echo: OpenAI repeats a masked key in its 401 message
 * (`sk-proj-****abcd`), proxies echo `Authorization` headers, and any long opaque token is suspect.
 */
const SECRET_PATTERNS = [
  /\b(?:sk|rk|pk|sess)-[\w*.-]{4,}/g,
  /\bBearer\s+[\w.~+/=*-]+/gi,
  /\bx-api-key["':=\s]+[\w.*-]+/gi,
  /\b[\w-]{40,}\b/g,
];

/** Removes the configured secrets and anything shaped like a key. */
function redact(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret) out = out.split(secret).join('[redacted]');
  }
  for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, '[redacted]');
  return out;
}

/** Scheme, host and port only: a base URL may carry credentials in its user info or query. */
function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}

/**
 * undici reports `fetch failed` and hides the useful part (`connect ECONNREFUSED …`, or an
 * AggregateError with only a `code` when every address of a host refused) in `cause`. Duck-typed,
 * because errors from Node internals fail `instanceof Error` inside other realms such as jest's VM.
 */
function describeNetworkError(error: unknown): string {
  const cause = isRecord(error) && isRecord(error.cause) ? error.cause : error;
  if (!isRecord(cause)) return String(cause);
  const message = typeof cause.message === 'string' ? cause.message : '';
  const code = typeof cause.code === 'string' ? cause.code : '';
  return (
    [code && !message.includes(code) ? code : '', message].filter(Boolean).join(' ') ||
    'unknown network error'
  );
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (!flat) return '(empty body)';
  return flat.length > 500 ? `${flat.slice(0, 500)}…` : flat;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
