/**
 * The agent's Prometheus metrics: their names, the values their labels take, and the buckets of
 * their histograms. Recorded through Temporal's metric meter, so they are served on the same
 * endpoint as the SDK's own worker metrics (workers/observability/runtime.ts). The workflow side
 * (workflows/agent/metrics.ts) records run-level facts replay-safely; the worker side
 * (workers/observability/metrics.ts) records each model and tool call attempt.
 *
 * Labels are low-cardinality by construction: never a run or workflow id, task text or user
 * content. Tool and model names are bounded (built-in tools as they are; other names folded into
 * {@link OTHER_LABEL} past a cap, or in workflow code always).
 */

/** Every metric this project records, by what it counts. Counters end in `_total`. */
export const METRIC = {
  // Workflow side (replay-safe: not recorded again when a run is replayed).
  runsStarted: 'durable_agent_runs_started_total',
  runsFinished: 'durable_agent_runs_finished_total',
  steps: 'durable_agent_steps_total',
  budgetStops: 'durable_agent_budget_stops_total',
  continueAsNew: 'durable_agent_continue_as_new_total',
  approvalsRequested: 'durable_agent_approvals_requested_total',
  approvalsResolved: 'durable_agent_approvals_resolved_total',
  approvalWait: 'durable_agent_approval_wait_seconds',
  inboxNotifications: 'durable_agent_inbox_notifications',
  inboxUnread: 'durable_agent_inbox_unread',
  // Worker side (one per activity attempt, retries included).
  modelCalls: 'durable_agent_model_calls_total',
  modelCallDuration: 'durable_agent_model_call_duration_seconds',
  modelTokens: 'durable_agent_model_tokens_total',
  modelCost: 'durable_agent_model_call_cost_usd',
  toolCalls: 'durable_agent_tool_calls_total',
  toolCallDuration: 'durable_agent_tool_call_duration_seconds',
  toolErrors: 'durable_agent_tool_errors_total',
  contentStoreOperations: 'durable_agent_content_store_operations_total',
  contentStorePutBytes: 'durable_agent_content_store_put_bytes_total',
  // Set by each content store garbage collection the worker runs.
  contentStoreBytes: 'durable_agent_content_store_bytes',
  contentStoreRemovedBytes: 'durable_agent_content_store_removed_bytes_total',
  runsWaitingForApproval: 'durable_agent_runs_waiting_for_approval',
  oldestApprovalWait: 'durable_agent_oldest_approval_wait_seconds',
} as const;

/** The label value names beyond a label's bound fold into. */
export const OTHER_LABEL = 'other';

/** How an approval wait ended: a decision, its timeout, or the run stopping (a budget) while it waited. */
export type ApprovalResolution = 'approved' | 'rejected' | 'timed_out' | 'stopped';

/** How a run ended, as `durable_agent_runs_finished_total` counts it. */
export type FinishedStatus = 'completed' | 'stopped' | 'failed' | 'cancelled';

const DURATION_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const HOUR = 3600;

/**
 * Bucket boundaries of the agent's histograms (the SDK's default buckets suit milliseconds, not
 * seconds, dollars or item counts). Given to the Prometheus exporter when the runtime is installed.
 */
export const METRIC_BUCKETS: Readonly<Record<string, number[]>> = Object.freeze({
  [METRIC.modelCallDuration]: DURATION_SECONDS,
  [METRIC.toolCallDuration]: DURATION_SECONDS,
  [METRIC.approvalWait]: [1, 10, 30, 60, 300, 900, 1800, HOUR, 4 * HOUR, 24 * HOUR, 7 * 24 * HOUR],
  [METRIC.modelCost]: [0.0001, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
  [METRIC.inboxNotifications]: [0, 1, 5, 10, 25, 50, 75, 100, 250, 1000],
  [METRIC.inboxUnread]: [0, 1, 5, 10, 25, 50, 75, 100, 250, 1000],
});
