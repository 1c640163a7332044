/**
 * The content store's garbage collection as a workflow, fired by its own Temporal Schedule
 * (`durable-agent-content-gc:<task queue>`; workers/content-gc-schedule.ts): one activity that
 * collects the worker's store and answers what it removed.
 */
import { formatZodIssues } from '../shared/zod-issues';
import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { ActivityOptions } from '@temporalio/workflow';
import type { ContentGcActivities } from '../activities/types';
import type { ContentGcInput, ContentGcReport } from '../shared/content-gc';
import { CONTENT_GC_ERRORS } from '../shared/content-gc';
import { ContentGcInputSchema } from '../shared/content-gc-schema';

/** A collection reads the whole store at worst: long, heartbeating, retried a few times. */
const CONTENT_GC_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '2 minutes',
  retry: {
    initialInterval: '10 seconds',
    maximumAttempts: 3,
    nonRetryableErrorTypes: [...CONTENT_GC_ERRORS],
  },
} as const satisfies ActivityOptions;

const { collectContentGarbage } = proxyActivities<ContentGcActivities>(CONTENT_GC_ACTIVITY_OPTIONS);

/** Collects the content store's garbage once (or, with `dryRun`, counts it). */
export async function contentGcWorkflow(input: ContentGcInput = {}): Promise<ContentGcReport> {
  const parsed = ContentGcInputSchema.safeParse(input ?? {});
  if (!parsed.success)
    throw ApplicationFailure.nonRetryable(
      `Invalid content GC input: ${formatZodIssues(parsed.error)}`,
      'InvalidGcInput',
    );
  return collectContentGarbage(parsed.data);
}
