import { AsyncLocalStorage } from 'node:async_hooks';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import type { PrivateWords } from '../../shared/private-text';
import { privateWords } from '../../shared/private-text';

const current = new AsyncLocalStorage<unknown[]>();

/**
 * Makes an activity attempt's arguments known to everything that runs inside it, so log lines
 * and spans (Temporal's `RunActivity` span included, when this interceptor is outermost) can
 * redact any word of them from error messages. The arguments themselves are never written out.
 */
export class PrivateValuesInterceptor implements ActivityInboundCallsInterceptor {
  execute(
    input: ActivityExecuteInput,
    next: Next<ActivityInboundCallsInterceptor, 'execute'>,
  ): Promise<unknown> {
    return current.run(input.args, () => next(input));
  }
}

/** The words of the running activity attempt's arguments; empty outside an activity. */
export function currentPrivateWords(): PrivateWords {
  const args = current.getStore();
  return args ? privateWords(args) : new Set();
}
