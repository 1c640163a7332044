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

/**
 * The tool that lists and reads a server's resources, as a run's `tools` and policies name it
 * (`mcp:<server>/resources/*`). No MCP tool is named so: tool names have no `/`.
 */
export const MCP_RESOURCES_TOOL = 'resources/*';

/** Parses `mcp:<server>`, `mcp:<server>/<tool>` or `mcp:<server>/resources/*`; a string saying what is wrong otherwise. */
export function parseMcpRef(name: string): McpToolRef | string {
  const rest = name.slice(MCP_PREFIX.length);
  const slash = rest.indexOf('/');
  const server = slash < 0 ? rest : rest.slice(0, slash);
  const tool = slash < 0 ? undefined : rest.slice(slash + 1);
  if (!SERVER_NAME.test(server)) {
    return `"${name}": an MCP server name is 1–64 letters, digits, "_" or "-" (write mcp:<server> or mcp:<server>/<tool>)`;
  }
  if (tool?.startsWith(PROMPT_SEGMENT)) {
    return `"${name}" is a prompt, not a tool: use it as the run's prompts.task or prompts.system`;
  }
  if (tool !== undefined && tool !== MCP_RESOURCES_TOOL && !TOOL_NAME.test(tool)) {
    return `"${name}": an MCP tool name is 1–128 letters, digits, "_", "-" or "." (write mcp:<server>/<tool>, or mcp:<server>/resources/* for its resources)`;
  }
  return tool === undefined ? { server } : { server, tool };
}

const PROMPT_SEGMENT = 'prompt/';
/** MCP prompt names: as tool names, the spec's letters, digits, `_`, `-` and `.`. */
const PROMPT_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** A prompt of a server, named `mcp:<server>/prompt/<name>`. */
export interface McpPromptRef {
  server: string;
  prompt: string;
}

/** Parses `mcp:<server>/prompt/<name>`; a string saying what is wrong otherwise. */
export function parseMcpPromptRef(name: string): McpPromptRef | string {
  const m = /^mcp:([^/]*)\/prompt\/(.*)$/.exec(name);
  if (!m || !SERVER_NAME.test(m[1] ?? '') || !PROMPT_NAME.test(m[2] ?? '')) {
    return `"${name.slice(0, 200)}": an MCP prompt is named mcp:<server>/prompt/<name> (a server name of 1–64 letters, digits, "_" or "-"; a prompt name of 1–128 letters, digits, "_", "-" or ".")`;
  }
  return { server: m[1] as string, prompt: m[2] as string };
}

/** A server's prompt used as a run's task or system prompt, with its arguments. */
export interface McpPromptUse {
  /** `mcp:<server>/prompt/<name>`. */
  prompt: string;
  /** The prompt's arguments (MCP prompt arguments are strings). */
  arguments?: Record<string, string>;
}

/** Input of the `mcpPrompts` activity: the prompts a run starts from. */
export interface McpPromptsInput {
  system?: McpPromptUse;
  task?: McpPromptUse;
}

/** What the `mcpPrompts` activity answers: each prompt as the text the run uses. */
export interface McpPromptsOutput {
  system?: string;
  task?: string;
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
  /** Set for the tool that lists and reads the server's resources (`tool` is MCP_RESOURCES_TOOL). */
  resources?: true;
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
