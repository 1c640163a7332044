/**
 * The notifications HTTP API as a hono app: create, read (full or incremental), mark read, and a
 * Server-Sent Events stream. It is one more producer and reader of the public contract: it validates
 * with the contract's validator before signalling, and reads only through queries.
 */
import type { Client } from '@temporalio/client';
import { Hono } from 'hono';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { streamSSE } from 'hono/streaming';
import type { StreamChannel } from '../../activities/streaming';
import { liveChannelFromEnv } from '../../client/watch';
import { registerRunStreamRoute } from './run-stream';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { MarkReadInputSchema, NotificationInputSchema } from '../../shared/notifications/schema';
import type { NotificationHistory } from '../../shared/notifications/reads';
import {
  NotificationTargetError,
  explainTargetError,
  checkTarget,
  followNotifications,
  prepareNotification,
  readNotifications,
  readNotificationsSince,
  sendMarkRead,
  sendNotification,
} from '../../client/notification-client';
import { authorized } from './auth';
import { hardening } from './hardening';
import { registerApprovalRoutes } from './approvals';
import { registerQuestionRoutes } from './questions';
import { registerInboxRoutes } from './inboxes';
import type { NotificationTargetErrorCode } from '../../client/notification-client';
import { createRateLimiter } from './rate-limit';
import type { RateLimit } from './rate-limit';
import { registerRunRoutes } from './runs';
import { registerRunControlRoutes } from './run-control';
import { AgentClient } from '../../client/agent-client';
import { registerScheduleRoutes } from './schedules';
import { startSseHeartbeat } from './sse-heartbeat';
import { registerWebRoutes } from '../web/pages';
import { registerMcpRoute } from '../mcp/http';

/** One problem with a request, named by the field (or `(body)`, `(query)`) it is about. */
export interface ApiIssue {
  field: string;
  message: string;
}

/**
 * Every error response: `error` says what went wrong; `code` (for target errors) tells the cases
 * apart for programs; `issues` lists each bad field (400 only).
 */
export interface ApiErrorBody {
  error: string;
  code?: NotificationTargetErrorCode | 'rate_limited';
  issues?: ApiIssue[];
}

/** Options of {@link createNotificationsApp}. */
export interface NotificationsAppOptions {
  client: Client;
  /** Task queue an `inbox:` target is started on when its first notification arrives. */
  taskQueue: string;
  /** When set, every `/api/*` request needs `Authorization: Bearer <token>`. */
  token?: string;
  /** Origins whose web pages may call the API (CORS); default none. See `hardening.ts`. */
  corsOrigins?: readonly string[];
  /** Milliseconds between the stream's `notificationsSince` polls; default 500. */
  pollIntervalMs?: number;
  /** Milliseconds between heartbeat comments on a quiet stream, so proxies keep it open; default 15000. */
  heartbeatMs?: number;
  /** Where unexpected errors are reported; default stderr. Never receives request headers. */
  logError?: (message: string) => void;
  /**
   * Changes (create, mark read) allowed per target: a burst, refilled at a steady rate; over it a
   * request gets 429 with `Retry-After`. Default {@link DEFAULT_RATE_LIMIT}.
   */
  rateLimit?: RateLimit;
  /** Serve the web UI's pages (`/`, `/inbox/<user>`, `/runs`, `/runs/<id>`); default true. */
  webUi?: boolean;
  /** The MCP endpoint `/mcp` and the built-in tools it offers (see `../mcp/http.ts`); `false`: none. */
  mcp?: { tools?: readonly string[]; scriptsDir?: string } | false;
  /** The live-token channel `GET /api/runs/:id/stream` reads; default the one DURABLE_AGENT_STREAM names, null: none. */
  liveTokens?: StreamChannel | null;
}

/**
 * Default per-target rate limit: bursts of 60 changes, 20 per second sustained. A flood at this
 * rate of maximum-size notifications adds about 2 MB of history per second, which an inbox sheds by
 * continuing as new every couple of seconds; the workflow's own high-water mark is the backstop.
 */
export const DEFAULT_RATE_LIMIT: RateLimit = Object.freeze({ burst: 60, perSecond: 20 });

/** HTTP status of each target error code. */
const STATUS_OF: Record<NotificationTargetErrorCode, ContentfulStatusCode> = {
  invalid_target: 400,
  invalid_input: 400,
  not_found: 404,
  not_a_notification_target: 404,
  busy: 429,
  too_large: 502,
  no_worker: 503,
  unreachable: 503,
};

/** Seconds a client should wait before retrying each retryable code. */
const RETRY_AFTER_SECONDS: Partial<Record<NotificationTargetErrorCode, number>> = {
  busy: 2,
  no_worker: 5,
  unreachable: 5,
};

