import type { Logger } from '@temporalio/common';
import type { McpCatalog, McpDiscoverInput, McpPromptsInput, McpPromptsOutput } from '../../shared/tools/mcp';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';
import type { ContentStore } from '../content/store';
import { callMcpTool } from './call';
import type { McpConfig } from './config';
import { discover } from './discover';
import { McpPool } from './pool';
import { renderPrompts } from './prompts';

/** The pools of this process, by config (one per worker config), so connections are shared. */
const pools = new Map<McpConfig, McpPool>();

/** The process's pool for a config (logging to `logger`, the first caller's). */
export function mcpPoolFor(config: McpConfig, logger?: Logger): McpPool {
  let pool = pools.get(config);
  if (!pool) {
    pool = new McpPool(config, { logger });
    pools.set(config, pool);
  }
  return pool;
}

/** Closes every pooled MCP connection of this process (the worker's shutdown). */
export async function closeMcpConnections(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((p) => p.close()));
}

/**
 * The MCP activities: `mcpDiscover`, `mcpPrompts`, and `default`, which serves every `mcp:<server>/<tool>`
 * activity type (the worker calls it for activity types it has no function for).
 */
export function createMcpActivities(deps: {
  config: McpConfig;
  store: ContentStore;
  pool?: McpPool;
  /** Where the pool reports connections, tool list changes and servers' stderr. */
  logger?: Logger;
}) {
  const pool = deps.pool ?? mcpPoolFor(deps.config, deps.logger);
  return {
    async mcpDiscover(input: McpDiscoverInput): Promise<McpCatalog> {
      return discover(pool, deps.store, input);
    },
    async mcpPrompts(input: McpPromptsInput): Promise<McpPromptsOutput> {
      return renderPrompts(pool, deps.store, input);
    },
    async default(input: ToolActivityInput<unknown>): Promise<ToolResult> {
      return callMcpTool(pool, deps.store, input);
    },
  };
}
