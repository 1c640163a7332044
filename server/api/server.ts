/**
 * Runs the notifications API on Node's HTTP server, refusing to expose it beyond this machine
 * without a bearer token.
 */
import { formatZodIssues } from '../../shared/zod-issues';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { serve } from '@hono/node-server';
import type { Client } from '@temporalio/client';
import { z } from 'zod';
import { DEFAULT_RATE_LIMIT, createNotificationsApp } from './app';
import { parseCorsOrigins } from './hardening';
import { isLoopback } from './loopback';
import { webAssets } from '../web/assets';
import { checkOfferedTools } from '../mcp/tools';

export { isLoopback } from './loopback';
import type { NotificationsAppOptions } from './app';
import type { RateLimit } from './rate-limit';

/** Environment variables the API reads. */
export const API_ENV = {
  DURABLE_AGENT_API_TOKEN:
    'Bearer token every /api request must carry; required to bind a non-loopback address',
  DURABLE_AGENT_API_CORS_ORIGINS:
    'Comma-separated origins (https://app.example) whose web pages may call the API; default none',
  DURABLE_AGENT_API_RATE_BURST: 'Changes (create, mark read) one target may take at once; default 60',
  DURABLE_AGENT_API_RATE_PER_SECOND: 'Changes per second one target is refilled with; default 20',
  DURABLE_AGENT_MCP_TOOLS:
    'Comma-separated built-in tools /mcp offers (e.g. knowledge_base_search,sql_query); default get_time,calculator',
} as const;

/** Shortest accepted token: long enough that guessing it over HTTP is hopeless. */
const MIN_TOKEN_LENGTH = 16;

/** The API's configuration. */
export interface ApiConfig {
  token?: string;
  /** Origins allowed by CORS; empty = cross-origin requests are refused. */
  corsOrigins: string[];
  /** Per-target limit on changes. */
  rateLimit: RateLimit;
  /** The built-in tools `/mcp` offers (DURABLE_AGENT_MCP_TOOLS); the default set when absent. */
  mcpTools?: string[];
}

/** A configuration or startup problem, with what to do about it. */
export class ApiConfigError extends Error {
  override readonly name = 'ApiConfigError';
}

const EnvSchema = z.object({
  DURABLE_AGENT_API_TOKEN: z
    .string()
    .trim()
    .optional()
    .transform((s) => (s ? s : undefined))
    .refine((s) => s === undefined || (s.length >= MIN_TOKEN_LENGTH && !/\s/.test(s)), {
      // The message never echoes the value: it is a secret even when it is a bad one.
      error: `must be at least ${MIN_TOKEN_LENGTH} characters without spaces (e.g. openssl rand -hex 32)`,
    }),
  DURABLE_AGENT_API_RATE_BURST: z.coerce
    .number({ error: 'must be a whole number ≥ 1' })
    .int({ error: 'must be a whole number ≥ 1' })
    .min(1, { error: 'must be a whole number ≥ 1' })
    .max(1_000_000, { error: 'must be at most 1000000' })
    .default(DEFAULT_RATE_LIMIT.burst),
  DURABLE_AGENT_API_RATE_PER_SECOND: z.coerce
    .number({ error: 'must be a number > 0' })
    .positive({ error: 'must be a number > 0' })
    .max(1_000_000, { error: 'must be at most 1000000' })
    .default(DEFAULT_RATE_LIMIT.perSecond),
});

/** Reads {@link API_ENV} from `env`; throws {@link ApiConfigError} naming the bad variable. */
export function loadApiConfig(env: NodeJS.ProcessEnv = process.env): ApiConfig {
  const blankToUndefined = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v);
  const parsed = EnvSchema.safeParse({
    DURABLE_AGENT_API_TOKEN: env.DURABLE_AGENT_API_TOKEN,
    DURABLE_AGENT_API_RATE_BURST: blankToUndefined(env.DURABLE_AGENT_API_RATE_BURST),
    DURABLE_AGENT_API_RATE_PER_SECOND: blankToUndefined(env.DURABLE_AGENT_API_RATE_PER_SECOND),
  });
  if (!parsed.success) {
    throw new ApiConfigError(`Invalid API configuration: ${formatZodIssues(parsed.error)}`);
  }
  let corsOrigins: string[];
  try {
    corsOrigins = parseCorsOrigins(env.DURABLE_AGENT_API_CORS_ORIGINS);
  } catch (err) {
    throw new ApiConfigError(
      `Invalid API configuration: DURABLE_AGENT_API_CORS_ORIGINS: ${(err as Error).message}`,
    );
  }
  const mcpTools = env.DURABLE_AGENT_MCP_TOOLS?.split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  try {
    if (mcpTools?.length) checkOfferedTools(mcpTools);
  } catch (err) {
    throw new ApiConfigError(`Invalid API configuration: DURABLE_AGENT_MCP_TOOLS: ${(err as Error).message}`);
  }
  const rateLimit = {
    burst: parsed.data.DURABLE_AGENT_API_RATE_BURST,
    perSecond: parsed.data.DURABLE_AGENT_API_RATE_PER_SECOND,
  };
  return {
    ...(parsed.data.DURABLE_AGENT_API_TOKEN ? { token: parsed.data.DURABLE_AGENT_API_TOKEN } : {}),
    corsOrigins,
    rateLimit,
    ...(mcpTools?.length ? { mcpTools } : {}),
  };
}

/** Options of {@link startApiServer}. */
export interface ApiServerOptions extends Omit<NotificationsAppOptions, 'client'> {
  client: Client;
  host: string;
  /** 0 picks a free port. */
  port: number;
}

/** A running API server. */
export interface RunningApiServer {
  /** Base URL, e.g. `http://127.0.0.1:8787`. */
  url: string;
  port: number;
  /** Stops accepting requests and ends open streams. */
  close(): Promise<void>;
}

/**
 * Starts the API. Rejects with {@link ApiConfigError} when `host` is not a loopback address and no
 * token is set: anyone on the network could otherwise read and send notifications.
 */
export async function startApiServer(opts: ApiServerOptions): Promise<RunningApiServer> {
  if (!opts.token && !isLoopback(opts.host)) {
    throw new ApiConfigError(
      `Refusing to bind ${opts.host} without a token: set DURABLE_AGENT_API_TOKEN, or bind 127.0.0.1`,
    );
  }
  const app = createNotificationsApp(opts);
  // The web UI's bundle is built before the first page is asked for, so that page paints at once.
  if (opts.webUi !== false) await webAssets();
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: opts.host, port: opts.port }, () => resolve(s as Server));
    s.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const host = net.isIPv6(opts.host) ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Event streams never end by themselves; without this, close() would wait for every client to leave.
        server.closeAllConnections();
      }),
  };
}
