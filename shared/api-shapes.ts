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
    | 'user_message'
    | 'continued_as_new'
    | 'mcp_tools'
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
