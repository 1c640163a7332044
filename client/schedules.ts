/**
 * Recurring agent runs on Temporal Schedules: create, list, describe, pause, unpause, trigger and
 * delete. A schedule's action starts `agentWorkflow` with the options every run gets
 * (`agentStartOptions`: the validated input, task queue, memo, search attributes), so each firing is
 * an ordinary run, `<schedule-id>-<time>`, listed, watched and answered like any other. The CLI and
 * the HTTP API share this file, so both refuse the same mistakes in the same words.
 */
import type {
  Client,
  ScheduleDescription,
  ScheduleSummary as TemporalScheduleSummary,
} from '@temporalio/client';
import { ScheduleAlreadyRunning, ScheduleNotFoundError, isGrpcServiceError } from '@temporalio/client';
import type { AgentInput } from '../shared/agent';
import { checkAgentInput } from '../shared/agent/check-input';
import { AGENT_WORKFLOW_TYPE } from '../shared/agent/messages';
import type { ScheduleDetails, ScheduleSummary, ScheduledRunView } from '../shared/api-shapes';
import { printable, scheduleIdProblem } from '../shared/identifiers';
import type { OverlapPolicyName, ScheduleSettings } from '../shared/schedule-spec';
import {
  OVERLAP_POLICIES,
  checkScheduleSettings,
  formatDuration,
  overlapPolicyName,
  scheduleInputSecretProblem,
} from '../shared/schedule-spec';
import { agentStartOptions } from './start-run';
import { modelAttribute } from '../shared/search-attributes';

/** Most schedules one list answer holds. */
export const MAX_SCHEDULES_PER_LIST = 200;
/** How long `trigger` waits to see what the firing did before it answers `pending`. */
const TRIGGER_WAIT_MS = 5_000;

/**
 * Why a schedule request was refused: `invalid` (id, timing, policy or run input; the message says
 * what to fix), `not_found`, or `already_exists`.
 */
export class ScheduleRequestError extends Error {
  override readonly name = 'ScheduleRequestError';
  constructor(
    readonly code: 'invalid' | 'not_found' | 'already_exists',
    message: string,
  ) {
    super(message);
  }
}

/** The answer every door gives for a schedule id the namespace does not hold. */
function notFound(scheduleId: string): ScheduleRequestError {
  return new ScheduleRequestError(
    'not_found',
    `No schedule with id "${printable(scheduleId)}" in this namespace`,
  );
}

/** Runs `fn`, reporting an unknown schedule as {@link ScheduleRequestError} `not_found`. */
async function known<T>(scheduleId: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) throw notFound(scheduleId);
    throw err;
  }
}

function invalidId(scheduleId: string): void {
  const problem = scheduleIdProblem(scheduleId);
  if (problem) throw new ScheduleRequestError('invalid', `Invalid schedule id: ${problem}`);
}

/** The run input, validated as `run` validates it, or the error that says what to fix. */
export function checkScheduleInput(input: unknown): AgentInput {
  const checked = checkAgentInput(input);
  if (!checked.ok) throw new ScheduleRequestError('invalid', checked.message);
  const secret = scheduleInputSecretProblem(input);
  if (secret) throw new ScheduleRequestError('invalid', `Invalid run: ${secret}`);
  return checked.input;
}

/** What {@link createAgentSchedule} takes. */
export interface CreateScheduleRequest {
  scheduleId: string;
  /** The whole agent input each run gets (checked here, like `run --input`). */
  input: unknown;
  taskQueue: string;
  settings: ScheduleSettings;
  /** Create it paused (with `settings.note` as the reason). */
  paused?: boolean;
}

