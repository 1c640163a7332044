import * as otel from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import { summariseError } from '../../shared/private-text';
import type { CallEnd } from './agent-calls';
import { agentCallOf, callEnded, callFailed } from './agent-calls';
import { currentPrivateWords } from './private-values';

/** The tracer name on every span this project creates. */
export const TRACER_NAME = 'durable-agent';

/** Span attribute keys. Model and tool spans follow OpenTelemetry's GenAI conventions where they exist. */
export const SPAN_ATTR = {
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  finishReasons: 'gen_ai.response.finish_reasons',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolCategory: 'durable_agent.tool.category',
  toolCalls: 'durable_agent.model.tool_calls',
  step: 'durable_agent.step',
  outcome: 'durable_agent.outcome',
  command: 'durable_agent.command',
  errorType: 'error.type',
  workflowId: 'temporal.workflow.id',
  runId: 'temporal.run.id',
  attempt: 'temporal.activity.attempt',
} as const;

/**
 * Adds one span per model call (`chat <model>`) and per tool call (`execute_tool <tool>`) inside
 * the activity attempt, with step, token usage and outcome. Arguments, prompts and results are
 * never recorded; a failure shows its type and a sanitized message.
 */
export class AgentSpanInterceptor implements ActivityInboundCallsInterceptor {
  constructor(private readonly tracer: otel.Tracer) {}

  async execute(
    input: ActivityExecuteInput,
    next: Next<ActivityInboundCallsInterceptor, 'execute'>,
  ): Promise<unknown> {
    const ctx = Context.current();
    const call = agentCallOf(ctx.info.activityType, input.args);
    if (!call) return next(input);
    const attributes = defined({
      [SPAN_ATTR.workflowId]: ctx.info.workflowExecution?.workflowId,
      [SPAN_ATTR.runId]: ctx.info.workflowExecution?.runId,
      [SPAN_ATTR.attempt]: ctx.info.attempt,
      [SPAN_ATTR.operation]: call.operation,
      [SPAN_ATTR.step]: call.step,
      ...(call.operation === 'chat'
        ? { [SPAN_ATTR.provider]: call.provider, [SPAN_ATTR.requestModel]: call.name }
        : {
            [SPAN_ATTR.toolName]: call.name,
            [SPAN_ATTR.toolCategory]: call.category,
            [SPAN_ATTR.toolCallId]: call.toolCallId,
          }),
    });
    const name = `${call.operation} ${call.name}`;
    return this.tracer.startActiveSpan(name, { kind: otel.SpanKind.INTERNAL, attributes }, async (span) => {
      try {
        const result = await next(input);
        span.setAttributes(endAttributes(callEnded(call, result)));
        return result;
      } catch (err) {
        span.setAttributes(endAttributes(callFailed(err, ctx.cancellationSignal.aborted)));
        const { type, message } = summariseError(err, currentPrivateWords());
        span.setStatus({ code: otel.SpanStatusCode.ERROR, message: `${type}: ${message}` });
        throw err;
      } finally {
        span.end();
      }
    });
  }
}

/** Attributes without the unset ones (OpenTelemetry would keep them as empty values). */
function defined(attrs: Record<string, otel.AttributeValue | undefined>): otel.Attributes {
  return Object.fromEntries(Object.entries(attrs).filter(([, v]) => v !== undefined));
}

function endAttributes(end: CallEnd): otel.Attributes {
  return defined({
    [SPAN_ATTR.outcome]: end.outcome,
    [SPAN_ATTR.inputTokens]: end.inputTokens,
    [SPAN_ATTR.outputTokens]: end.outputTokens,
    [SPAN_ATTR.toolCalls]: end.toolCalls,
    [SPAN_ATTR.finishReasons]: end.finishReason ? [end.finishReason] : undefined,
    [SPAN_ATTR.errorType]: end.errorType,
  });
}
