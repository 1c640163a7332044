/**
 * The names of the tools the agent workflow knows, in the registry's order. Kept apart from their
 * definitions (zod schemas) so that a command's help can list them without loading those;
 * shared/tools/registry.ts refuses to load when the two disagree.
 */
export const TOOL_NAMES: readonly string[] = [
  'get_time',
  'calculator',
  'wait',
  'notify_user',
  'fetch_email',
  'send_email',
  'knowledge_base_search',
  'web_search',
  'sql_schema',
  'sql_query',
  'ask_user',
];
