import { defineSearchAttributeKey } from '@temporalio/common';
import type { AgentInput } from './agent/input';

/** Run status, for `temporal workflow list --query "AgentStatus='running'"` and the Web UI. */
export const AgentStatusKey = defineSearchAttributeKey('AgentStatus', 'KEYWORD');
/** Model of the run (`scripted`, `openai:<model>`, `anthropic:<model>`, `local:<file>`). */
export const AgentModelKey = defineSearchAttributeKey('AgentModel', 'KEYWORD');
/** Current step. */
export const AgentStepKey = defineSearchAttributeKey('AgentStep', 'INT');
/** Last tool started. */
export const AgentLastToolKey = defineSearchAttributeKey('AgentLastTool', 'KEYWORD');

/** All agent search attributes, with the type names `temporal operator search-attribute create` takes. */
export const AGENT_SEARCH_ATTRIBUTES = [
  AgentStatusKey,
  AgentModelKey,
  AgentStepKey,
  AgentLastToolKey,
] as const;

/**
 * A run's model as its `AgentModel` search attribute names it: `scripted`, `openai:gpt-4o-mini`,
 * `local:<file>`. A `local` run that names no file uses the worker's local model: `localModel` is
 * that model's file name where it is known (the workflow learns it from the worker), else `local`.
 */
export function modelAttribute(model: AgentInput['model'], localModel?: string): string {
  if (model.provider === 'scripted') return 'scripted';
  if (model.provider === 'local') {
    const file = model.model ?? localModel;
    return file ? `local:${file}` : 'local';
  }
  return `${model.provider}:${model.model}`;
}

/** Whether a namespace's custom search attributes (as `listSearchAttributes` answers) include every agent one. */
export function hasEveryAgentAttribute(custom: Record<string, unknown> | null | undefined): boolean {
  return AGENT_SEARCH_ATTRIBUTES.every((k) => k.name in (custom ?? {}));
}
