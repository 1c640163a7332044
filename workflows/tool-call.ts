/**
 * One tool call as a durable execution of its own: the doors that offer the built-in tools (the MCP
 * server) run each call as this workflow, so a call outlives the process that asked for it and a
 * retried request with the same workflow id does not run the tool twice. The call goes through the
 * same checks and the same activity, with the same options, as a call inside an agent run.
 */
import { ActivityFailure, ApplicationFailure, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { ToolResult } from '../shared/tools/define';
import { checkToolArgs } from '../shared/tools/define';
import { findTool } from '../shared/tools/registry';
import type { ToolCallInput } from '../shared/tools/tool-call';
import { TOOL_ACTIVITIES } from './agent/activities';
import { ownToolActivityOptions } from './agent/own-tools';
import { ownToolDefinition } from '../shared/tools/own';
import type { ToolActivity } from '../activities/types';

/**
 * Runs one registered tool. Invalid arguments come back as an error result (no activity runs), as
 * the model gets them inside a run; an unknown tool fails the workflow, non-retryable. A tool
 * whose activity fails for good comes back as an error result saying why.
 */
export async function toolCallWorkflow(input: ToolCallInput): Promise<ToolResult> {
  const own = input?.own && input.own.name === input.tool ? input.own : undefined;
  const def = own
    ? ownToolDefinition(own)
    : typeof input?.tool === 'string'
      ? findTool(input.tool)
      : undefined;
  const activity = own
    ? proxyActivities<Record<string, ToolActivity>>(ownToolActivityOptions(own))[own.name]
    : def
      ? TOOL_ACTIVITIES[def.name]
      : undefined;
  if (!def || !activity) {
    throw ApplicationFailure.nonRetryable(`No such tool "${String(input?.tool)}"`, 'UnknownTool');
  }
  const args = checkToolArgs(def, input.args ?? {});
  if (!args.success) return { content: args.error, isError: true };
  try {
    // The workflow id is the call's identity: tools that must not act twice key on it and this id.
    return await activity({ toolCallId: 'call', args: args.data });
  } catch (err) {
    if (isCancellation(err) || !(err instanceof ActivityFailure)) throw err;
    const cause = err.cause?.message ?? err.message;
    return {
      content: `Tool ${def.name} failed: ${cause}. Try different arguments or another approach.`,
      isError: true,
    };
  }
}
