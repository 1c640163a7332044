/**
 * `durable-agent/client`: start, follow, message, approve, cancel, replay and evaluate agent runs,
 * and read and write inboxes, from any program. Returns data and throws {@link AgentClientError}.
 */
export { AgentClient, AgentClientError, AgentRun } from '../client/agent-client';
export type {
  AgentClientErrorCode,
  AgentClientOptions,
  EventOptions,
  StartOptions,
} from '../client/agent-client';
export type { RunApproval } from '../client/approval-client';
export type { RunQuestion } from '../client/questions';
export type { PendingQuestion, QuestionAnswered } from '../shared/agent/questions';
export type { ReplayOutcome, Divergence } from '../client/debug/replay';
export type { RunVerdict, StepVerdict } from '../client/eval/eval';
export type {
  AgentEvent,
  AgentInput,
  AgentResult,
  AgentStateView,
  AgentStatus,
  ApprovalDecision,
  StopReason,
  TranscriptPage,
} from '../shared/agent';
export type { ClearResult, MarkReadResult, NotifyResult } from '../shared/notifications/messages';
export type { NotificationPage } from '../shared/notifications/reads';
export type { MarkReadInput, Notification, NotificationInput } from '../shared/notifications/schema';
export { NotificationPriority } from '../shared/notifications/schema';
