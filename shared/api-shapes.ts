/**
 * Shapes of API answers that the server and the web pages share. No imports: the browser code
 * (web/, with its own tsconfig and no Node types) reads these too.
 */

/** A tool call waiting for a person's decision, as the `state` query lists it. */
export interface PendingApproval {
  toolCallId: string;
  tool: string;
  /** The validated arguments the call would run with. */
  args: unknown;
  /** The arguments in words. */
  summary: string;
  /** Why the policy asks. */
  reason: string;
  step: number;
  /** When the call is refused if nobody decides (ISO 8601). */
  deadline: string;
  /** When the call began to wait (ISO 8601; carried over continue-as-new). */
  requestedAt?: string;
}

/** What waits for input: a question to the user (`ask_user`), or a call of a client-side tool. */
export type QuestionKind = 'question' | 'client_tool';

/**
 * A call waiting for input, as the `state` query lists it: a question (answer it with a JSON value
 * matching `schema`, free text without one) or a client-side tool's call (submit its result).
 */
export interface PendingQuestion {
  toolCallId: string;
  kind: QuestionKind;
  /** `ask_user`, or the client tool's name. */
  tool: string;
  /** The question; for a client tool, its description. */
  question: string;
  /** A client tool call's validated arguments. */
  args?: unknown;
  /** JSON Schema the answer (or result) must match; absent: any text (a question) or any JSON. */
  schema?: Record<string, unknown>;
  /** Whether a default answer is taken when nobody answers in time, and which. */
  hasDefault: boolean;
  default?: unknown;
  step: number;
  /** When the call stops waiting (ISO 8601). */
  deadline: string;
  /** When it began to wait (ISO 8601; carried over continue-as-new). */
  requestedAt: string;
}

/** One run as the runs list (`GET /api/runs`) shows it. */
export interface RunSummary {
  workflowId: string;
  /** Temporal's execution status: RUNNING, COMPLETED, FAILED, … */
  execution: string;
  /** The agent's own status, when the namespace has the agent search attributes. */
  status: string | null;
  started: string;
  closed: string | null;
  step: number | null;
  lastTool: string | null;
  model: string | null;
  /** The task's first 200 characters (the run's memo). */
  task: string | null;
}

/** Something that happened in a run, for live progress in CLIs and UIs. */
export interface AgentEvent {
  seq: number;
  at: string;
  step: number;
  kind:
    | 'model_started'
    | 'model_finished'
    | 'tool_started'
    | 'tool_finished'
    | 'tool_rejected'
    | 'approval_requested'
    | 'approval_decided'
    | 'question_asked'
    | 'question_answered'
    | 'user_message'
    | 'continued_as_new'
    | 'mcp_tools'
    | 'agent_started'
    | 'agent_finished'
    | 'budget_warning'
    | 'final_answer'
    | 'stopped'
    | 'error';
  toolCallId?: string;
  tool?: string;
  args?: unknown;
  text?: string;
  isError?: boolean;
  durationMs?: number;
}

/** An activity of a run the server is retrying, as the API answers it (`GET /api/runs/:id`). */
export interface RetryingActivityView {
  /** The activity type: `callModel`, a tool's name, `mcp:<server>/<tool>`. */
  activity: string;
  /** The attempt running or due next (2 = the first retry). */
  attempt: number;
  /** Why the previous attempt failed. */
  lastError: string;
  /** When the next attempt starts (ISO 8601), when it waits for one. */
  nextAttemptAt?: string;
}

/** A run a schedule started, as schedule views list it. */
export interface ScheduledRunView {
  workflowId: string;
  /** The time the firing was due (ISO 8601); a trigger's is when it was asked for. */
  scheduledAt: string;
  /** When the run was started (ISO 8601). */
  startedAt: string;
}

/** A schedule of agent runs as lists show it (`GET /api/schedules`, `schedule list --json`). */
export interface ScheduleSummary {
  scheduleId: string;
  paused: boolean;
  /** Why it is paused (or the last note set on it), if any. */
  note: string | null;
  /** When it fires, in words: `cron "0 9 * * *" (Europe/Paris)`, `every 1h`. */
  timing: string;
  /** The task's first 200 characters. */
  task: string | null;
  /** Its next firings (ISO 8601), soonest first; none while paused. */
  nextRuns: string[];
  /** The runs it started last, oldest first. */
  recentRuns: ScheduledRunView[];
}

/** One schedule in full (`GET /api/schedules/:id`, `schedule describe --json`). */
export interface ScheduleDetails extends ScheduleSummary {
  /** `skip`, `buffer-one`, `buffer-all`, `cancel-other`, `terminate-other` or `allow-all`. */
  overlap: string;
  /** How late a missed firing may still start, e.g. `5m`. */
  catchupWindow: string;
  taskQueue: string | null;
  /** `scripted`, `openai:<model>`, …: as the runs list shows a run's model. */
  model: string | null;
  /** Runs it started that are still going. */
  runningRuns: string[];
  /** Firings that started a run, firings skipped because a run was still going, firings missed. */
  counts: { started: number; skippedOverlap: number; missedCatchupWindow: number };
  created: string;
}
