/**
 * Tools from MCP servers: how a run names them, what discovery answers, and the activity each call
 * runs as. Pure and deterministic (workflow code imports it); the I/O is in activities/mcp/.
 *
 * A run enables `mcp:<server>` (every tool of that server) or `mcp:<server>/<tool>` (one). The
 * worker's config names the servers; the workflow keeps what discovery found (its catalog) and
 * carries it across continue-as-new, so tools are not listed again on every step.
 */
import type { ContentRef } from '../content';

/** Prefix of an MCP tool reference in a run's `tools` and in approval policies. */
export const MCP_PREFIX = 'mcp:';

const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** MCP tool names: the spec allows letters, digits, `_`, `-` and `.`, 1–128 characters. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** An `mcp:` reference, parsed: a whole server, or one of its tools. */
export interface McpToolRef {
  server: string;
  /** Absent: every tool of the server. */
  tool?: string;
}

/** Whether a tool name is an MCP reference (`mcp:…`), well formed or not. */
export function isMcpRef(name: string): boolean {
  return name.startsWith(MCP_PREFIX);
}

/** Parses `mcp:<server>` or `mcp:<server>/<tool>`; a string saying what is wrong otherwise. */
export function parseMcpRef(name: string): McpToolRef | string {
  const rest = name.slice(MCP_PREFIX.length);
  const slash = rest.indexOf('/');
  const server = slash < 0 ? rest : rest.slice(0, slash);
  const tool = slash < 0 ? undefined : rest.slice(slash + 1);
  if (!SERVER_NAME.test(server)) {
    return `"${name}": an MCP server name is 1–64 letters, digits, "_" or "-" (write mcp:<server> or mcp:<server>/<tool>)`;
  }
  if (tool !== undefined && !TOOL_NAME.test(tool)) {
    return `"${name}": an MCP tool name is 1–128 letters, digits, "_", "-" or "." (write mcp:<server>/<tool>)`;
  }
  return tool === undefined ? { server } : { server, tool };
}

/** The qualified name of one MCP tool, as policies name it: `mcp:<server>/<tool>`. */
export function mcpToolId(server: string, tool: string): string {
  return `${MCP_PREFIX}${server}/${tool}`;
}

/**
 * The activity type of a call of this tool: its qualified name. The worker has no activity
 * registered under it; its default activity serves every `mcp:` type (activities/mcp/call.ts).
 */
export const mcpActivityType = mcpToolId;

/** One tool a run may call, as discovery found it on its server. */
export interface McpToolSpec {
  server: string;
  /** The tool's name on its server. */
  tool: string;
  /** The name the model calls it by: the tool's own, unless that clashes or is not a valid name. */
  name: string;
  description: string;
  /** The tool's input JSON Schema, as the server gave it. */
  inputSchema: Record<string, unknown>;
  /** The server's hints: a read-only, idempotent tool may run as a local activity. */
  readOnly?: boolean;
  idempotent?: boolean;
}

/** A tool discovery left out, and why (a schema we cannot represent, a budget). */
export interface McpSkippedTool {
  server: string;
  tool: string;
  reason: string;
}

/** What discovery answers and a run keeps: the tools it may call, per server a digest of the list. */
export interface McpCatalog {
  tools: McpToolSpec[];
  skipped: McpSkippedTool[];
  /** Per server, a digest of its tool list: a call that sees another digest asks for a new discovery. */
  digests: Record<string, string>;
  /** The model-facing specs in the content store, which model calls name instead of repeating them. */
  specsRef: ContentRef;
}

/** Input of the `mcpDiscover` activity. */
export interface McpDiscoverInput {
  /** The run's `mcp:` references. */
  refs: string[];
  /** Names the model already knows (built-in tools): an MCP tool of the same name is qualified. */
  reserved: string[];
}

/** What an MCP tool call adds to the tool activity input. */
export interface McpCallContext {
  /** The digest of the server's tool list the run holds. */
  digest?: string;
}

/** Names a provider accepts for a tool (OpenAI: `^[a-zA-Z0-9_-]{1,64}$`). */
const MODEL_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The name the model sees: the tool's own name when it is a valid tool name and clashes with no
 * other; otherwise `<server>__<tool>` with other characters as `_`. Null when even that clashes.
 */
export function modelNameFor(server: string, tool: string, taken: ReadonlySet<string>): string | null {
  if (MODEL_TOOL_NAME.test(tool) && !taken.has(tool)) return tool;
  const qualified = `${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  return taken.has(qualified) ? null : qualified;
}
