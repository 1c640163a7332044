import type { ToolDefinition } from './define';
import { calculatorTool } from './calculator';
import { fetchEmailTool, sendEmailTool } from './email';
import { getTimeTool } from './get-time';
import { notifyUserTool } from './notify-user';
import { knowledgeBaseSearchTool, webSearchTool } from './search';
import { sqlQueryTool, sqlSchemaTool } from './sql';
import { TOOL_NAMES } from './names';
import { waitTool } from './wait';
import { askUserTool } from './ask-user';

export { TOOL_NAMES };

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
      askUserTool,
    ].map((t) => [t.name, t as ToolDefinition]),
  ),
);

// TOOL_NAMES (./names) is what help texts list without loading the schemas: it must be this list.
if (Object.keys(TOOL_REGISTRY).join() !== TOOL_NAMES.join()) {
  throw new Error(
    `shared/tools/names.ts lists ${TOOL_NAMES.join()}; the registry holds ${Object.keys(TOOL_REGISTRY).join()}`,
  );
}

/** The tool definition for a name, or undefined. */
export function findTool(name: string): ToolDefinition | undefined {
  return Object.prototype.hasOwnProperty.call(TOOL_REGISTRY, name) ? TOOL_REGISTRY[name] : undefined;
}
