/**
 * The codec server Temporal's Web UI (and `temporal --codec-endpoint`) calls to show encrypted
 * payloads as plain text: `POST /decode` and `POST /encode` with `{"payloads": [...]}` in the
 * proto JSON form (metadata values and data base64). Only the UI's origin gets CORS headers, so no
 * other web page can have payloads decrypted; with `DURABLE_AGENT_CODEC_TOKEN` set every request
 * needs `Authorization: Bearer <token>`, and without one it binds only loopback addresses.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Payload } from '@temporalio/common';
import { Hono } from 'hono';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { TEMPORAL_LIMITS } from '../shared/temporal-limits';
import type { CodecKeys } from '../workers/payload-codec';
import { openPayload, sealPayload } from '../workers/payload-codec';
import { isLoopback } from './api/loopback';

/** Options of {@link startCodecServer}. */
export interface CodecServerOptions {
  keys: CodecKeys;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Origins (the Web UI's, e.g. http://127.0.0.1:8233) allowed to call from a browser. */
  uiOrigins: readonly string[];
  /** When set, every request needs `Authorization: Bearer <token>`. */
  token?: string;
}

/** A running codec server. */
export interface RunningCodecServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

const toPayload = (p: JsonPayload): Payload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
  ),
  data: Buffer.from(p.data ?? '', 'base64'),
});

const toJson = (p: Payload): JsonPayload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [
      k,
      Buffer.from(v ?? new Uint8Array()).toString('base64'),
    ]),
  ),
  data: Buffer.from(p.data ?? new Uint8Array()).toString('base64'),
});

function sameToken(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** The codec server's app (see the module comment). */
export function createCodecApp(opts: Omit<CodecServerOptions, 'host' | 'port'>): Hono {
  const allowed = new Set(opts.uiOrigins);
  const app = new Hono();
  app.use('*', async (c, next) => {
    const origin = c.req.header('origin');
    if (origin !== undefined) {
      if (!allowed.has(origin))
        return c.json({ error: `Origin ${origin} may not use this codec server` }, 403);
      c.header('Access-Control-Allow-Origin', origin);
      c.header('Vary', 'Origin');
      c.header('Access-Control-Allow-Credentials', 'true');
      if (c.req.method === 'OPTIONS') {
        c.header('Access-Control-Allow-Methods', 'POST, OPTIONS');
        c.header('Access-Control-Allow-Headers', 'Content-Type, X-Namespace, Authorization');
        return c.body(null, 204);
      }
    }
    if (opts.token) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
      if (!m?.[1] || !sameToken(m[1], opts.token)) {
        c.header('WWW-Authenticate', 'Bearer');
        return c.json({ error: 'Missing or invalid bearer token (Authorization: Bearer <token>)' }, 401);
      }
    }
    await next();
  });
  app.use(
    '*',
    bodyLimit({
      maxSize: TEMPORAL_LIMITS.grpcMessageBytes,
      onError: (c) => c.json({ error: `Body larger than ${TEMPORAL_LIMITS.grpcMessageBytes} bytes` }, 413),
    }),
  );
  const route = (fn: (p: Payload) => Payload) => async (c: Context) => {
    if ((c.req.header('content-type') ?? '').split(';')[0]?.trim() !== 'application/json')
      return c.json({ error: 'Content-Type must be application/json' }, 415);
    let body: { payloads?: JsonPayload[] };
    try {
      body = await c.req.json();
    } catch {
      return c.json({ error: 'body must be JSON: {"payloads": [...]}' }, 400);
    }
    if (!Array.isArray(body.payloads)) return c.json({ error: 'body must be {"payloads": [...]}' }, 400);
    try {
      return c.json({ payloads: body.payloads.map((p) => toJson(fn(toPayload(p)))) });
    } catch (err) {
      // Messages name key ids, never keys or payload contents.
      return c.json({ error: (err as Error).message }, 400);
    }
  };
  app.post(
    '/decode',
    route((p) => openPayload(opts.keys, p)),
  );
  app.post(
    '/encode',
    route((p) => sealPayload(opts.keys, p)),
  );
  app.notFound((c) => c.json({ error: 'POST /encode or /decode' }, 404));
  return app;
}

/** Starts the codec server; refuses a non-loopback address without a token. */
export async function startCodecServer(opts: CodecServerOptions): Promise<RunningCodecServer> {
  if (!opts.token && !isLoopback(opts.host)) {
    throw new Error(
      `Refusing to bind ${opts.host} without a token: set DURABLE_AGENT_CODEC_TOKEN, or bind 127.0.0.1`,
    );
  }
  const app = createCodecApp(opts);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: opts.host, port: opts.port }, () => resolve(s as Server));
    s.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${opts.host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