/**
 * Request bodies are small JSON objects; the largest valid notification (50,000-character detail of
 * 3-byte characters plus a 10,000-character message) fits well under this.
 */
const MAX_BODY_BYTES = 512 * 1024;

/** Fields a create request may carry: the target plus the producer input of the contract. */
const CREATE_FIELDS = new Set(['target', ...Object.keys(NotificationInputSchema.shape)]);

function bearerAuth(token: string): MiddlewareHandler {
  return async (c, next) => {
    if (!authorized(c, token)) {
      c.header('WWW-Authenticate', 'Bearer');
      return c.json<ApiErrorBody>(
        { error: 'Missing or invalid bearer token (Authorization: Bearer <token>, or log in at /login)' },
        401,
      );
    }
    await next();
  };
}

function invalid(c: Context, issues: ApiIssue[]) {
  return c.json<ApiErrorBody>({ error: issues.map((i) => i.message).join('; '), issues }, 400);
}

/**
 * Field-level issues from the contract validator's message: one of its three contract messages, or
 * `; `-joined "<field> must …" messages from its type and length checks.
 */
function contractIssues(error: string): ApiIssue[] {
  if (error.startsWith('Invalid notification type:')) return [{ field: 'type', message: error }];
  if (error.startsWith('Invalid notification priority:')) return [{ field: 'priority', message: error }];
  if (error === 'Message is required') return [{ field: 'message', message: error }];
  return error
    .split('; ')
    .map((message) => ({ field: /^(\w+) (?:must|is) /.exec(message)?.[1] ?? '(body)', message }));
}

/** The JSON object body, or issues saying why there is none. */
async function jsonObject(
  c: Context,
): Promise<{ ok: true; body: Record<string, unknown> } | { ok: false; issues: ApiIssue[] }> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    return {
      ok: false,
      issues: [{ field: '(body)', message: 'body must be JSON (Content-Type: application/json)' }],
    };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, issues: [{ field: '(body)', message: 'body must be a JSON object' }] };
  }
  return { ok: true, body: body as Record<string, unknown> };
}

/** Reads `since` (a whole number ≥ 0) and `guid`, or the page `limit` and `before`, from the query string. */
function sinceParams(
  c: Context,
):
  | { ok: true; since?: number; guid?: string; limit?: number; before?: number }
  | { ok: false; issues: ApiIssue[] } {
  const rawSince = c.req.query('since');
  const guid = c.req.query('guid');
  const rawLimit = c.req.query('limit');
  const rawBefore = c.req.query('before');
  const issues: ApiIssue[] = [];
  if (rawSince !== undefined && !/^\d{1,15}$/.test(rawSince)) {
    issues.push({ field: 'since', message: 'since must be an update number (a whole number ≥ 0)' });
  }
  if (guid !== undefined && rawSince === undefined) {
    issues.push({ field: 'guid', message: 'guid is only meaningful with since' });
  }
  if (rawLimit !== undefined && !/^[1-9]\d{0,8}$/.test(rawLimit)) {
    issues.push({ field: 'limit', message: 'limit must be a whole number ≥ 1' });
  }
  if (rawBefore !== undefined && !/^\d{1,9}$/.test(rawBefore)) {
    issues.push({ field: 'before', message: 'before must be a notification number (a whole number ≥ 0)' });
  }
  if (rawSince !== undefined && (rawLimit !== undefined || rawBefore !== undefined)) {
    issues.push({ field: 'since', message: 'since cannot be combined with limit or before' });
  }
  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    ...(rawSince !== undefined ? { since: Number(rawSince) } : {}),
    ...(guid ? { guid } : {}),
    ...(rawLimit !== undefined ? { limit: Number(rawLimit) } : {}),
    ...(rawBefore !== undefined ? { before: Number(rawBefore) } : {}),
  };
}

function withUnread(target: string, history: NotificationHistory) {
  return { target, ...history, unread: history.notifications.filter((n) => !n.read).length };
}

/** A target error as a response, with `Retry-After` where waiting helps. */
function targetErrorResponse(c: Context, err: NotificationTargetError) {
  const retryAfter = RETRY_AFTER_SECONDS[err.code];
  if (retryAfter !== undefined) c.header('Retry-After', String(retryAfter));
  return c.json<ApiErrorBody>({ error: err.message, code: err.code }, STATUS_OF[err.code]);
}

