import { ActivityFailure, ApplicationFailure, isCancellation } from '@temporalio/workflow';

/**
 * What a failed model call does to the run: a cancellation goes on as itself; any other failure
 * (the retry policy gave up) fails the run, non-retryable, naming the step and the cause. A regular
 * activity's failure wraps the activity's error; a local one's may arrive as itself.
 */
export function modelCallFailure(err: unknown, step: number): Error {
  if (isCancellation(err)) return err as Error;
  const cause =
    err instanceof ActivityFailure
      ? err.cause instanceof ApplicationFailure
        ? err.cause
        : undefined
      : err instanceof ApplicationFailure
        ? err
        : undefined;
  return ApplicationFailure.create({
    type: cause?.type ?? 'ModelCallFailed',
    message: `Model call failed at step ${step}: ${cause?.message ?? (err as Error).message}`,
    nonRetryable: true,
    cause: err as Error,
  });
}
