/**
 * The worker's pool of MCP connections and discovery, against the reference servers from npm over
 * stdio (no Temporal server: discovery runs in the SDK's activity environment). What the pool
 * reports goes through a logger, as the worker's log gets it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { LogEntry } from '@temporalio/worker';
import { DefaultLogger } from '@temporalio/worker';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { FileContentStore } from '../../activities/content/file-store';
import { discover } from '../../activities/mcp/discover';
import { McpPool } from '../../activities/mcp/pool';
import type { McpCatalog } from '../../shared/tools/mcp';
import { loadWorkerConfig } from '../../workers/config';
import { MCP_SERVERS, everythingServer, mcpConfig, pidsWith } from '../../testkit/mcp';
import { tempDir, uid } from '../../testkit/temporal';

const pools: McpPool[] = [];
afterAll(() => Promise.all(pools.map((p) => p.close())));

/** A pool whose log lines the test reads. */
function logged(config: ConstructorParameters<typeof McpPool>[0]) {
  const entries: LogEntry[] = [];
  const logger = new DefaultLogger('DEBUG', (e) => entries.push(e));
  const pool = new McpPool(config, { logger });
  pools.push(pool);
  const lines = (message: string): Record<string, unknown>[] =>
    entries.filter((e) => e.message === message).map((e) => e.meta ?? {});
  return { pool, logger, entries, lines };
}

async function until(what: string, fn: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const text = (result: unknown) =>
  ((result as { content?: { type: string; text?: string }[] }).content ?? [])
    .map((c) => c.text ?? '')
    .join('\n');

test.concurrent(
  'notifications/tools/list_changed reaches the pool: a listing it overtook is listed again, then the list is kept',
  async () => {
    // server-everything registers a task tool once the session is initialized, which announces a
    // change: it reaches the client while the first tools/list is in flight.
    const { pool, lines } = logged(mcpConfig({ everything: everythingServer(uid('list-changed')) }));
    const { tools, digest } = await pool.tools('everything');
    expect(lines('MCP server says its tool list changed')).toEqual([{ server: 'everything' }]);
    expect(lines('MCP tools listed').map((m) => [m.listing, m.changedMeanwhile ?? false])).toEqual([
      [1, true],
      [2, false],
    ]);
    expect(tools.map((t) => t.name)).toContain('simulate-research-query');
    // Kept: neither discovery nor a call's digest lists again until the next change.
    expect((await pool.tools('everything')).digest).toBe(digest);
    expect(await pool.use('everything', (_client, conn) => conn.toolsDigest())).toBe(digest);
    expect(lines('MCP tools listed')).toHaveLength(2);
  },
);

test.concurrent(
  'a connection unused for idleTimeoutMs is closed (its server process ends); one in use is not',
  async () => {
    const marker = uid('idle');
    const { pool, lines } = logged(
      mcpConfig({ everything: everythingServer(marker) }, { idleTimeoutMs: 1000 }),
    );
    // In use longer than the idle timeout: the connection stays.
    const slow = await pool.use('everything', (client) =>
      client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 2, steps: 2 } }),
    );
    expect(text(slow)).toContain('Long running operation completed');
    const [first] = pidsWith(marker);
    expect(first).toBeDefined();
    await until('the idle server process to end', () => pidsWith(marker).length === 0);
    expect(lines('MCP server connected')).toHaveLength(1);
    // The next use connects anew, to a new process.
    const echoed = await pool.use('everything', (client) =>
      client.callTool({ name: 'echo', arguments: { message: 'again' } }),
    );
    expect(text(echoed)).toBe('Echo: again');
    expect(pidsWith(marker)).not.toContain(first);
    expect(lines('MCP server connected')).toHaveLength(2);
  },
);

