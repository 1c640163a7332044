import type { Client, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import type { AgentInput } from '../shared/agent';
import { AGENT_WORKFLOW_TYPE } from '../shared/agent';
import {
  AGENT_SEARCH_ATTRIBUTES,
  AgentModelKey,
  AgentStatusKey,
  AgentStepKey,
} from '../shared/search-attributes';

const registered = new WeakMap<Client, Promise<boolean>>();

/** Whether the namespace has the agent search attributes (false where the API is not allowed, e.g. some Cloud keys). */
export function hasAgentSearchAttributes(client: Client): Promise<boolean> {
  let known = registered.get(client);
  if (!known) {
    known = client.connection.operatorService
      .listSearchAttributes({ namespace: client.options.namespace })
      .then((r) => AGENT_SEARCH_ATTRIBUTES.every((k) => k.name in (r.customAttributes ?? {})))
      .catch(() => false);
    registered.set(client, known);
  }
  return known;
}

/**
 * Starts an agent run. Where the namespace has the agent search attributes they are set at start,
 * which tells the workflow to keep them current (status, step, model, last tool).
 */
export async function startAgentRun(
  client: Client,
  input: AgentInput,
  opts: { workflowId: string; taskQueue: string; memo?: Record<string, unknown> },
): Promise<WorkflowHandleWithFirstExecutionRunId> {
  const model =
    input.model.provider === 'scripted' ? 'scripted' : `${input.model.provider}:${input.model.model}`;
  const attributes: SearchAttributePair[] = [
    { key: AgentStatusKey, value: 'running' },
    { key: AgentStepKey, value: 0 },
    { key: AgentModelKey, value: model },
  ];
  return client.workflow.start(AGENT_WORKFLOW_TYPE, {
    taskQueue: opts.taskQueue,
    workflowId: opts.workflowId,
    args: [input],
    // notifyUser lets `approvals --user` find the runs that ask this user.
    memo: {
      task: input.task.slice(0, 200),
      ...(input.notify?.user ? { notifyUser: input.notify.user } : {}),
      ...opts.memo,
    },
    ...((await hasAgentSearchAttributes(client)) ? { typedSearchAttributes: attributes } : {}),
  });
}
