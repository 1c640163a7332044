/**
 * The built-in tools the MCP server offers: each call runs as a `toolCallWorkflow` (workflows/tool-call.ts),
 * which checks the arguments with the tool's zod schema and runs the tool's own activity with the
 * options an agent run gives it. The workflow id comes from the request, so a request that is sent
 * again does not run the tool again: it gets the first call's result.
 */
import { createHash } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import type { ToolDefinition, ToolResult } from '../../shared/tools/define';
import { findTool, TOOL_NAMES } from '../../shared/tools/registry';
import type { ToolCallInput } from '../../shared/tools/tool-call';
import { TOOL_CALL_ID_PREFIX, TOOL_CALL_WORKFLOW_TYPE } from '../../shared/tools/tool-call';
import { SIZE_BUDGETS, formatBytes, jsonBytes } from '../../shared/temporal-limits';
import { DEFAULT_MCP_TOOLS } from './default-tools';
import { errorResult } from './results';

export { DEFAULT_MCP_TOOLS };

/** `notify_user` tells, and `ask_user` asks, the user of a run; outside a run there is no one. */
const NOT_OFFERED = new Set(['notify_user', 'ask_user']);

/** Tools that may be offered. */
export const OFFERABLE_TOOLS: readonly string[] = TOOL_NAMES.filter((t) => !NOT_OFFERED.has(t));

/**
 * `_meta` key of a caller's idempotency key: requests that carry the same key (with the same tool
 * and arguments) are one call, however often they are sent and whichever connection sends them.
 */
export const IDEMPOTENCY_KEY_META = 'durable-agent/idempotency-key';

/** The most a call's `data` adds to its result; larger data stays out, saying so. */
const DATA_BYTES = 256 * 1024;

/** Checks a list of tool names to offer; throws naming the unknown or refused ones. */
export function checkOfferedTools(names: readonly string[]): string[] {
  const bad = names.filter((n) => !OFFERABLE_TOOLS.includes(n));
  if (bad.length) {
    throw new Error(
      `cannot offer ${bad.map((b) => `"${b}"`).join(', ')} over MCP; offerable tools: ${OFFERABLE_TOOLS.join(', ')}`,
    );
  }
  return [...new Set(names)];
}

/** What the server needs to run tool calls. */
export interface ToolCallContext {
  client: Client;
  taskQueue: string;
  /** Unique to this server instance: with the request id, it names a call of this connection. */
  connectionId: string;
}

/** The workflow id of a call: from the caller's idempotency key, else from this connection's request. */
export function toolCallWorkflowId(
  tool: string,
  request: { key?: string; connectionId: string; sessionId?: string; requestId: string | number },
  args: unknown,
): string {
  const identity =
    request.key !== undefined
      ? `key\n${request.key}`
      : `request\n${request.connectionId}\n${request.sessionId ?? ''}\n${String(request.requestId)}`;
  // The arguments are part of the call: a key sent again with other arguments is another call.
  const digest = createHash('sha256')
    .update(`${tool}\n${identity}\n${JSON.stringify(args)}`)
    .digest('hex')
    .slice(0, 32);
  return `${TOOL_CALL_ID_PREFIX}${tool}-${digest}`;
}

/** Runs one call as its workflow, or joins the call already made under the same id. */
async function runToolCall(
  ctx: ToolCallContext,
  workflowId: string,
  input: ToolCallInput,
  signal: AbortSignal,
): Promise<ToolResult> {
  const { client } = ctx;
  try {
    await client.workflow.start(TOOL_CALL_WORKFLOW_TYPE, {
      taskQueue: ctx.taskQueue,
      workflowId,
      args: [input],
      // A call sent again while it runs joins it; once it is closed, its result is read instead.
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  return client.withAbortSignal(signal, () =>
    client.workflow.getHandle(workflowId).result(),
  ) as Promise<ToolResult>;
}

/** A tool result as MCP content: the text the model would read, and the full record when it fits. */
function toMcpResult(workflowId: string, result: ToolResult): CallToolResult {
  let text = result.content;
  if (result.contentRef) {
    text += `\n[This is a preview: the whole result is ${formatBytes(result.contentBytes ?? 0)}, kept by the worker's content store.]`;
  }
  const data = result.data !== undefined && jsonBytes(result.data) <= DATA_BYTES ? { data: result.data } : {};
  return {
    content: [{ type: 'text', text }],
    structuredContent: { workflowId, text, ...data },
    ...(result.isError ? { isError: true } : {}),
  };
}

/** Registers one built-in tool. */
function registerTool(server: McpServer, ctx: ToolCallContext, def: ToolDefinition): void {
  server.registerTool(
    def.name,
    {
      description: `${def.description}\n\nReturns: ${def.output}\nEach call runs as a durable Temporal workflow (tool-${def.name}-…).`,
      inputSchema: def.inputs,
      annotations: { readOnlyHint: def.local === true, openWorldHint: def.category !== 'utility' },
    },
    async (args: unknown, extra) => {
      if (jsonBytes(args) > SIZE_BUDGETS.toolArgumentsBytes) {
        return errorResult(
          `Arguments for ${def.name} are over their budget of ${formatBytes(SIZE_BUDGETS.toolArgumentsBytes)}`,
        );
      }
      const key = extra._meta?.[IDEMPOTENCY_KEY_META];
      const workflowId = toolCallWorkflowId(
        def.name,
        {
          ...(typeof key === 'string' && key ? { key } : {}),
          connectionId: ctx.connectionId,
          ...(extra.sessionId ? { sessionId: extra.sessionId } : {}),
          requestId: extra.requestId,
        },
        args,
      );
      // Best effort, and only at the level the client asked for (the SDK drops what is below it).
      await server
        .sendLoggingMessage(
          {
            level: 'info',
            logger: 'durable-agent',
            data: {
              tool: def.name,
              workflowId,
              message: `${def.name} runs as the durable workflow ${workflowId}`,
            },
          },
          extra.sessionId,
        )
        .catch(() => undefined);
      try {
        const result = await runToolCall(
          ctx,
          workflowId,
          { tool: def.name, args, caller: 'mcp' },
          extra.signal,
        );
        return toMcpResult(workflowId, result);
      } catch (err) {
        if (err instanceof WorkflowFailedError) {
          return errorResult(`Tool ${def.name} failed (${workflowId}): ${err.cause?.message ?? err.message}`);
        }
        throw err;
      }
    },
  );
}

/** Registers the named built-in tools (checked with {@link checkOfferedTools} first). */
export function registerBuiltInTools(
  server: McpServer,
  ctx: ToolCallContext,
  names: readonly string[],
): void {
  for (const name of checkOfferedTools(names)) registerTool(server, ctx, findTool(name) as ToolDefinition);
}