test.concurrent(
  '${env:NAME} in the mcp section reaches the server; the secret is masked in pool errors, discovery failures and stderr lines in the log',
  async () => {
    const secret = `mcp-secret-${uid('v')}`;
    const dir = tempDir('mcp-pool-config');
    const file = path.join(dir, 'config.json');
    const env = { API_TOKEN: '${env:MCP_TEST_TOKEN}' };
    fs.writeFileSync(
      file,
      JSON.stringify({
        mcp: {
          servers: {
            everything: { command: process.execPath, args: [MCP_SERVERS.everything, 'stdio'], env },
            // A server that dies at start, printing its token: the worker's log and the error see ***.
            broken: {
              command: process.execPath,
              args: ['-e', 'console.error("starting with token " + process.env.API_TOKEN); process.exit(3)'],
              env,
            },
          },
        },
      }),
    );
    const config = loadWorkerConfig({ DURABLE_AGENT_CONFIG: file, MCP_TEST_TOKEN: secret }).mcp;
    const { pool, logger, entries, lines } = logged(config);

    const got = await pool.use('everything', (client) => client.callTool({ name: 'get-env', arguments: {} }));
    expect(JSON.parse(text(got))).toEqual(expect.objectContaining({ API_TOKEN: secret }));

    const err = await pool.tools('broken').catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(
      /Cannot connect to MCP server "broken": .*stderr ends: starting with token \*\*\*/s,
    );
    expect((err as Error).message).not.toContain(secret);
    await until('the stderr line in the log', () => lines('MCP server stderr').length > 0);
    expect(lines('MCP server stderr')).toContainEqual({ server: 'broken', line: 'starting with token ***' });

    const store = new FileContentStore(tempDir('mcp-pool-store'));
    const failure = await new MockActivityEnvironment(undefined, { logger })
      .run(discover, pool, store, { refs: ['mcp:broken'], reserved: [] })
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).type).toBe('McpServerUnavailable');
    expect((failure as ApplicationFailure).message).toContain('starting with token ***');
    expect(JSON.stringify(entries.map((e) => [e.message, e.meta]))).not.toContain(secret);
    expect(JSON.stringify(failure)).not.toContain(secret);
  },
);

test.concurrent(
  'discovery skips what the model cannot call, saying why in the catalog and the log; a clashing name is qualified as <server>__<tool>',
  async () => {
    const { pool, logger, lines } = logged(mcpConfig({ everything: everythingServer(uid('discover')) }));
    const store = new FileContentStore(tempDir('mcp-pool-store'));
    const run = (reserved: string[]): Promise<McpCatalog> =>
      new MockActivityEnvironment(undefined, { logger }).run(discover, pool, store, {
        refs: ['mcp:everything'],
        reserved,
      });

    const catalog = await run(['echo']);
    const echo = catalog.tools.find((t) => t.tool === 'echo');
    expect(echo).toEqual(expect.objectContaining({ server: 'everything', name: 'everything__echo' }));
    expect(catalog.tools.find((t) => t.tool === 'get-sum')?.name).toBe('get-sum');
    // A tool that must run as an MCP task cannot be called the way activities call tools.
    expect(catalog.skipped).toEqual([
      {
        server: 'everything',
        tool: 'simulate-research-query',
        reason: expect.stringMatching(/only as an MCP task/),
      },
    ]);
    expect(catalog.tools.map((t) => t.tool)).not.toContain('simulate-research-query');
    expect(lines('MCP tool skipped')).toContainEqual(
      expect.objectContaining({
        tool: 'mcp:everything/simulate-research-query',
        reason: expect.stringMatching(/only as an MCP task/),
      }),
    );

    // Both the name and its qualified form taken: the tool is left out, saying how to enable it.
    const crowded = await run(['echo', 'everything__echo']);
    expect(crowded.tools.map((t) => t.tool)).not.toContain('echo');
    expect(crowded.skipped).toContainEqual({
      server: 'everything',
      tool: 'echo',
      reason: expect.stringMatching(/clashes with another tool/),
    });
  },
);
