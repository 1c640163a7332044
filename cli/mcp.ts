import type { Command } from 'commander';
import type { TemporalTarget } from '../workers/connect';
import { DEFAULT_MCP_TOOLS } from '../server/mcp/default-tools';
import type * as Config from '../workers/config';
import type * as ToolsModule from '../workers/tools-module';
import type * as TracedClient from '../client/traced-client';
import type * as McpServerModule from '../server/mcp/server';
import type * as StdioModule from '@modelcontextprotocol/sdk/server/stdio.js';

/** Splits `--tools a,b`. */
function toolList(value: string): string[] {
  return value
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

/**
 * `durable-agent mcp`: the MCP server over stdio (stdout carries only JSON-RPC; messages go to
 * stderr). It ends when its client closes stdin, or on SIGINT/SIGTERM.
 */
export function registerMcpCommand(program: Command, target: () => TemporalTarget): void {
  program
    .command('mcp')
    .description(
      'Serve MCP over stdio: built-in tools as durable calls, and agent runs (start, status, approve, cancel)',
    )
    .option(
      '--tools <names>',
      `comma-separated built-in tools to offer (default ${DEFAULT_MCP_TOOLS.join(',')}; e.g. knowledge_base_search,sql_query)`,
      toolList,
    )
    .option(
      '--tools-module <file>',
      'a module exporting tools of your own (as the worker loads it; also DURABLE_AGENT_TOOLS_MODULE), offerable in --tools',
    )
    .option(
      '--task-queue <queue>',
      'task queue of the worker (default DURABLE_AGENT_TASK_QUEUE or "durable-agent")',
    )
    .action(async (o: { tools?: string[]; taskQueue?: string; toolsModule?: string }) => {
      // Loaded on demand, so other commands do not pay for the MCP SDK.
      /* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand */
      const { createMcpServer } = require('../server/mcp/server') as typeof McpServerModule;
      const { StdioServerTransport } =
        require('@modelcontextprotocol/sdk/server/stdio.js') as typeof StdioModule;
      const { loadWorkerConfig } = require('../workers/config') as typeof Config;
      const { withClient } = require('../client/traced-client') as typeof TracedClient;
      const { loadToolsModule } = require('../workers/tools-module') as typeof ToolsModule;
      /* eslint-enable @typescript-eslint/no-require-imports */
      const config = loadWorkerConfig();
      const toolsModule = o.toolsModule ?? config.toolsModule;
      const ownTools = toolsModule ? loadToolsModule(toolsModule) : [];
      await withClient(target(), async (client) => {
        const server = createMcpServer({
          client,
          taskQueue: o.taskQueue ?? config.taskQueue,
          scriptsDir: config.scriptsDir,
          ...(o.tools ? { tools: o.tools } : {}),
          ownTools,
        });
        const ended = new Promise<void>((resolve) => {
          process.stdin.once('end', resolve);
          process.stdin.once('close', resolve);
          process.once('SIGINT', resolve);
          process.once('SIGTERM', resolve);
        });
        await server.connect(new StdioServerTransport());
        console.error(`durable-agent MCP server on stdio (task queue ${o.taskQueue ?? config.taskQueue})`);
        await ended;
        await server.close();
      });
    });
}
