/**
 * MCP Tasks backed by Temporal: a task is an agent run, its task id the run's workflow id. Nothing
 * is kept in this process, so a client that reconnects after the server restarted (or talks to
 * another instance) finds its task where the run is; any agent run, however it was started, can be
 * read as a task. Status mapping: running → `working`, waiting for approval → `input_required`
 * (answer with `agent_approve` / `agent_reject`), waiting for an answer → `input_required` (answer
 * with `agent_answer`), completed → `completed`, failed, timed out or
 * terminated → `failed`, cancelled → `cancelled`.
 */
import { noSuchRunMessage } from '../../shared/identifiers';
import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { CallToolResult, Result, Task } from '@modelcontextprotocol/sdk/types.js';
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { defaultPayloadConverter } from '@temporalio/common';
import { optionalTsToDate } from '@temporalio/common/lib/time';
import type { AgentResult, AgentStateView } from '../../shared/agent';
import { AGENT_WORKFLOW_TYPE, stateQuery } from '../../shared/agent';
import { formatAnswer } from '../../shared/render-citations';
import { AgentStatusKey } from '../../shared/search-attributes';
import { resolveRunAnswer } from '../../client/answer';
import { ANSWER_TIMEOUT_MS } from '../../client/notification-client';
import { errorResult, jsonResult } from './results';

/** How often a client is asked to poll a task (`tasks/get`), in milliseconds. */
export const TASK_POLL_INTERVAL_MS = 500;

/** Tasks one `tasks/list` page holds. */
const TASKS_PER_PAGE = 50;

/** How long `tasks/cancel` waits for a run to finish cancelling before it answers. */
const CANCEL_WAIT_MS = 10_000;

/** Temporal's execution statuses (temporal.api.enums.v1.WorkflowExecutionStatus) as task statuses. */
const STATUS_OF_EXECUTION: Record<number, Task['status']> = {
  1: 'working',
  2: 'completed',
  3: 'failed',
  4: 'cancelled',
  5: 'failed',
  6: 'working',
  7: 'failed',
};

/** The same, by the client's status names. */
const STATUS_OF_NAME: Record<string, Task['status']> = {
  RUNNING: 'working',
  COMPLETED: 'completed',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
  TERMINATED: 'failed',
  CONTINUED_AS_NEW: 'working',
  TIMED_OUT: 'failed',
};

/** What a waiting run asks for, as a task's status message. */
function approvalMessage(workflowId: string, state: AgentStateView): string {
  const waiting = (state.approvals ?? [])
    .map((a) => `${a.tool} (toolCallId "${a.toolCallId}", until ${a.deadline})`)
    .join(', ');
  return (
    `Waiting for approval: ${waiting || 'a tool call'}. Answer with agent_approve or agent_reject ` +
    `{ "id": "${workflowId}", "toolCallId": … }`
  );
}

/** What a run waiting for answers asks, as a task's status message. */
function questionMessage(workflowId: string, state: AgentStateView): string {
  const waiting = (state.questions ?? [])
    .map(
      (q) =>
        `${q.kind === 'question' ? JSON.stringify(q.question.slice(0, 200)) : q.tool} (toolCallId "${q.toolCallId}", until ${q.deadline})`,
    )
    .join(', ');
  return (
    `Waiting for an answer: ${waiting || 'a question'}. Answer with agent_answer ` +
    `{ "id": "${workflowId}", "toolCallId": …, "answer": … } (or leave "answer" out to be asked)`
  );
}

/** The task an agent run is, or null when `taskId` names no agent run. */
export async function taskOfRun(client: Client, taskId: string): Promise<Task | null> {
  const handle = client.workflow.getHandle(taskId);
  let d: WorkflowExecutionDescription;
  try {
    d = await handle.describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return null;
    throw err;
  }
  if (d.type !== AGENT_WORKFLOW_TYPE) return null;
  const task: Task = {
    taskId,
    status: STATUS_OF_NAME[d.status.name] ?? 'working',
    ttl: null,
    createdAt: d.startTime.toISOString(),
    lastUpdatedAt: (d.closeTime ?? d.startTime).toISOString(),
    pollInterval: TASK_POLL_INTERVAL_MS,
  };
  if (task.status !== 'working') return task;
  try {
    const state = await client.withDeadline(Date.now() + ANSWER_TIMEOUT_MS, () => handle.query(stateQuery));
    if (state.status === 'waiting_for_approval') {
      return { ...task, status: 'input_required', statusMessage: approvalMessage(taskId, state) };
    }
    if (state.status === 'waiting_for_input') {
      return { ...task, status: 'input_required', statusMessage: questionMessage(taskId, state) };
    }
    return { ...task, statusMessage: `step ${state.step} of at most ${state.maxSteps}` };
  } catch (err) {
    // Running, but no worker answers its queries now: still a working task.
    return { ...task, statusMessage: `running; its state cannot be read now (${(err as Error).message})` };
  }
}

