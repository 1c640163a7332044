/**
 * `/mcp` on the HTTP API: the MCP server over Streamable HTTP, stateless (a server and a transport
 * per request, JSON answers, no session to lose), behind the API's own checks: the `hardening`
 * middleware installed before every route (loopback `Host` without a token, cross-origin requests
 * refused, JSON bodies only) and, when the API has a token, the same bearer token or session cookie
 * as `/api/*`. Runs and tasks live in Temporal, so nothing is lost between requests or restarts.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Hono } from 'hono';
import { authorized } from '../api/auth';
import type { McpServerOptions } from './server';
import { createMcpServer } from './server';

/** Path of the MCP endpoint. */
export const MCP_PATH = '/mcp';

/** The largest request body `/mcp` reads: an agent input (≤ 256 KiB) with room for the envelope. */
const MAX_MCP_BODY_BYTES = 1024 * 1024;

/** Options of {@link registerMcpRoute}. */
export interface McpRouteOptions extends McpServerOptions {
  /** When set, every request needs `Authorization: Bearer <token>` (or the web UI's session cookie). */
  token?: string;
  /** Where unexpected errors are reported. */
  logError: (message: string) => void;
}

/** Adds `POST /mcp` (and `GET`/`DELETE`, which a stateless server answers 405) to the app. */
export function registerMcpRoute(app: Hono, opts: McpRouteOptions): void {
  // Checked now, so a bad tool list stops the API at start instead of failing every request.
  createMcpServer(opts);
  app.all(MCP_PATH, async (c) => {
    if (opts.token && !authorized(c, opts.token)) {
      c.header('WWW-Authenticate', 'Bearer');
      return c.json({ error: 'Missing or invalid bearer token (Authorization: Bearer <token>)' }, 401);
    }
    const server = createMcpServer(opts);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: MAX_MCP_BODY_BYTES,
    });
    try {
      await server.connect(transport);
      return await transport.handleRequest(c.req.raw);
    } catch (err) {
      opts.logError(`MCP error on ${c.req.method} ${MCP_PATH}: ${(err as Error).message}`);
      return c.json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }, 500);
    } finally {
      // JSON answers are complete once handleRequest returns: nothing of this request is left to send.
      await server.close();
    }
  });
}
