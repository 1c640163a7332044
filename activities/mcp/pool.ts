/**
 * Connections to the configured MCP servers, pooled per worker process. A connection opens on
 * first use and closes after `idleTimeoutMs` unused; a stdio server whose process dies (or an HTTP
 * session that drops) is connected anew on the next use, so no run is pinned to one worker or one
 * server process. Each connection remembers its server's tool list (and resource list) and forgets
 * it when the server says `notifications/tools/list_changed` (`notifications/resources/list_changed`).
 * What happens to connections (opened, tool lists changed,
 * a stdio server's stderr lines) goes to the worker's log, with the configured secrets masked.
 */
import { createHash } from 'node:crypto';
import type { Logger } from '@temporalio/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ServerCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { redactSecrets } from '../../shared/redact-secrets';
import type { McpConfig, McpServerConfig } from './config';
import { mcpSecrets } from './config';
import type { McpResourceListing } from './listings';
import { listResources } from './listings';

/** How the project introduces itself to MCP servers. */
const CLIENT_INFO = { name: 'durable-agent', version: '0.1.0' };
/** The tail of a stdio server's stderr kept for error messages. */
const STDERR_TAIL_BYTES = 2048;
/** The most of one stderr line that goes to the log. */
const STDERR_LINE_CHARS = 1000;
/**
 * Listings of one tool list in a row while the server keeps saying it changed: past this the
 * list is used but not kept, so the next use lists again.
 */
const MAX_LISTINGS = 3;
interface Entry {
  readonly client: Client;
  /** The server's tools and their digest, as last listed; unset until listed and after a change. */
  tools?: { list: Tool[]; digest: string };
  /** `notifications/tools/list_changed` received on this connection: a listing that saw one arrive is stale. */
  listChanges: number;
  /** The server's resources as last listed; unset until listed and after `notifications/resources/list_changed`. */
  resources?: McpResourceListing;
  /** `notifications/resources/list_changed` received: a listing that saw one arrive is used once, not kept. */
  resourceChanges: number;
  inUse: number;
  idle?: NodeJS.Timeout;
  closed: boolean;
  stderr: string;
}

/** A pooled connection as {@link McpPool.use} lends it. */
export interface McpConnection {
  /** The end of a stdio server's stderr, secrets masked. */
  stderr(): string;
  /**
   * The digest of the server's tool list (and, for a server with resources, of its resource list):
   * the one kept, or a new listing after a change.
   */
  toolsDigest(): Promise<string>;
}

/** How a pool reports what happens to its connections. */
export interface McpPoolOptions {
  /** The worker's logger (Temporal's runtime logger); without one the pool logs nothing. */
  logger?: Logger;
}

/** A server name the worker's config does not hold. */
export class McpServerUnknownError extends Error {
  override readonly name = 'McpServerUnknownError';
}

/** The pool of MCP connections of one worker. */
export class McpPool {
  private readonly entries = new Map<string, Promise<Entry>>();
  private readonly secrets: string[];
  private readonly logger: Logger | undefined;

