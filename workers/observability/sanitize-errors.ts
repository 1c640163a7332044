/**
 * The activity boundary for errors: whatever an activity throws is rebuilt from its type, message,
 * stack and cause only, with credentials masked, before Temporal's SDK logs it (`Activity failed`)
 * or the failure converter writes it into workflow history. Driver errors carry more than their
 * message (Node's URL errors keep the URL in `input`, HTTP clients keep request headers), and none
 * of that may leave the worker. On the final attempt a message no longer promises a retry.
 */
import { CompleteAsyncError, Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import { redactSecrets } from '../../shared/redact-secrets';

/** Causes followed; deeper ones are dropped. */
const MAX_CAUSE_DEPTH = 4;

/** Own properties an error keeps besides its message, stack and cause: short codes that name a condition. */
const KEPT_CODE = /^[A-Z][A-Z0-9_]{1,40}$/;

/** Wording that promises another attempt. */
const RETRY_PROMISE = /;?\s*(?:will retry|retrying(?: in [\d.]+ s as asked)?)\.?/gi;

/** How the attempt that failed ends the activity, when it does. */
export interface AttemptEnd {
  /** Attempts made, when this was the last one the retry policy allows. */
  finalAttempt?: number;
}

function clean(text: string | undefined, secrets: readonly string[], end: AttemptEnd, nonRetryable: boolean) {
  let out = redactSecrets(text ?? '', secrets);
  if (nonRetryable) out = out.replace(RETRY_PROMISE, '; not retried.');
  else if (end.finalAttempt !== undefined)
    out = out.replace(RETRY_PROMISE, `; gave up after ${end.finalAttempt} attempts.`);
  return out;
}

function isErrorLike(value: unknown): value is Error {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Error).message === 'string' &&
    typeof (value as Error).name === 'string'
  );
}

/**
 * A copy of `err` fit to leave the activity: same type name, retryability and retry delay,
 * message and stack with secrets masked, the cause sanitized too, and nothing else.
 */
export function sanitizeError(
  err: unknown,
  secrets: readonly string[],
  end: AttemptEnd = {},
  depth = 0,
): unknown {
  if (err instanceof CancelledFailure || err instanceof CompleteAsyncError) return err;
  if (err instanceof Error && err.name === 'AbortError') return err;
  // Errors from another realm (a VM context, a worker thread) are errors too: look at the shape.
  if (!isErrorLike(err)) return new Error(clean(String(err), secrets, end, false));
  const cause =
    depth < MAX_CAUSE_DEPTH && err.cause !== undefined
      ? sanitizeError(err.cause, secrets, end, depth + 1)
      : undefined;
  if (err instanceof ApplicationFailure) {
    const nonRetryable = err.nonRetryable === true;
    const safe = ApplicationFailure.create({
      type: err.type ?? undefined,
      message: clean(err.message, secrets, end, nonRetryable),
      nonRetryable,
      details: err.details ?? undefined,
      nextRetryDelay: err.nextRetryDelay ?? undefined,
      category: err.category ?? undefined,
      ...(isErrorLike(cause) ? { cause } : {}),
    });
    safe.stack = clean(err.stack, secrets, end, nonRetryable);
    return safe;
  }
  const safe = new Error(
    clean(err.message, secrets, end, false),
    cause instanceof Error ? { cause } : undefined,
  );
  safe.name = err.name;
  safe.stack = clean(err.stack, secrets, end, false);
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && KEPT_CODE.test(code)) Object.assign(safe, { code });
  return safe;
}

/** The interceptor; install it first (outermost), so it sees what every other one let through. */
export class ErrorSanitizer implements ActivityInboundCallsInterceptor {
  constructor(private readonly secrets: readonly string[]) {}

  async execute(
    input: ActivityExecuteInput,
    next: Next<ActivityInboundCallsInterceptor, 'execute'>,
  ): Promise<unknown> {
    try {
      return await next(input);
    } catch (err) {
      const { attempt, retryPolicy } = Context.current().info;
      const max = retryPolicy?.maximumAttempts;
      throw sanitizeError(
        err,
        this.secrets,
        max !== undefined && max > 0 && attempt >= max ? { finalAttempt: attempt } : {},
      );
    }
  }
}
