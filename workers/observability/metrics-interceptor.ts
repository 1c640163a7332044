import { Context } from '@temporalio/activity';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import type { CallModelInput } from '../../shared/model';
import type { ModelPrice, PriceTable } from '../../shared/run-limits';
import { priceFor } from '../../shared/run-limits';
import { isMcpRef } from '../../shared/tools/mcp';
import type { AgentCall } from './agent-calls';
import { agentCallOf, callEnded, callFailed } from './agent-calls';
import type { AgentMetrics } from './metrics';

/**
 * The agent call an attempt is, for metrics: a model call, a built-in tool call, or an MCP tool
 * call (activity type `mcp:<server>/<tool>`, named so; its label is bounded by AgentMetrics).
 */
function meteredCallOf(activityType: string, args: unknown[]): AgentCall | undefined {
  if (isMcpRef(activityType)) return { operation: 'execute_tool', name: activityType, category: 'mcp' };
  return agentCallOf(activityType, args);
}

/** The worker's price of a model call's model, if its price table has one. */
function priceOf(args: unknown[], prices: PriceTable | undefined): ModelPrice | undefined {
  const model = (args[0] as CallModelInput | undefined)?.model;
  if (!model || !prices) return undefined;
  return priceFor({ provider: model.provider, ...('model' in model ? { model: model.model } : {}) }, prices);
}

/**
 * Records every model and tool call attempt (local activities too) in the agent's metrics: its
 * outcome and duration, and a model call's tokens and cost at the worker's prices. Reads names,
 * usage and outcome only, never arguments or results.
 */
export class AgentMetricsInterceptor implements ActivityInboundCallsInterceptor {
  constructor(
    private readonly metrics: AgentMetrics,
    private readonly prices: PriceTable | undefined,
  ) {}

  async execute(
    input: ActivityExecuteInput,
    next: Next<ActivityInboundCallsInterceptor, 'execute'>,
  ): Promise<unknown> {
    const ctx = Context.current();
    const call = meteredCallOf(ctx.info.activityType, input.args);
    if (!call) return next(input);
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    try {
      const result = await next(input);
      const price = call.operation === 'chat' ? priceOf(input.args, this.prices) : undefined;
      this.metrics.callEnded(call, callEnded(call, result), seconds(), price);
      return result;
    } catch (err) {
      this.metrics.callEnded(call, callFailed(err, ctx.cancellationSignal.aborted), seconds());
      throw err;
    }
  }
}
