/**
 * Agent runs over MCP: start one (`agent_start`, or `agent_run` as an MCP Task whose id is the
 * workflow id), read its state, events and answer (`agent_status`), its notifications
 * (`agent_notifications`), answer its pending approvals (`agent_approve`, `agent_reject`) and cancel
 * it (`agent_cancel`). Everything goes through client/, as the CLI and the HTTP API do, and reads
 * only what Temporal holds, so a client finds its run whichever server process it asks.
 */
import { noSuchRunMessage } from '../../shared/identifiers';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import { z } from 'zod';
import { eventsQuery, stateQuery } from '../../shared/agent';
import { formatAnswer } from '../../shared/render-citations';
import { resolveRunAnswer } from '../../client/answer';
import { ApprovalRequestError, decideApproval } from '../../client/approval-client';
import {
  ANSWER_TIMEOUT_MS,
  NotificationTargetError,
  explainTargetError,
  readNotifications,
} from '../../client/notification-client';
import { RunIdTakenError, startAgentRun } from '../../client/start-run';
import { errorResult, jsonResult } from './results';
import type { StartRunArgs } from './run-input';
import { StartRunShape, buildRun } from './run-input';
import type { TemporalTaskStore } from './task-store';
import { TASK_POLL_INTERVAL_MS, resultOfRun, taskOfRun } from './task-store';

/** What the run tools need. */
export interface RunToolsContext {
  client: Client;
  taskQueue: string;
  /** Where scripted models' files are, to enable the tools a script calls. */
  scriptsDir: string;
  store: TemporalTaskStore;
}

/** Events `agent_status` returns by default, and at most. */
const DEFAULT_EVENTS = 20;
const MAX_EVENTS = 100;
/** Notifications `agent_notifications` returns by default, and at most. */
const DEFAULT_NOTIFICATIONS = 20;
const MAX_NOTIFICATIONS = 100;

const RunId = z.string().min(1).max(1000).describe('The run’s workflow id (agent-…)');

/** A failure about run `id`, as a tool error result; unknown failures are thrown on. */
function runFailure(err: unknown, id: string): CallToolResult {
  if (err instanceof ApprovalRequestError) return errorResult(err.message);
  if (err instanceof WorkflowNotFoundError) return errorResult(noSuchRunMessage(id));
  const explained = explainTargetError(err, id);
  if (explained instanceof NotificationTargetError) return errorResult(explained.message);
  throw err;
}

/** Starts a run, or finds the one already under its id (a start sent again starts nothing). */
async function startRun(
  ctx: RunToolsContext,
  args: StartRunArgs,
): Promise<{ ok: true; workflowId: string; alreadyStarted: boolean } | { ok: false; error: string }> {
  const built = await buildRun(args, ctx.scriptsDir);
  if (!built.ok) return built;
  try {
    await startAgentRun(ctx.client, built.input, {
      workflowId: built.workflowId,
      taskQueue: ctx.taskQueue,
      memo: { startedBy: 'mcp' },
    });
    return { ok: true, workflowId: built.workflowId, alreadyStarted: false };
  } catch (err) {
    if (err instanceof RunIdTakenError)
      return { ok: true, workflowId: built.workflowId, alreadyStarted: true };
    throw err;
  }
}

/** `agent_status`: where the run is, its recent events and its answer. */
async function runStatus(ctx: RunToolsContext, id: string, since: number | undefined, limit: number) {
  const handle = ctx.client.workflow.getHandle(id);
  const described = await handle.describe();
  const [state, events] = await Promise.all([
    handle.query(stateQuery),
    handle.query(eventsQuery, since !== undefined ? { since } : {}),
  ]);
  const answer =
    state.answer === null
      ? null
      : formatAnswer((await resolveRunAnswer(ctx.client, id, state.answer)).rendered, 'markdown');
  const task = described.memo?.task;
  return jsonResult({
    workflowId: id,
    execution: described.status.name,
    task: typeof task === 'string' ? task : null,
    status: state.status,
    step: state.step,
    maxSteps: state.maxSteps,
    usage: state.usage,
    approvals: state.approvals ?? [],
    questions: state.questions ?? [],
    lastError: state.lastError,
    stopReason: state.stopReason,
    answer,
    events: events.slice(-limit),
    eventsTruncated: events.length > limit,
  });
}