/** The final result of a closed run as a tool result: its answer with citations, or why it ended without one. */
export async function resultOfRun(client: Client, workflowId: string): Promise<CallToolResult> {
  let result: AgentResult;
  try {
    result = (await client.workflow.getHandle(workflowId).result()) as AgentResult;
  } catch (err) {
    if (err instanceof WorkflowFailedError) {
      return errorResult(`Run ${workflowId} ended without an answer: ${err.cause?.message ?? err.message}`);
    }
    if (err instanceof WorkflowNotFoundError) return errorResult(noSuchRunMessage(workflowId));
    throw err;
  }
  const answer =
    result.answer === null
      ? null
      : formatAnswer((await resolveRunAnswer(client, workflowId, result.answer)).rendered, 'markdown');
  const { usage, steps, stopReason, budget, costUsd } = result;
  return jsonResult({
    workflowId,
    answer,
    stopReason,
    steps,
    usage,
    ...(budget ? { budget } : {}),
    ...(costUsd !== undefined ? { costUsd } : {}),
  });
}

/** A list entry's task status: running runs tell a pending approval by their AgentStatus search attribute. */
function listedStatus(
  status: number | null | undefined,
  attributes: Record<string, Payload> | null | undefined,
): Task['status'] {
  const mapped = STATUS_OF_EXECUTION[status ?? 1] ?? 'working';
  if (mapped !== 'working') return mapped;
  const payload = attributes?.[AgentStatusKey.name];
  try {
    const value = payload ? defaultPayloadConverter.fromPayload(payload) : undefined;
    return value === 'waiting_for_approval' || value === 'waiting_for_input' ? 'input_required' : 'working';
  } catch {
    return 'working';
  }
}

/** The agent runs of the namespace as MCP tasks. Tasks are made by starting runs, not by the store. */
export class TemporalTaskStore implements TaskStore {
  constructor(private readonly client: Client) {}

  createTask(): Promise<Task> {
    return Promise.reject(new Error('A task of this server is an agent run: start one with agent_run'));
  }

  getTask(taskId: string): Promise<Task | null> {
    return taskOfRun(this.client, taskId);
  }

  /** A run's result is its workflow's: nothing to store. */
  async storeTaskResult(): Promise<void> {}

  getTaskResult(taskId: string): Promise<Result> {
    return resultOfRun(this.client, taskId);
  }

  /** Cancelling is the only change a client can ask for: the run is cancelled, gracefully. */
  async updateTaskStatus(taskId: string, status: Task['status']): Promise<void> {
    if (status !== 'cancelled') return;
    const handle = this.client.workflow.getHandle(taskId);
    await handle.cancel();
    // Answer once the run has stopped, so the task the client reads next says cancelled.
    await this.client.withDeadline(Date.now() + CANCEL_WAIT_MS, () => handle.result()).catch(() => undefined);
  }

  async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const page = await this.client.workflowService.listWorkflowExecutions({
      namespace: this.client.options.namespace,
      query: `WorkflowType = '${AGENT_WORKFLOW_TYPE}'`,
      pageSize: TASKS_PER_PAGE,
      ...(cursor ? { nextPageToken: Buffer.from(cursor, 'base64url') } : {}),
    });
    const tasks = (page.executions ?? []).flatMap((e): Task[] => {
      const taskId = e.execution?.workflowId;
      const started = optionalTsToDate(e.startTime);
      if (!taskId || !started) return [];
      return [
        {
          taskId,
          status: listedStatus(e.status, e.searchAttributes?.indexedFields),
          ttl: null,
          createdAt: started.toISOString(),
          lastUpdatedAt: (optionalTsToDate(e.closeTime) ?? started).toISOString(),
          pollInterval: TASK_POLL_INTERVAL_MS,
        },
      ];
    });
    const next = page.nextPageToken?.length
      ? Buffer.from(page.nextPageToken).toString('base64url')
      : undefined;
    return { tasks, ...(next ? { nextCursor: next } : {}) };
  }
}
