/**
 * `durable-agent`: durable AI agents on Temporal, for your worker process. Define tools of your own
 * with {@link defineTool}, add the agent to your worker and client with {@link DurableAgentPlugin},
 * and start and follow runs with {@link AgentClient} (also in `durable-agent/client`). Your workflow
 * code imports `durable-agent/workflow`; the tool families' activities are in
 * `durable-agent/activities`. Everything else in the package is private.
 */
export { defineTool, ToolDefinitionError } from '../activities/own-tools/define';
export type {
  Tool,
  ToolContentStore,
  ToolInputSchema,
  ToolLogger,
  ToolOptions,
  ToolOutput,
  ToolRunContext,
} from '../activities/own-tools/define';
export { DurableAgentPlugin } from '../workers/plugin';
export type { DurableAgentPluginOptions } from '../workers/plugin';
export { loadWorkerConfig, ConfigError } from '../workers/config';
export type { WorkerConfig } from '../workers/config';
export { AgentClient, AgentClientError, AgentRun } from '../client/agent-client';
export type {
  AgentClientErrorCode,
  AgentClientOptions,
  EventOptions,
  StartOptions,
} from '../client/agent-client';
export type {
  AgentEvent,
  AgentInput,
  AgentResult,
  AgentStateView,
  AgentStatus,
  ApprovalDecision,
  Policy,
  StopReason,
} from '../shared/agent';
export type { ModelChoice } from '../shared/model';
export type { Notification, NotificationInput, NotificationType } from '../shared/notifications/schema';
export { NotificationPriority } from '../shared/notifications/schema';
export type { ToolCategory } from '../shared/tools/define';
