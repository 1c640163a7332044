import type { CallModelInput, CallModelOutput } from '../../shared/model';
import { errorTypeOf } from '../../shared/private-text';
import type { ToolActivityInput, ToolCategory, ToolResult } from '../../shared/tools/define';
import { findTool } from '../../shared/tools/registry';
import { isOwnToolName } from '../../shared/tools/own';

/**
 * An activity attempt in the agent's terms: a model call or a tool call. Read from the activity's
 * type and arguments; holds names, ids and the step only, never arguments, prompts or results.
 */
export interface AgentCall {
  operation: 'chat' | 'execute_tool';
  /** The model for `chat` (script name for the scripted model), the tool for `execute_tool`. */
  name: string;
  provider?: string;
  category?: ToolCategory;
  toolCallId?: string;
  step?: number;
}

/**
 * How an attempt ended: `ok`; `tool_error` (the tool answered with an error the model reads);
 * `failed` (the attempt threw: retried or failed per the activity's policy); `cancelled`.
 */
export type CallOutcome = 'ok' | 'tool_error' | 'failed' | 'cancelled';

/** What an attempt produced, for spans and logs. */
export interface CallEnd {
  outcome: CallOutcome;
  inputTokens?: number;
  outputTokens?: number;
  /** Tool calls the model asked for. */
  toolCalls?: number;
  finishReason?: string;
  errorType?: string;
}

/** The agent call an activity attempt is, or undefined for other activities (notification delivery). */
export function agentCallOf(activityType: string, args: unknown[]): AgentCall | undefined {
  if (activityType === 'callModel') {
    const arg = args[0] as CallModelInput | undefined;
    const model = arg?.model;
    return {
      operation: 'chat',
      name: !model
        ? 'unknown'
        : model.provider === 'scripted'
          ? (model.script ?? 'inline')
          : (model.model ?? 'default'),
      provider: model?.provider,
      step: arg?.step,
    };
  }
  const tool = findTool(activityType);
  const arg = args[0] as ToolActivityInput<unknown> | undefined;
  if (!tool) {
    // An app's own tool (defineTool): an activity named after it, given a tool call's input.
    if (!isOwnToolName(activityType) || typeof arg?.toolCallId !== 'string') return undefined;
    return { operation: 'execute_tool', name: activityType, toolCallId: arg.toolCallId, step: arg.step };
  }
  return {
    operation: 'execute_tool',
    name: tool.name,
    category: tool.category,
    toolCallId: arg?.toolCallId,
    step: arg?.step,
  };
}

/** How a completed attempt ended. */
export function callEnded(call: AgentCall, result: unknown): CallEnd {
  if (call.operation === 'chat') {
    const out = result as CallModelOutput;
    return {
      outcome: 'ok',
      inputTokens: out.usage.inputTokens,
      outputTokens: out.usage.outputTokens,
      toolCalls: out.toolCalls.length,
      ...(out.finishReason ? { finishReason: out.finishReason } : {}),
    };
  }
  return (result as ToolResult | undefined)?.isError === true
    ? { outcome: 'tool_error', errorType: 'tool_error' }
    : { outcome: 'ok' };
}

/** How a thrown attempt ended; the error type is an ApplicationFailure's type where it has one. */
export function callFailed(err: unknown, cancelled: boolean): CallEnd {
  return { outcome: cancelled ? 'cancelled' : 'failed', errorType: errorTypeOf(err) };
}