/**
 * Builds the app:
 * - `GET /healthz` → `{ status: "ok", openStreams }` (no token needed)
 * - `POST /api/notifications` → 202 `{ id, target }`
 * - `GET /api/notifications?target=…[&since=N[&guid=G]]` → the history, or what changed after N
 * - `POST /api/notifications/read` `{ target, ids | all }` → 202 `{ target, unread }`
 * - `GET /api/notifications/stream?target=…[&since=N&guid=G]` → SSE: `snapshot` (or, with `since`, a
 *   `resume` event holding what changed after update N), then `changes` / `reset` events
 * - `GET /api/runs/:id/answer` → a run's answer with its citations resolved (see `runs.ts`)
 * - `GET /api/runs`, `GET /api/runs/:id[/events|/transcript]` → runs from visibility, a run's state (see `runs.ts`)
 * - `GET /api/approvals`, `POST /api/approvals/:run/:id` → what waits for approval, decisions (see `approvals.ts`)
 * - `GET /api/questions`, `POST /api/questions/:run/:id` → what waits for input, answers (see `questions.ts`)
 * - `GET /api/inboxes` → the users whose inbox exists (see `inboxes.ts`)
 * - `GET|POST /api/schedules`, `…/:id[/pause|/unpause|/trigger]`, `DELETE …/:id` → recurring runs (see `schedules.ts`)
 * - `POST /mcp` → the MCP server over Streamable HTTP, behind the same token (see `../mcp/http.ts`)
 * - `GET /`, `/inbox/:user`, `/runs`, `/runs/:id`, `/assets/*`, `/login` → the web UI (see `../web/pages.ts`)
 *
 * Errors (each with `code` where it is about the target): 400 with field-level issues, 401 without
 * a valid token (when one is configured), 404 for an unknown target, 413 for a body over 512 KiB,
 * 429 with `Retry-After` over the per-target rate limit or while the target is busy, 502 for an
 * answer too large for Temporal, 503 with `Retry-After` when no worker answers or Temporal cannot
 * be reached.
 */
