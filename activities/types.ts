import type { CallModelInput, CallModelOutput } from '../shared/model';
import type { ToolActivityInput, ToolResult } from '../shared/tools/define';
import type { DeliverNotificationInput } from '../shared/notifications/delivery';
import type { McpCatalog, McpDiscoverInput, McpPromptsInput, McpPromptsOutput } from '../shared/tools/mcp';
import type { ContentGcInput, ContentGcReport } from '../shared/content-gc';
import type { DescribeOwnToolsInput, OwnToolCatalog } from '../shared/tools/own';
export type { RunDefaults, RunDefaultsActivities } from './run/defaults';

/** The model activity, as workflows see it. */
export interface ModelActivities {
  callModel(input: CallModelInput): Promise<CallModelOutput>;
}

/** Shape of every tool activity; registered under the tool's name. */
export type ToolActivity = (input: ToolActivityInput<unknown>) => Promise<ToolResult>;

/** Notification delivery the workflow itself uses (inboxes). */
export interface NotificationActivities {
  deliverNotification(input: DeliverNotificationInput): Promise<void>;
}

/**
 * MCP tool discovery, and the prompts a run starts from (calls run as activities named
 * `mcp:<server>/<tool>`, typed {@link ToolActivity}).
 */
export interface McpActivities {
  mcpDiscover(input: McpDiscoverInput): Promise<McpCatalog>;
  mcpPrompts(input: McpPromptsInput): Promise<McpPromptsOutput>;
}

/** Content store garbage collection (activities/content/gc-activity.ts). */
export interface ContentGcActivities {
  collectContentGarbage(input: ContentGcInput): Promise<ContentGcReport>;
}

/** The catalog of a worker's own tools a run names (calls run as activities named after each tool, typed {@link ToolActivity}). */
export interface OwnToolActivities {
  describeOwnTools(input: DescribeOwnToolsInput): Promise<OwnToolCatalog>;
}
