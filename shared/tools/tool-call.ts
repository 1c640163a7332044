/**
 * One tool call run on its own, outside an agent run: the contract between the doors that offer
 * tools (the MCP server) and the `toolCallWorkflow` that runs them. Pure (workflow code imports it).
 */

/** Workflow type name of a tool call run on its own. */
export const TOOL_CALL_WORKFLOW_TYPE = 'toolCallWorkflow';

/** Prefix of a tool call's workflow id: `tool-<tool>-<key>`. */
export const TOOL_CALL_ID_PREFIX = 'tool-';

import type { OwnToolSpec } from './own';

/** Input of `toolCallWorkflow`: which registered tool, with which arguments (validated inside). */
export interface ToolCallInput {
  tool: string;
  args: unknown;
  /** For a tool of the worker's own: its spec, as the door read it from the same tools module. */
  own?: OwnToolSpec;
  /** Who asked (e.g. `mcp`), for events and logs. */
  caller?: string;
}