  constructor(
    private readonly config: McpConfig,
    opts: McpPoolOptions = {},
  ) {
    this.secrets = mcpSecrets(config);
    this.logger = opts.logger;
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
  async use<T>(server: string, fn: (client: Client, conn: McpConnection) => Promise<T>): Promise<T> {
    return this.lend(server, (entry) =>
      fn(entry.client, {
        stderr: () => this.redact(entry.stderr),
        toolsDigest: () => this.digest(server, entry),
      }),
    );
  }

  /**
   * The server's tools (every page), its capabilities, and the digest of its lists (tools, and
   * resources where it has them); listed again only after list_changed.
   */
  async tools(server: string): Promise<{ tools: Tool[]; digest: string; capabilities: ServerCapabilities }> {
    return this.lend(server, async (entry) => {
      const { list } = await this.listed(server, entry);
      const digest = await this.digest(server, entry);
      return { tools: list, digest, capabilities: entry.client.getServerCapabilities() ?? {} };
    });
  }

  /** The server's resources and templates as kept (listed again after resources/list_changed). */
  async resources(server: string): Promise<McpResourceListing> {
    return this.lend(server, (entry) => this.resourcesOf(server, entry));
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

  /**
   * The tools of a connection: the list kept, or a new listing. A change announced while a listing
   * is in flight may or may not be in its answer, so that answer is not kept: the server is listed
   * again (a few times at most; then the answer is used once and the next use lists again).
   */
  private async listed(server: string, entry: Entry): Promise<{ list: Tool[]; digest: string }> {
    if (entry.tools) return entry.tools;
    const { connectTimeoutMs } = this.server(server);
    for (let listing = 1; ; listing++) {
      const changes = entry.listChanges;
      const list: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await entry.client.listTools(cursor ? { cursor } : {}, { timeout: connectTimeoutMs });
        list.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      const listed = { list, digest: toolsDigest(list) };
      const stale = entry.listChanges !== changes;
      this.logger?.debug('MCP tools listed', {
        server,
        tools: list.length,
        digest: listed.digest,
        listing,
        ...(stale ? { changedMeanwhile: true } : {}),
      });
      if (!stale) {
        entry.tools = listed;
        return listed;
      }
      if (listing >= MAX_LISTINGS) return listed;
    }
  }

  /** The digest of what the server offers a run: its tools, and its resources when it has any. */
  private async digest(server: string, entry: Entry): Promise<string> {
    const tools = (await this.listed(server, entry)).digest;
    if (!entry.client.getServerCapabilities()?.resources) return tools;
    const resources = (await this.resourcesOf(server, entry)).digest;
    return createHash('sha256').update(`${tools}/${resources}`).digest('hex').slice(0, 16);
  }

  private async resourcesOf(server: string, entry: Entry): Promise<McpResourceListing> {
    if (entry.resources) return entry.resources;
    const changes = entry.resourceChanges;
    const listing = await listResources(entry.client, this.server(server).connectTimeoutMs);
    this.logger?.debug('MCP resources listed', {
      server,
      resources: listing.resources.length,
      digest: listing.digest,
    });
    if (entry.resourceChanges === changes) entry.resources = listing;
    return listing;
  }

  /** Lends a connection to `fn`; unused for `idleTimeoutMs` afterwards, it is closed. */
  private async lend<T>(server: string, fn: (entry: Entry) => Promise<T>): Promise<T> {
    const entry = await this.entry(server);
    entry.inUse += 1;
    if (entry.idle) clearTimeout(entry.idle);
    try {
      return await fn(entry);
    } finally {
      entry.inUse -= 1;
      if (entry.inUse === 0 && !entry.closed) {
        entry.idle = setTimeout(() => void this.drop(server, entry), this.config.idleTimeoutMs);
        entry.idle.unref();
      }
    }
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
    const entry: Entry = { client, listChanges: 0, resourceChanges: 0, inUse: 0, closed: false, stderr: '' };
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
      let partial = '';
      stdio.stderr?.on('data', (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        entry.stderr = (entry.stderr + text).slice(-STDERR_TAIL_BYTES);
        // Whole lines to the log; a line still being written waits for its end (bounded).
        const lines = (partial + text).split('\n');
        partial = (lines.pop() ?? '').slice(-STDERR_LINE_CHARS);
        for (const line of lines) {
          const trimmed = line.trim();
          if (trimmed)
            this.logger?.info('MCP server stderr', {
              server,
              line: this.redact(trimmed.slice(0, STDERR_LINE_CHARS)),
            });
        }
      });
      transport = stdio;
    }
    client.onclose = () => {
      entry.closed = true;
      if (entry.idle) clearTimeout(entry.idle);
      // (A connection that fails while it opens closes too: its own promise rejects, and is dropped.)
      void this.entries.get(server)?.then(
        (e) => {
          if (e === entry) this.entries.delete(server);
        },
        () => undefined,
      );
    };
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      entry.listChanges += 1;
      entry.tools = undefined;
      this.logger?.info('MCP server says its tool list changed', { server });
    });
    // A changed resource list changes the digest as a changed tool list does: runs discover again.
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      entry.resourceChanges += 1;
      entry.resources = undefined;
      this.logger?.info('MCP server says its resource list changed', { server });
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
    this.logger?.info('MCP server connected', { server, transport: 'url' in s ? 'http' : 'stdio' });
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
