/**
 * The content store's garbage collection schedule: a Temporal Schedule of its own per task queue
 * (`durable-agent-content-gc:<task queue>`), whose firings run `contentGcWorkflow` on that queue,
 * so the workers that own the store collect it. Every worker sets it up when it starts
 * (`DURABLE_AGENT_CONTENT_GC`, default every hour); `durable-agent content schedule` does too.
 */
import type { Client, ScheduleDescription } from '@temporalio/client';
import { ScheduleAlreadyRunning, ScheduleNotFoundError } from '@temporalio/client';
import type { ContentGcInput } from '../shared/content-gc';
import { CONTENT_GC_WORKFLOW_TYPE, contentGcScheduleId } from '../shared/content-gc';
import { formatDuration } from '../shared/schedule-spec';

/** How the schedule fires and what each collection keeps. */
export interface ContentGcScheduleSettings {
  taskQueue: string;
  everyMs: number;
  /** The grace asked for (the namespace's retention when longer or unset). */
  graceMs?: number;
}

/** What setting up the schedule did. */
export type ContentGcScheduleOutcome = 'created' | 'updated' | 'unchanged';

/** A firing that could not start in this long (a server down) is skipped: the next one collects. */
const CATCHUP_WINDOW_MS = 60_000;

function inputOf(s: ContentGcScheduleSettings): ContentGcInput {
  return s.graceMs !== undefined ? { graceMs: s.graceMs } : {};
}

/** Whether a described schedule already fires as `s` asks, with the same input. */
function matches(d: ScheduleDescription, s: ContentGcScheduleSettings): boolean {
  const every = d.spec.intervals?.[0]?.every;
  const action = d.action.type === 'startWorkflow' ? d.action : undefined;
  return (
    every === s.everyMs &&
    d.spec.intervals?.length === 1 &&
    action?.taskQueue === s.taskQueue &&
    JSON.stringify(action?.args?.[0] ?? {}) === JSON.stringify(inputOf(s))
  );
}

/**
 * Creates the task queue's GC schedule, or brings an existing one to these settings. Safe to call
 * from every worker at once: one creates it, the others find it.
 */
export async function ensureContentGcSchedule(
  client: Client,
  s: ContentGcScheduleSettings,
): Promise<ContentGcScheduleOutcome> {
  const scheduleId = contentGcScheduleId(s.taskQueue);
  const action = {
    type: 'startWorkflow' as const,
    workflowType: CONTENT_GC_WORKFLOW_TYPE,
    workflowId: `content-gc:${s.taskQueue}`,
    taskQueue: s.taskQueue,
    args: [inputOf(s)],
  };
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: s.everyMs }] },
      action,
      policies: { overlap: 'SKIP', catchupWindow: CATCHUP_WINDOW_MS },
      memo: { timing: `every ${formatDuration(s.everyMs)}` },
      state: { note: 'Content store garbage collection (durable-agent)' },
    });
    return 'created';
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  const handle = client.schedule.getHandle(scheduleId);
  if (matches(await handle.describe(), s)) return 'unchanged';
  await handle.update((prev) => ({
    ...prev,
    spec: { intervals: [{ every: s.everyMs }] },
    action,
  }));
  return 'updated';
}

/** Deletes the task queue's GC schedule; false when there was none. */
export async function deleteContentGcSchedule(client: Client, taskQueue: string): Promise<boolean> {
  try {
    await client.schedule.getHandle(contentGcScheduleId(taskQueue)).delete();
    return true;
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return false;
    throw err;
  }
}
