/**
 * The reference MCP servers from npm, as tests and benches start them: server-filesystem and
 * server-memory over stdio, server-everything over stdio or Streamable HTTP, and a recording
 * HTTP relay in front of an HTTP server (to see what our client sends, byte for byte).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { McpConfigSchema } from '../activities/mcp/config';
import type { McpConfig } from '../activities/mcp/config';
import { PROJECT_ROOT } from '../shared/project-root';
import { freePort } from './processes';

const server = (name: string) =>
  path.join(PROJECT_ROOT, 'node_modules', '@modelcontextprotocol', name, 'dist', 'index.js');

/** The entry scripts of the reference servers. */
export const MCP_SERVERS = {
  filesystem: server('server-filesystem'),
  memory: server('server-memory'),
  everything: server('server-everything'),
} as const;

/** A worker's `mcp` section. */
export function mcpConfig(servers: Record<string, unknown>, extra: Record<string, unknown> = {}): McpConfig {
  return McpConfigSchema.parse({ servers, ...extra });
}

/** server-filesystem over stdio, allowed to read and write `dir`. */
export function filesystemServer(dir: string): Record<string, unknown> {
  return { command: process.execPath, args: [MCP_SERVERS.filesystem, dir] };
}

/** server-memory over stdio, keeping its graph in `file`. */
export function memoryServer(file: string): Record<string, unknown> {
  return { command: process.execPath, args: [MCP_SERVERS.memory], env: { MEMORY_FILE_PATH: file } };
}

/**
 * server-everything over stdio. `marker` is an extra argument the server ignores, so a test can
 * find (and kill) this very process by its command line.
 */
export function everythingServer(
  marker: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { command: process.execPath, args: [MCP_SERVERS.everything, 'stdio', marker], ...extra };
}

/** A server-everything process serving Streamable HTTP on 127.0.0.1. */
export interface HttpMcpServer {
  url: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts server-everything over Streamable HTTP on a free port, and waits until it listens. */
export async function startEverythingHttp(): Promise<HttpMcpServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [MCP_SERVERS.everything, 'streamableHttp'], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server-everything did not listen on ${port}: ${stderr}`)),
      30_000,
    );
    child.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
      if (stderr.includes('listening on port')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited ${code}: ${stderr}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    child,
    stop: () => stopChild(child),
  };
}

/** One JSON-RPC request the relay saw. */
export interface RelayedRequest {
  method?: string;
  params?: { name?: string; arguments?: unknown; _meta?: Record<string, unknown> };
  headers: http.IncomingHttpHeaders;
}

/** An HTTP relay on 127.0.0.1 that forwards to `target` and records every JSON-RPC request. */
export interface McpRelay {
  url: string;
  requests: RelayedRequest[];
  /** The `tools/call` requests seen, oldest first. */
  calls(): RelayedRequest[];
  close(): Promise<void>;
}

/** Starts a recording relay in front of a Streamable HTTP MCP server. */
export async function startRelay(target: string): Promise<McpRelay> {
  const to = new URL(target);
  const requests: RelayedRequest[] = [];
  const relay = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (body.length > 0) {
        try {
          const parsed = JSON.parse(body.toString('utf8')) as RelayedRequest | RelayedRequest[];
          for (const r of Array.isArray(parsed) ? parsed : [parsed])
            requests.push({ ...r, headers: req.headers });
        } catch {
          // Not JSON: forwarded as it is.
        }
      }
      const out = http.request(
        {
          host: to.hostname,
          port: to.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: to.host },
        },
        (upstream) => {
          res.writeHead(upstream.statusCode ?? 502, upstream.headers);
          upstream.pipe(res);
        },
      );
      out.on('error', () => res.destroy());
      // The client went away (an SSE stream it closed): so does the upstream request.
      res.on('close', () => {
        if (!res.writableFinished) out.destroy();
      });
      out.end(body);
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => relay.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port}${to.pathname}`,
    requests,
    calls: () => requests.filter((r) => r.method === 'tools/call'),
    close: () =>
      new Promise<void>((resolve) => {
        relay.closeAllConnections();
        relay.close(() => resolve());
      }),
  };
}

/** Pids of processes whose command line contains `marker`. */
export function pidsWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmd.includes(marker) && Number(entry) !== process.pid) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
