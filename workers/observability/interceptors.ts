import { Context } from '@temporalio/activity';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import { describeError, errorTypeOf } from '../../shared/private-text';
import type { AgentCall, CallEnd } from './agent-calls';
import { agentCallOf, callEnded, callFailed } from './agent-calls';
import { currentPrivateWords } from './private-values';

/**
 * Logs one structured line per activity attempt outcome through Temporal's logger: type, id,
 * attempt, workflow id and duration, and for model and tool calls the step, model or tool, call id,
 * tokens and outcome. Arguments, prompts and results are never logged: they may hold user data.
 * A failure is logged as its type and a sanitized message (no word of the arguments).
 */
export class ActivityOutcomeLogger implements ActivityInboundCallsInterceptor {
  async execute(
    input: ActivityExecuteInput,
    next: Next<ActivityInboundCallsInterceptor, 'execute'>,
  ): Promise<unknown> {
    const ctx = Context.current();
    const call = agentCallOf(ctx.info.activityType, input.args);
    const meta = {
      activityType: ctx.info.activityType,
      activityId: ctx.info.activityId,
      attempt: ctx.info.attempt,
      workflowId: ctx.info.workflowExecution?.workflowId,
      ...(call ? callMeta(call) : {}),
    };
    const started = Date.now();
    try {
      const result = await next(input);
      ctx.log.info('activity completed', {
        ...meta,
        ...(call ? endMeta(callEnded(call, result)) : {}),
        durationMs: Date.now() - started,
      });
      return result;
    } catch (err) {
      ctx.log.warn('activity failed', {
        ...meta,
        ...(call
          ? endMeta(callFailed(err, ctx.cancellationSignal.aborted))
          : { errorType: errorTypeOf(err) }),
        durationMs: Date.now() - started,
        error: describeError(err, currentPrivateWords()),
      });
      throw err;
    }
  }
}

function callMeta(call: AgentCall): Record<string, unknown> {
  return call.operation === 'chat'
    ? { step: call.step, model: call.name, provider: call.provider }
    : { step: call.step, tool: call.name, toolCallId: call.toolCallId };
}

function endMeta(end: CallEnd): Record<string, unknown> {
  return Object.fromEntries(Object.entries(end).filter(([, v]) => v !== undefined));
}
