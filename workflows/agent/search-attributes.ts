import { upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { AgentStatus, ParsedAgentInput } from '../../shared/agent';
import {
  AgentLastToolKey,
  AgentModelKey,
  AgentStatusKey,
  AgentStepKey,
} from '../../shared/search-attributes';

/** What the run's search attributes show. */
export interface RunAttributes {
  status: AgentStatus;
  step: number;
  model: ParsedAgentInput['model'];
  lastTool: string | undefined;
}

/**
 * Keeps the run's search attributes current, but only when the starter set them: upserting an
 * attribute the namespace has not registered would fail every workflow task.
 */
export function publishSearchAttributes({ status, step, model, lastTool }: RunAttributes): void {
  if (workflowInfo().typedSearchAttributes.get(AgentStatusKey) === undefined) return;
  upsertSearchAttributes([
    { key: AgentStatusKey, value: status },
    { key: AgentStepKey, value: step },
    {
      key: AgentModelKey,
      value: model.provider === 'scripted' ? 'scripted' : `${model.provider}:${model.model}`,
    },
    ...(lastTool ? [{ key: AgentLastToolKey, value: lastTool }] : []),
  ]);
}
