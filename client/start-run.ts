import type { Client, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import type { AgentInput } from '../shared/agent';
import { AGENT_WORKFLOW_TYPE } from '../shared/agent/messages';
import {
  AGENT_SEARCH_ATTRIBUTES,
  AgentModelKey,
  AgentStatusKey,
  AgentStepKey,
  modelAttribute,
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

/** A run id is taken by an earlier or running workflow and `reuse` was not asked for. */
export class RunIdTakenError extends Error {
  override readonly name = 'RunIdTakenError';
}

/**
 * How a run id that is already taken is handled (Temporal's id reuse and conflict policies):
 * without `reuse` any existing workflow under the id, running or closed, refuses the start; with
 * it, a closed one is followed by a new run and a running one is attached to instead of duplicated.
 */
export function idPolicies(reuse: boolean) {
  return reuse
    ? {
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      }
    : {
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
      };
}

/** Where and how an agent run starts: see {@link agentStartOptions}. */
export interface AgentStartPlace {
  workflowId: string;
  taskQueue: string;
  memo?: Record<string, unknown>;
  /** State to start from (a fork's conversation up to its step), the workflow's second argument. */
  carried?: unknown;
}

/**
 * The start options every agent run gets, however it is started (`run`, a fork, the MCP server, a
 * schedule's action): its arguments, its memo (`task`, and `notifyUser`, which `approvals --user`
 * looks for) and, where the namespace has the agent search attributes, their first values, which
 * tell the workflow to keep them current (status, step, model, last tool).
 */
export async function agentStartOptions(client: Client, input: AgentInput, opts: AgentStartPlace) {
  const attributes: SearchAttributePair[] = [
    { key: AgentStatusKey, value: 'running' },
    { key: AgentStepKey, value: 0 },
    { key: AgentModelKey, value: modelAttribute(input.model) },
  ];
  return {
    taskQueue: opts.taskQueue,
    workflowId: opts.workflowId,
    args: opts.carried !== undefined ? [input, opts.carried] : [input],
    memo: {
      task: input.task.slice(0, 200),
      ...(input.notify?.user ? { notifyUser: input.notify.user } : {}),
      ...opts.memo,
    },
    ...((await hasAgentSearchAttributes(client)) ? { typedSearchAttributes: attributes } : {}),
  };
}

/** Starts an agent run with {@link agentStartOptions}. */
export async function startAgentRun(
  client: Client,
  input: AgentInput,
  opts: AgentStartPlace & { reuse?: boolean },
): Promise<WorkflowHandleWithFirstExecutionRunId> {
  try {
    return await client.workflow.start(AGENT_WORKFLOW_TYPE, {
      ...(await agentStartOptions(client, input, opts)),
      ...idPolicies(opts.reuse ?? false),
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      throw new RunIdTakenError(
        `A run with id "${opts.workflowId}" already exists (running or closed): choose another --id, ` +
          'or pass --reuse to start a new run under it once closed (a running one is then followed, not duplicated)',
      );
    }
    throw err;
  }
}