/** Creates a schedule whose every firing starts an agent run with `input`. */
export async function createAgentSchedule(
  client: Client,
  req: CreateScheduleRequest,
): Promise<ScheduleDetails> {
  invalidId(req.scheduleId);
  const checked = checkScheduleSettings(req.settings);
  if (!checked.ok)
    throw new ScheduleRequestError('invalid', `Invalid schedule: ${checked.problems.join('; ')}`);
  const input = checkScheduleInput(req.input);
  const s = checked.settings;
  const start = await agentStartOptions(client, input, {
    workflowId: req.scheduleId,
    taskQueue: req.taskQueue,
    memo: { schedule: req.scheduleId },
  });
  try {
    await client.schedule.create({
      scheduleId: req.scheduleId,
      spec: {
        ...(s.cron !== undefined ? { cronExpressions: [s.cron] } : {}),
        ...(s.everyMs !== undefined ? { intervals: [{ every: s.everyMs }] } : {}),
        ...(s.timezone !== undefined ? { timezone: s.timezone } : {}),
      },
      action: { type: 'startWorkflow', workflowType: AGENT_WORKFLOW_TYPE, ...start },
      policies: { overlap: OVERLAP_POLICIES[s.overlap], catchupWindow: s.catchupWindowMs },
      // The server keeps a cron expression as calendar fields: the memo keeps it as written.
      memo: { task: start.memo.task, timing: s.timing },
      state: {
        paused: req.paused ?? false,
        ...(s.note !== undefined ? { note: s.note } : {}),
      },
    });
  } catch (err) {
    if (err instanceof ScheduleAlreadyRunning) {
      throw new ScheduleRequestError(
        'already_exists',
        `A schedule with id "${req.scheduleId}" already exists: choose another id, or delete it first ` +
          `(durable-agent schedule delete ${req.scheduleId})`,
      );
    }
    // The SDK turns the server's "Invalid schedule spec" into a TypeError with the server's words.
    if (err instanceof TypeError)
      throw new ScheduleRequestError('invalid', `Invalid schedule: ${s.timing}: ${err.message}`);
    const cause = (err as { cause?: unknown }).cause;
    if (isGrpcServiceError(cause) && Number(cause.code) === INVALID_ARGUMENT)
      throw new ScheduleRequestError('invalid', `Invalid schedule: ${cause.details}`);
    throw err;
  }
  return describeAgentSchedule(client, req.scheduleId);
}

/** gRPC INVALID_ARGUMENT: the server refused a field of the request. */
const INVALID_ARGUMENT = 3;

/** Schedules described at once while a list is read. */
const DESCRIBE_CONCURRENCY = 8;

/**
 * The agent schedules of the namespace (those whose action starts `agentWorkflow`), at most `limit`.
 * The server's list comes from its visibility store, which lags behind a pause or an unpause (a
 * page refreshed right after "Unpause" read "paused" again): each schedule it names is described,
 * which answers from the schedule itself, and one deleted meanwhile is left out.
 */
export async function listAgentSchedules(
  client: Client,
  limit = MAX_SCHEDULES_PER_LIST,
): Promise<ScheduleSummary[]> {
  const listed: TemporalScheduleSummary[] = [];
  for await (const s of client.schedule.list({ pageSize: Math.min(limit, MAX_SCHEDULES_PER_LIST) })) {
    if (s.action?.workflowType !== AGENT_WORKFLOW_TYPE) continue;
    listed.push(s);
    if (listed.length >= limit) break;
  }
  const found: ScheduleSummary[] = [];
  for (let i = 0; i < listed.length; i += DESCRIBE_CONCURRENCY) {
    const batch = listed.slice(i, i + DESCRIBE_CONCURRENCY);
    const described = await Promise.all(
      batch.map((s) =>
        client.schedule
          .getHandle(s.scheduleId)
          .describe()
          .then(summaryOf, (err: unknown) => {
            if (err instanceof ScheduleNotFoundError) return undefined;
            throw err;
          }),
      ),
    );
    for (const d of described) if (d) found.push(d);
  }
  return found.sort((a, b) => a.scheduleId.localeCompare(b.scheduleId));
}

/** One schedule in full. */
export async function describeAgentSchedule(client: Client, scheduleId: string): Promise<ScheduleDetails> {
  invalidId(scheduleId);
  const d = await known(scheduleId, () => client.schedule.getHandle(scheduleId).describe());
  return detailsOf(d);
}

/** Pauses (or unpauses) a schedule, with a note saying why; answers the schedule as it is now. */
async function setPaused(
  client: Client,
  scheduleId: string,
  paused: boolean,
  note: string,
): Promise<ScheduleDetails> {
  invalidId(scheduleId);
  const handle = client.schedule.getHandle(scheduleId);
  await known(scheduleId, () => (paused ? handle.pause(note) : handle.unpause(note)));
  return describeAgentSchedule(client, scheduleId);
}

/** Pauses a schedule: it fires no more until unpaused (a trigger still starts a run). */
export function pauseAgentSchedule(
  client: Client,
  scheduleId: string,
  note?: string,
): Promise<ScheduleDetails> {
  return setPaused(client, scheduleId, true, note ?? 'Paused with durable-agent schedule pause');
}

/** Unpauses a schedule: it fires again at its next time (missed firings are not made up). */
export function unpauseAgentSchedule(
  client: Client,
  scheduleId: string,
  note?: string,
): Promise<ScheduleDetails> {
  return setPaused(client, scheduleId, false, note ?? 'Unpaused with durable-agent schedule unpause');
}

