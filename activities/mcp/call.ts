/**
 * One MCP tool call as one activity. The worker registers no activity per MCP tool: its default
 * activity serves every `mcp:<server>/<tool>` activity type, so a tool a server adds later is
 * callable without a worker restart, and the activity type in history names the tool.
 *
 * Retries are safe to the extent the server honours it: every attempt of a call carries the same
 * idempotency key (workflow id + tool call id) in the request's `_meta`.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';
import { MCP_PREFIX, MCP_RESOURCES_TOOL, parseMcpRef } from '../../shared/tools/mcp';
import type { ContentStore } from '../content/store';
import type { McpPool } from './pool';
import type { McpCallResult } from './results';
import { callResourcesTool } from './resources';
import { mcpResultToToolResult } from './results';

/** The `_meta` key of the idempotency key every call carries. */
export const IDEMPOTENCY_META_KEY = 'io.durable-agent/idempotency-key';
/** How often a waiting call heartbeats (a dead worker is noticed by the heartbeat timeout). */
const HEARTBEAT_MS = 2000;

/** Runs the MCP call named by the activity type. */
export async function callMcpTool(
  pool: McpPool,
  store: ContentStore,
  input: ToolActivityInput<unknown>,
): Promise<ToolResult> {
  const ctx = Context.current();
  const type = ctx.info.activityType;
  const parsed = type.startsWith(MCP_PREFIX) ? parseMcpRef(type) : null;
  if (parsed === null || typeof parsed === 'string' || parsed.tool === undefined) {
    throw ApplicationFailure.create({
      type: 'ActivityNotRegistered',
      message: `Activity ${type} is not registered on this worker`,
      nonRetryable: true,
    });
  }
  const { server, tool } = parsed;
  let settings;
  try {
    settings = pool.server(server);
  } catch (err) {
    throw ApplicationFailure.create({
      type: 'McpServerUnknown',
      message: (err as Error).message,
      nonRetryable: true,
    });
  }
  const key = `${ctx.info.workflowExecution?.workflowId ?? ctx.info.activityId}/${input.toolCallId}`;
  const beat = setInterval(() => ctx.heartbeat({ waiting: tool }), HEARTBEAT_MS);
  try {
    // One use of the connection: the call, then the digest of the tool list it belongs to (kept
    // by the pool, so listed again only after the server said its tools changed).
    const { out, digest } = await pool.use(server, async (client, conn) => {
      const options = { timeout: settings.callTimeoutMs, signal: ctx.cancellationSignal };
      const result =
        tool === MCP_RESOURCES_TOOL
          ? await callResourcesTool(client, server, input.args, store, options)
          : await mcpResultToToolResult(
              server,
              tool,
              (await client.callTool(
                {
                  name: tool,
                  arguments: (input.args ?? {}) as Record<string, unknown>,
                  _meta: { [IDEMPOTENCY_META_KEY]: key },
                },
                undefined,
                {
                  ...options,
                  onprogress: (p) =>
                    ctx.heartbeat({ progress: p.progress, total: p.total, message: p.message }),
                },
              )) as McpCallResult,
              store,
            );
      return { out: result, digest: await conn.toolsDigest().catch(() => undefined) };
    });
    // The run compares the digest with the one it holds, and discovers again when the list changed.
    return digest ? { ...out, toolsDigest: digest } : out;
  } catch (err) {
    if (err instanceof ApplicationFailure) throw err;
    if (ctx.cancellationSignal.aborted) throw err;
    if (err instanceof McpError && err.code === (ErrorCode.RequestTimeout as number)) {
      return {
        content: `The MCP tool ${tool} (server ${server}) did not answer within ${settings.callTimeoutMs / 1000} s. Try again later, with smaller input, or another way.`,
        isError: true,
      };
    }
    if (err instanceof McpError && err.code !== (ErrorCode.ConnectionClosed as number)) {
      // A protocol error (unknown tool, invalid arguments, an internal error) is the model's to handle.
      return { content: `MCP error from ${server}/${tool}: ${pool.redact(err.message)}`, isError: true };
    }
    // The connection dropped (the server died or restarted): a retry connects anew.
    throw ApplicationFailure.retryable(
      pool.redact(`MCP server "${server}" connection lost during ${tool}: ${(err as Error).message}`),
      'McpConnectionLost',
    );
  } finally {
    clearInterval(beat);
  }
}
