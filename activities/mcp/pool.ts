/**
 * Connections to the configured MCP servers, pooled per worker process. A connection opens on
 * first use and closes after `idleTimeoutMs` unused; a stdio server whose process dies (or an HTTP
 * session that drops) is connected anew on the next use, so no run is pinned to one worker or one
 * server process. Each connection remembers its server's tool list and forgets it when the server
 * says `notifications/tools/list_changed`.
 */
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { redactSecrets } from '../../shared/redact-secrets';
import type { McpConfig, McpServerConfig } from './config';
import { mcpSecrets } from './config';

/** How the project introduces itself to MCP servers. */
const CLIENT_INFO = { name: 'durable-agent', version: '0.1.0' };
/** The tail of a stdio server's stderr kept for error messages. */
const STDERR_TAIL_BYTES = 2048;

interface Entry {
  readonly client: Client;
  tools?: Tool[];
  digest?: string;
  inUse: number;
  idle?: NodeJS.Timeout;
  closed: boolean;
  stderr: string;
}

/** A server name the worker's config does not hold. */
export class McpServerUnknownError extends Error {
  override readonly name = 'McpServerUnknownError';
}

/** The pool of MCP connections of one worker. */
export class McpPool {
  private readonly entries = new Map<string, Promise<Entry>>();
  private readonly secrets: string[];

  constructor(private readonly config: McpConfig) {
    this.secrets = mcpSecrets(config);
  }

  /** Names of the configured servers. */
  serverNames(): string[] {
    return Object.keys(this.config.servers);
  }

  /** A server's settings; throws {@link McpServerUnknownError} naming the configured ones. */
  server(name: string): McpServerConfig {
    const s = Object.prototype.hasOwnProperty.call(this.config.servers, name)
      ? this.config.servers[name]
      : undefined;
    if (!s) {
      const known = this.serverNames();
      throw new McpServerUnknownError(
        `No MCP server "${name}" in this worker's config; configured servers: ${known.join(', ') || '(none: add an "mcp" section to DURABLE_AGENT_CONFIG)'}`,
      );
    }
    return s;
  }

  /** Runs `fn` with a live connection to `server`; the connection stays pooled afterwards. */
  async use<T>(server: string, fn: (client: Client, entry: { stderr(): string }) => Promise<T>): Promise<T> {
    const entry = await this.entry(server);
    entry.inUse += 1;
    if (entry.idle) clearTimeout(entry.idle);
    try {
      return await fn(entry.client, { stderr: () => this.redact(entry.stderr) });
    } finally {
      entry.inUse -= 1;
      if (entry.inUse === 0 && !entry.closed) {
        entry.idle = setTimeout(() => void this.drop(server, entry), this.config.idleTimeoutMs);
        entry.idle.unref();
      }
    }
  }

  /** The server's tools (every page) and their digest; listed again only after list_changed. */
  async tools(server: string): Promise<{ tools: Tool[]; digest: string }> {
    return this.use(server, async (client) => {
      const entry = await this.entry(server);
      if (entry.tools && entry.digest) return { tools: entry.tools, digest: entry.digest };
      const { connectTimeoutMs } = this.server(server);
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : {}, { timeout: connectTimeoutMs });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      entry.tools = tools;
      entry.digest = toolsDigest(tools);
      return { tools, digest: entry.digest };
    });
  }

  /** The digest of the tool list as this worker knows it now (listing again after a change). */
  async digest(server: string): Promise<string> {
    return (await this.tools(server)).digest;
  }

  /** Closes every connection (stdio servers' processes end). */
  async close(): Promise<void> {
    const all = [...this.entries.entries()];
    this.entries.clear();
    await Promise.all(
      all.map(async ([, p]) => {
        const entry = await p.catch(() => undefined);
        if (entry) await this.closeEntry(entry);
      }),
    );
  }

  /** Masks the configured secrets in text bound for an error message or a log. */
  redact(text: string): string {
    return redactSecrets(text, this.secrets);
  }

  private entry(server: string): Promise<Entry> {
    const existing = this.entries.get(server);
    if (existing) return existing;
    const created = this.connect(server);
    this.entries.set(server, created);
    // A failed connection is not kept: the next use (an activity retry) connects again.
    created.catch(() => {
      if (this.entries.get(server) === created) this.entries.delete(server);
    });
    return created;
  }

  private async connect(server: string): Promise<Entry> {
    const s = this.server(server);
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const entry: Entry = { client, inUse: 0, closed: false, stderr: '' };
    let transport: StdioClientTransport | StreamableHTTPClientTransport;
    if ('url' in s) {
      transport = new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers: s.headers } });
    } else {
      const stdio = new StdioClientTransport({
        command: s.command,
        args: s.args,
        // The server gets a minimal environment (PATH, HOME, …) and its own settings, never the worker's secrets.
        env: { ...getDefaultEnvironment(), ...s.env },
        ...(s.cwd ? { cwd: s.cwd } : {}),
        stderr: 'pipe',
      });
      stdio.stderr?.on('data', (chunk: Buffer) => {
        entry.stderr = (entry.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
      });
      transport = stdio;
    }
    client.onclose = () => {
      entry.closed = true;
      if (entry.idle) clearTimeout(entry.idle);
      void this.entries.get(server)?.then((e) => {
        if (e === entry) this.entries.delete(server);
      });
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      entry.tools = undefined;
      entry.digest = undefined;
    });
    try {
      await client.connect(transport, { timeout: s.connectTimeoutMs });
    } catch (err) {
      await client.close().catch(() => undefined);
      const tail = entry.stderr.trim();
      throw new Error(
        this.redact(
          `Cannot connect to MCP server "${server}": ${(err as Error).message}${tail ? `; its stderr ends: ${tail.slice(-500)}` : ''}`,
        ),
      );
    }
    return entry;
  }

  private async drop(server: string, entry: Entry): Promise<void> {
    if (entry.inUse > 0) return;
    const current = await this.entries.get(server)?.catch(() => undefined);
    if (current === entry) this.entries.delete(server);
    await this.closeEntry(entry);
  }

  private async closeEntry(entry: Entry): Promise<void> {
    if (entry.idle) clearTimeout(entry.idle);
    entry.closed = true;
    await entry.client.close().catch(() => undefined);
  }
}

/** A short digest of a tool list: the same list gives the same digest on every worker. */
export function toolsDigest(tools: readonly Tool[]): string {
  const canonical = [...tools]
    .map((t) => ({ name: t.name, description: t.description ?? '', inputSchema: t.inputSchema }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex').slice(0, 16);
}
