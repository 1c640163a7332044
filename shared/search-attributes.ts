import { defineSearchAttributeKey } from '@temporalio/common';
import type { AgentInput } from './agent/input';

/** Run status, for `temporal workflow list --query "AgentStatus='running'"` and the Web UI. */
export const AgentStatusKey = defineSearchAttributeKey('AgentStatus', 'KEYWORD');
/** Model of the run (`scripted`, `openai:<model>`, `anthropic:<model>`). */
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

/** A run's model as its `AgentModel` search attribute names it: `scripted`, `openai:gpt-4o-mini`, … */
export function modelAttribute(model: AgentInput['model']): string {
  return model.provider === 'scripted' ? 'scripted' : `${model.provider}:${model.model}`;
}
