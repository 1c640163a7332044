/**
 * Activities of a run that are being retried, read from the server's description of the workflow
 * (its pending activities): which, the attempt, the last error, when the next attempt is due. The
 * workflow does not know while the server retries an activity; only its description tells.
 */
import type { WorkflowExecutionDescription } from '@temporalio/client';

/** One activity the server is retrying. */
export interface RetryingActivity {
  activityId: string;
  /** The activity type: `callModel`, a tool's name, `mcp:<server>/<tool>`. */
  activity: string;
  /** The attempt running or due next (2 = the first retry). */
  attempt: number;
  /** Why the previous attempt failed. */
  lastError: string;
  /** When the next attempt starts, when it waits for one. */
  nextAttemptAt?: Date;
}

/** The run's activities past their first attempt, from a workflow description. */
export function retryingActivities(desc: WorkflowExecutionDescription): RetryingActivity[] {
  return (desc.raw.pendingActivities ?? []).flatMap((a) => {
    const attempt = a.attempt ?? 1;
    if (attempt <= 1 && !a.lastFailure) return [];
    const next = a.nextAttemptScheduleTime?.seconds;
    return [
      {
        activityId: a.activityId ?? '',
        activity: a.activityType?.name ?? 'activity',
        attempt,
        lastError: a.lastFailure?.message ?? '(no message)',
        ...(next !== undefined && next !== null ? { nextAttemptAt: new Date(Number(next) * 1000) } : {}),
      },
    ];
  });
}
