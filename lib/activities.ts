/**
 * `durable-agent/activities`: the tool families' activities, for workers of your own that do not
 * use the plugin (the plugin registers them all). Each is registered under its tool's name and
 * takes `{ toolCallId, args }`: the tool call id is the idempotency key (a retried `send_email` does
 * not send twice). Call them from your workflows with `proxyActivities<BuiltInToolActivities>`.
 * Configuration is the worker's (`loadWorkerConfig()` reads it from the environment and the file
 * named by DURABLE_AGENT_CONFIG); secrets stay here and never enter history.
 */
export { createEmailActivities, closeEmailConnections } from '../activities/email';
export type { EmailActivityDeps } from '../activities/email';
export { createSqlActivities, closeSqlConnections } from '../activities/sql';
export type { SqlActivityDeps } from '../activities/sql';
export { createSearchActivities } from '../activities/search';
export type { SearchActivities, SearchActivityDeps } from '../activities/search';
export { createNotificationActivities } from '../activities/notifications';
export { notificationDelivery, deliveryOverActivityClient } from '../activities/notifications/deliver';
export type { NotificationDelivery } from '../shared/notifications/delivery';
export type { BuiltInToolActivities } from '../shared/tools/activities';
export type { ToolActivityInput, ToolResult } from '../shared/tools/define';
export { loadWorkerConfig } from '../workers/config';
export type { WorkerConfig } from '../workers/config';
