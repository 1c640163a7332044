/**
 * Tools offered when none are named: pure ones, which read no data and change nothing. Apart from
 * ./tools so that `durable-agent mcp --help` names them without loading the MCP server.
 */
export const DEFAULT_MCP_TOOLS: readonly string[] = ['get_time', 'calculator'];