/** Deletes a schedule; the runs it started go on. */
export async function deleteAgentSchedule(client: Client, scheduleId: string): Promise<void> {
  invalidId(scheduleId);
  await known(scheduleId, () => client.schedule.getHandle(scheduleId).delete());
}

/**
 * What a trigger did: `started` a run; `skipped` it because a run of the schedule is still going
 * (overlap `skip`); or `pending` when the server had not decided within a few seconds (a buffering
 * policy waits for the running run).
 */
export type TriggerOutcome =
  | { outcome: 'started'; workflowId: string }
  | { outcome: 'skipped'; running: string[] }
  | { outcome: 'pending' };

/**
 * Fires a schedule now, paused or not, under its own overlap policy unless `overlap` says
 * otherwise (`allow-all` starts a run even while one is going), and waits to see what it did.
 */
export async function triggerAgentSchedule(
  client: Client,
  scheduleId: string,
  overlap?: OverlapPolicyName,
): Promise<TriggerOutcome> {
  invalidId(scheduleId);
  const handle = client.schedule.getHandle(scheduleId);
  const before = await known(scheduleId, () => handle.describe());
  const seen = new Set(before.info.recentActions.map((a) => a.action.workflow.workflowId));
  await known(scheduleId, () =>
    handle.trigger(overlap ? OVERLAP_POLICIES[overlap] : (before.policies.overlap ?? 'SKIP')),
  );
  const deadline = Date.now() + TRIGGER_WAIT_MS;
  while (Date.now() < deadline) {
    const now = await known(scheduleId, () => handle.describe());
    const fresh = now.info.recentActions.find((a) => !seen.has(a.action.workflow.workflowId));
    if (fresh) return { outcome: 'started', workflowId: fresh.action.workflow.workflowId };
    if (now.info.numActionsSkippedOverlap > before.info.numActionsSkippedOverlap)
      return { outcome: 'skipped', running: now.info.runningActions.map((a) => a.workflow.workflowId) };
    await new Promise((r) => setTimeout(r, 100));
  }
  return { outcome: 'pending' };
}

function runsOf(actions: ScheduleDescription['info']['recentActions']): ScheduledRunView[] {
  return actions.map((a) => ({
    workflowId: a.action.workflow.workflowId,
    scheduledAt: a.scheduledAt.toISOString(),
    startedAt: a.takenAt.toISOString(),
  }));
}

/** When a schedule fires, from its memo (as written) or, for one made elsewhere, from its spec. */
function timingOf(
  memo: Record<string, unknown> | undefined,
  spec: ScheduleDescription['spec'] | undefined,
): string {
  if (typeof memo?.timing === 'string') return memo.timing;
  const every = spec?.intervals?.[0]?.every;
  if (every !== undefined) return `every ${formatDuration(every)}`;
  return spec?.calendars?.length ? `calendar${spec.timezone ? ` (${spec.timezone})` : ''}` : 'never';
}

function summaryOf(s: TemporalScheduleSummary | ScheduleDescription): ScheduleSummary {
  const task = s.memo?.task;
  return {
    scheduleId: s.scheduleId,
    paused: s.state.paused,
    note: s.state.note || null,
    timing: timingOf(s.memo, s.spec),
    task: typeof task === 'string' ? task : null,
    nextRuns: s.state.paused ? [] : s.info.nextActionTimes.map((t) => t.toISOString()),
    recentRuns: runsOf(s.info.recentActions),
  };
}

function detailsOf(d: ScheduleDescription): ScheduleDetails {
  const action = d.action.type === 'startWorkflow' ? d.action : undefined;
  const input = action?.args?.[0] as Partial<AgentInput> | undefined;
  return {
    ...summaryOf(d),
    overlap: overlapPolicyName(d.policies.overlap ?? 'SKIP') ?? String(d.policies.overlap),
    catchupWindow: formatDuration(d.policies.catchupWindow),
    taskQueue: action?.taskQueue ?? null,
    // A schedule made elsewhere may start something else: only an agent input names a model.
    model: typeof input?.model?.provider === 'string' ? modelAttribute(input.model) : null,
    runningRuns: d.info.runningActions.map((a) => a.workflow.workflowId),
    counts: {
      started: d.info.numActionsTaken,
      skippedOverlap: d.info.numActionsSkippedOverlap,
      missedCatchupWindow: d.info.numActionsMissedCatchupWindow,
    },
    created: d.info.createdAt.toISOString(),
  };
}