/** Registers the agent-run tools. */
export function registerRunTools(server: McpServer, ctx: RunToolsContext): void {
  const { client } = ctx;
  server.registerTool(
    'agent_start',
    {
      description:
        'Start an agent run (a durable Temporal workflow) and return its id at once. Follow it with ' +
        'agent_status; answer its approvals with agent_approve / agent_reject.',
      inputSchema: StartRunShape,
    },
    async (args) => {
      const started = await startRun(ctx, args);
      if (!started.ok) return errorResult(started.error);
      return jsonResult({ workflowId: started.workflowId, alreadyStarted: started.alreadyStarted });
    },
  );

  server.experimental.tasks.registerToolTask(
    'agent_run',
    {
      description:
        'Run an agent to its answer. As an MCP Task (task id = the run’s workflow id; input_required = a ' +
        'tool call waits for approval, answered with agent_approve / agent_reject); called plainly, it ' +
        'returns when the run has ended.',
      inputSchema: StartRunShape,
      execution: { taskSupport: 'optional' },
    },
    {
      createTask: async (args) => {
        const started = await startRun(ctx, args);
        if (!started.ok) throw new McpError(ErrorCode.InvalidParams, started.error);
        const now = new Date().toISOString();
        const task = (started.alreadyStarted ? await taskOfRun(client, started.workflowId) : null) ?? {
          taskId: started.workflowId,
          status: 'working' as const,
          ttl: null,
          createdAt: now,
          lastUpdatedAt: now,
          pollInterval: TASK_POLL_INTERVAL_MS,
        };
        return { task };
      },
      getTask: async (_args, extra) => {
        const task = await taskOfRun(client, extra.taskId);
        if (!task) throw new McpError(ErrorCode.InvalidParams, noSuchRunMessage(extra.taskId));
        return task;
      },
      getTaskResult: (_args, extra) => resultOfRun(client, extra.taskId),
    },
  );

  server.registerTool(
    'agent_status',
    {
      description:
        'A run’s status, step, usage, pending approvals, last error, its answer (citations resolved) and recent events.',
      inputSchema: {
        id: RunId,
        since: z.number().int().min(0).optional().describe('Only events after this sequence number'),
        events: z
          .number()
          .int()
          .min(0)
          .max(MAX_EVENTS)
          .default(DEFAULT_EVENTS)
          .describe('Newest events to return'),
      },
      annotations: { readOnlyHint: true },
    },
    async ({ id, since, events }) => {
      try {
        return await client.withDeadline(Date.now() + ANSWER_TIMEOUT_MS, () =>
          runStatus(ctx, id, since, events),
        );
      } catch (err) {
        return runFailure(err, id);
      }
    },
  );

  server.registerTool(
    'agent_notifications',
    {
      description: 'A run’s notifications (or an inbox’s, with id inbox:<user>), newest page first.',
      inputSchema: {
        id: RunId,
        limit: z.number().int().min(1).max(MAX_NOTIFICATIONS).default(DEFAULT_NOTIFICATIONS),
        before: z.number().int().min(0).optional().describe('Page back: notifications numbered below this'),
      },
      annotations: { readOnlyHint: true },
    },
    async ({ id, limit, before }) => {
      try {
        const page = await readNotifications(client, id, {
          limit,
          ...(before !== undefined ? { before } : {}),
        });
        return jsonResult({ id, ...page });
      } catch (err) {
        return runFailure(err, id);
      }
    },
  );

  const ToolCallId = z
    .string()
    .min(1)
    .max(1000)
    .describe('The waiting call’s toolCallId (agent_status lists them)');
  server.registerTool(
    'agent_approve',
    {
      description: 'Approve a tool call that waits for approval, optionally with edited arguments.',
      inputSchema: {
        id: RunId,
        toolCallId: ToolCallId,
        args: z
          .record(z.string(), z.unknown())
          .optional()
          .describe('Run the call with these arguments instead'),
        reason: z.string().max(2000).optional(),
      },
    },
    async ({ id, toolCallId, args, reason }) => {
      try {
        const r = await decideApproval(client, id, {
          toolCallId,
          approve: true,
          ...(args !== undefined ? { args } : {}),
          ...(reason ? { reason } : {}),
        });
        return jsonResult({ workflowId: id, ...r });
      } catch (err) {
        return runFailure(err, id);
      }
    },
  );

  server.registerTool(
    'agent_reject',
    {
      description: 'Refuse a tool call that waits for approval; the reason is shown to the model.',
      inputSchema: { id: RunId, toolCallId: ToolCallId, reason: z.string().trim().min(1).max(2000) },
    },
    async ({ id, toolCallId, reason }) => {
      try {
        return jsonResult({
          workflowId: id,
          ...(await decideApproval(client, id, { toolCallId, approve: false, reason })),
        });
      } catch (err) {
        return runFailure(err, id);
      }
    },
  );

  server.registerTool(
    'agent_cancel',
    {
      description:
        'Cancel a run gracefully: running tools are cancelled and cleaned up; its state stays readable.',
      inputSchema: { id: RunId },
      annotations: { destructiveHint: true, idempotentHint: true },
    },
    async ({ id }) => {
      try {
        const task = await taskOfRun(client, id);
        if (!task) return errorResult(`No agent run with id "${id}" in this namespace`);
        if (['completed', 'failed', 'cancelled'].includes(task.status)) {
          return errorResult(`Run "${id}" has already ended (${task.status}); nothing to cancel`);
        }
        await ctx.store.updateTaskStatus(id, 'cancelled');
        return jsonResult({ workflowId: id, status: (await taskOfRun(client, id))?.status ?? 'cancelled' });
      } catch (err) {
        return runFailure(err, id);
      }
    },
  );
}
