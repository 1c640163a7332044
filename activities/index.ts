import type { Logger } from '@temporalio/common';
import type { ModelChoice } from '../shared/model';
import type { NotificationDelivery } from '../shared/notifications/delivery';
import type { ActivitiesConfig } from './config';
import { claimedByCurrentRun } from './content/claiming';
import { UNKNOWN_SERVICE } from '../shared/content-gc';
import type { ContentStore } from './content/store';
import { boundToolResult } from './content/tool-results';
import { createEmailActivities } from './email';
import { createMcpActivities } from './mcp';
import { createModelActivities } from './model';
import { streamChannelFor } from './streaming';
import type { ModelProvider } from './model/provider';
import { createNotificationActivities } from './notifications';
import { createSearchActivities } from './search';
import { createRunDefaultsActivities } from './run/defaults';
import { createSqlActivities } from './sql';
import type { ToolActivity } from './types';
import { calculator } from './utility/calculator';
import { createGetTime } from './utility/get-time';
import { wait } from './utility/wait';
import { TOOL_NAMES } from '../shared/tools/registry';
import type { Tool } from './own-tools/define';
import { createOwnToolActivities } from './own-tools/activities';

/** What activities are built from: the worker's config and swappable clients. */
export interface ActivityDeps {
  config: ActivitiesConfig;
  /** Where large tool results and conversations are kept by reference. */
  store: ContentStore;
  providers?: Partial<Record<ModelChoice['provider'], ModelProvider>>;
  now?: () => Date;
  /** How notifications reach workflows (client/deliver.ts); without it notify_user fails clearly. */
  deliver?: NotificationDelivery;
  /** The worker's logger, for what happens outside any one activity (MCP connections). */
  logger?: Logger;
  /** The Temporal service the worker serves (its cluster id), named in the claims of stored content; may be asked for lazily. */
  temporalService?: string | (() => Promise<string>);
  /** Tools of the worker's own (`defineTool`), checked as a set (see checkToolSet). */
  tools?: readonly Tool[];
  /** Whether the worker's namespace has the agent search attributes (asked of the server once). */
  agentSearchAttributes?: () => Promise<boolean>;
}

/** A tool activity whose results keep within their budgets (large ones go to the content store). */
export function withBoundedResults(tool: ToolActivity, store: ContentStore): ToolActivity {
  return async (input) => boundToolResult(await tool(input), store);
}

/**
 * Every activity the worker registers: `callModel` plus one activity per tool, named after the tool.
 */
export function createActivities(
  input: ActivityDeps,
): Record<string, ToolActivity | ((input: never) => Promise<unknown>)> {
  const deps = {
    ...input,
    store: claimedByCurrentRun(input.store, input.temporalService ?? UNKNOWN_SERVICE),
  };
  const all: Record<string, ToolActivity | ((input: never) => Promise<unknown>)> = {
    ...createModelActivities({
      config: deps.config,
      store: deps.store,
      providers: deps.providers,
      stream: deps.config.stream ? streamChannelFor(deps.config.stream) : null,
    }),
    get_time: createGetTime(deps.now),
    calculator,
    wait,
    ...createNotificationActivities({ deliver: deps.deliver }),
    ...createEmailActivities({ config: deps.config.email }),
    ...createSearchActivities({ search: deps.config.search }),
    ...createSqlActivities({ config: deps.config.databases }),
    ...createRunDefaultsActivities(deps.config.runDefaults, {
      localModelPath: deps.config.models.local.modelPath,
      ...(deps.agentSearchAttributes ? { agentSearchAttributes: deps.agentSearchAttributes } : {}),
    }),
    ...createMcpActivities({ config: deps.config.mcp, store: deps.store, logger: deps.logger }),
    // Always: a run naming a tool this worker lacks is told which tools it has.
    ...createOwnToolActivities({ tools: deps.tools ?? [], store: deps.store }),
  };
  for (const name of [...TOOL_NAMES, ...(deps.tools ?? []).map((t) => t.spec.name), 'default']) {
    const tool = all[name] as ToolActivity | undefined;
    if (tool) all[name] = withBoundedResults(tool, deps.store);
  }
  return all;
}
