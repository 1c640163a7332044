import { Context } from '@temporalio/activity';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';

/**
 * Logs one structured line per activity attempt outcome (type, id, attempt, workflow id, duration)
 * through Temporal's logger. Arguments and results are never logged: they may hold user data.
 */
export class ActivityOutcomeLogger implements ActivityInboundCallsInterceptor {
  async execute(
    input: ActivityExecuteInput,
    next: Next<ActivityInboundCallsInterceptor, 'execute'>,
  ): Promise<unknown> {
    const ctx = Context.current();
    const meta = {
      activityType: ctx.info.activityType,
      activityId: ctx.info.activityId,
      attempt: ctx.info.attempt,
      workflowId: ctx.info.workflowExecution?.workflowId,
    };
    const started = Date.now();
    try {
      const result = await next(input);
      ctx.log.info('activity completed', { ...meta, durationMs: Date.now() - started });
      return result;
    } catch (err) {
      ctx.log.warn('activity failed', {
        ...meta,
        durationMs: Date.now() - started,
        error: (err as Error).message,
      });
      throw err;
    }
  }
}
