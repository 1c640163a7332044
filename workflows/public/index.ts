/**
 * The workflow entry of the package (`durable-agent/workflow`): what your own workflow code may
 * import. Deterministic and free of Node built-ins, like all workflow code. The agent's workflows
 * themselves reach your worker through the plugin.
 */
export { runAgent, startAgent } from './run-agent';
export type { AgentStepInput, AgentStepOptions, AgentStepResult, StartedAgent } from './run-agent';
export { notifyInbox } from './notify';
export { ApprovalRequests } from './approvals';
export type { ApprovalOutcome, ApprovalRequest } from './approvals';
export {
  approveToolCallUpdate,
  citationsQuery,
  eventsQuery,
  stateQuery,
  transcriptQuery,
  userMessageSignal,
  AGENT_WORKFLOW_TYPE,
} from '../../shared/agent/messages';
export type {
  AgentInput,
  AgentResult,
  AgentStateView,
  AgentEvent,
  ApprovalDecision,
} from '../../shared/agent';
export type { NotificationInput } from '../../shared/notifications/schema';
export { NotificationPriority } from '../../shared/notifications/schema';