export function createNotificationsApp(opts: NotificationsAppOptions): Hono {
  const { client, taskQueue } = opts;
  const pollIntervalMs = opts.pollIntervalMs ?? 500;
  const heartbeatMs = opts.heartbeatMs ?? 15_000;
  const logError = opts.logError ?? ((m: string) => console.error(m));
  const app = new Hono();

  const limiter = createRateLimiter(opts.rateLimit ?? DEFAULT_RATE_LIMIT);

  app.onError((err, c) => {
    const explained = explainTargetError(err, c.req.query('target') ?? '');
    if (explained instanceof NotificationTargetError) return targetErrorResponse(c, explained);
    logError(`API error on ${c.req.method} ${c.req.path}: ${err.message}`);
    return c.json<ApiErrorBody>({ error: 'Internal error' }, 500);
  });

  /** Takes one change for `target` from its budget, or answers 429 with when to retry. */
  const overRate = (c: Context, target: string) => {
    const waitMs = limiter.take(target);
    if (waitMs === 0) return undefined;
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    c.header('Retry-After', String(seconds));
    return c.json<ApiErrorBody>(
      {
        error: `Too many changes to ${target}: the limit is ${limiter.limit.burst} at once and ${limiter.limit.perSecond} per second; retry in ${seconds} s`,
        code: 'rate_limited',
      },
      429,
    );
  };
  app.notFound((c) => c.json<ApiErrorBody>({ error: `No route ${c.req.method} ${c.req.path}` }, 404));

  // Open event streams, reported by /healthz: a number that keeps growing means streams are not ending.
  let openStreams = 0;
  app.use('*', hardening({ tokenRequired: Boolean(opts.token), corsOrigins: opts.corsOrigins ?? [] }));
  app.get('/healthz', (c) => c.json({ status: 'ok', openStreams }));

  if (opts.token) app.use('/api/*', bearerAuth(opts.token));
  app.use(
    '/api/*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => {
        // The rest of the body is never read, so this connection cannot carry another request.
        c.header('Connection', 'close');
        return c.json<ApiErrorBody>({ error: `Body larger than ${MAX_BODY_BYTES} bytes` }, 413);
      },
    }),
  );

  app.post('/api/notifications', async (c) => {
    const parsed = await jsonObject(c);
    if (!parsed.ok) return invalid(c, parsed.issues);
    const { target: rawTarget, ...fields } = parsed.body;
    const issues: ApiIssue[] = [];
    const target = checkTarget(rawTarget);
    if (!target.ok) issues.push({ field: 'target', message: target.error });
    // The validator ignores unknown keys; an API caller's typo (displayTime) should not vanish silently.
    for (const key of Object.keys(parsed.body)) {
      if (!CREATE_FIELDS.has(key)) issues.push({ field: key, message: `unknown field ${key}` });
    }
    const prepared = prepareNotification(fields);
    if (!prepared.ok) issues.push(...contractIssues(prepared.error));
    if (issues.length > 0 || !target.ok || !prepared.ok) return invalid(c, issues);
    const limited = overRate(c, target.target);
    if (limited) return limited;
    const stored = await sendNotification(client, taskQueue, target.target, prepared.notification);
    return c.json({ ...stored, target: target.target }, 202);
  });

  app.get('/api/notifications', async (c) => {
    const target = checkTarget(c.req.query('target'));
    const since = sinceParams(c);
    const issues = [
      ...(target.ok ? [] : [{ field: 'target', message: target.error }]),
      ...(since.ok ? [] : since.issues),
    ];
    if (!target.ok || !since.ok) return invalid(c, issues);
    if (since.since === undefined) {
      const pageInput = {
        ...(since.limit !== undefined ? { limit: since.limit } : {}),
        ...(since.before !== undefined ? { before: since.before } : {}),
      };
      return c.json(withUnread(target.target, await readNotifications(client, target.target, pageInput)));
    }
    return c.json({
      target: target.target,
      ...(await readNotificationsSince(client, target.target, since.since, since.guid)),
    });
  });

  app.post('/api/notifications/read', async (c) => {
    const parsed = await jsonObject(c);
    if (!parsed.ok) return invalid(c, parsed.issues);
    const { target: rawTarget, ...rest } = parsed.body;
    const target = checkTarget(rawTarget);
    const input = MarkReadInputSchema.safeParse(rest);
    const issues: ApiIssue[] = target.ok ? [] : [{ field: 'target', message: target.error }];
    if (!input.success) {
      for (const i of input.error.issues) {
        const field = i.code === 'unrecognized_keys' ? i.keys.join(', ') : i.path.join('.') || '(body)';
        issues.push({
          field,
          message: i.code === 'unrecognized_keys' ? `unknown field ${field}` : i.message,
        });
      }
    }
    if (!target.ok || !input.success) return invalid(c, issues);
    const limited = overRate(c, target.target);
    if (limited) return limited;
    const result = await sendMarkRead(client, target.target, input.data);
    return c.json({ target: target.target, ...result }, 202);
  });

  app.get('/api/notifications/stream', async (c) => {
    const target = checkTarget(c.req.query('target'));
    const since = sinceParams(c);
    const issues = [
      ...(target.ok ? [] : [{ field: 'target', message: target.error }]),
      ...(since.ok ? [] : since.issues),
    ];
    if (since.ok && (since.limit !== undefined || since.before !== undefined)) {
      issues.push({ field: 'limit', message: 'a stream takes since and guid, not limit or before' });
    }
    if (!target.ok || !since.ok || issues.length > 0) return invalid(c, issues);
    // Read before streaming, so an unknown target is a plain 404 rather than an error inside a 200 stream.
    // A client that reconnects with `since` gets what changed meanwhile (`resume`) instead of everything.
    const first =
      since.since === undefined
        ? ({
            kind: 'snapshot',
            ...withUnread(target.target, await readNotifications(client, target.target)),
          } as const)
        : ({
            kind: 'resume',
            target: target.target,
            ...(await readNotificationsSince(client, target.target, since.since, since.guid)),
          } as const);
    return streamSSE(c, async (stream) => {
      openStreams += 1;
      const stop = new AbortController();
      stream.onAbort(() => stop.abort());
      const { kind, ...firstData } = first;
      await stream.writeSSE({ event: kind, data: JSON.stringify(firstData) });
      const heartbeat = startSseHeartbeat(
        (t) => stream.write(t),
        heartbeatMs,
        () => stop.abort(),
      );
      try {
        await followNotifications(client, target.target, {
          from: first,
          intervalMs: pollIntervalMs,
          signal: stop.signal,
          onEvent: async (event) => {
            const { kind, ...data } = event;
            heartbeat.wrote();
            await stream.writeSSE({ event: kind, data: JSON.stringify(data) });
          },
        });
      } catch (err) {
        const explained = explainTargetError(err, target.target);
        const known = explained instanceof NotificationTargetError;
        if (!known) logError(`API stream error: ${(err as Error).message}`);
        await stream.writeSSE({
          event: 'error',
          data: JSON.stringify(
            known ? { error: explained.message, code: explained.code } : { error: 'Internal error' },
          ),
        });
      } finally {
        heartbeat.stop();
        openStreams -= 1;
      }
    });
  });

  registerRunRoutes(app, client);
  registerRunControlRoutes(app, new AgentClient({ client, taskQueue }), overRate);
  registerRunStreamRoute(app, client, {
    channel: opts.liveTokens === undefined ? liveChannelFromEnv() : opts.liveTokens,
    heartbeatMs,
  });
  registerApprovalRoutes(app, client);
  registerQuestionRoutes(app, client);
  registerInboxRoutes(app, client);
  registerScheduleRoutes(app, client, taskQueue);
  if (opts.mcp !== false) {
    registerMcpRoute(app, {
      client,
      taskQueue,
      ...opts.mcp,
      ...(opts.token ? { token: opts.token } : {}),
      logError,
    });
  }
  if (opts.webUi !== false) registerWebRoutes(app, opts.token ? { token: opts.token } : {});

  return app;
}
