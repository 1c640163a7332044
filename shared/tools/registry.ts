import type { ToolDefinition } from './define';
import { calculatorTool } from './calculator';
import { fetchEmailTool, sendEmailTool } from './email';
import { getTimeTool } from './get-time';
import { notifyUserTool } from './notify-user';
import { knowledgeBaseSearchTool, webSearchTool } from './search';
import { sqlQueryTool, sqlSchemaTool } from './sql';
import { waitTool } from './wait';

/**
 * Every tool the agent workflow knows, by name. Workflows validate arguments against these schemas;
 * the worker registers one activity per entry, named after the tool.
 */
export const TOOL_REGISTRY: Readonly<Record<string, ToolDefinition>> = Object.freeze(
  Object.fromEntries(
    [
      getTimeTool,
      calculatorTool,
      waitTool,
      notifyUserTool,
      fetchEmailTool,
      sendEmailTool,
      knowledgeBaseSearchTool,
      webSearchTool,
      sqlSchemaTool,
      sqlQueryTool,
    ].map((t) => [t.name, t as ToolDefinition]),
  ),
);

/** Names of all registered tools. */
export const TOOL_NAMES: readonly string[] = Object.keys(TOOL_REGISTRY);

/** The tool definition for a name, or undefined. */
export function findTool(name: string): ToolDefinition | undefined {
  return Object.prototype.hasOwnProperty.call(TOOL_REGISTRY, name) ? TOOL_REGISTRY[name] : undefined;
}
