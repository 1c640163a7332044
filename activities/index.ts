import type { Client } from '@temporalio/client';
import type { ModelChoice } from '../shared/model';
import type { WorkerConfig } from '../workers/config';
import { createEmailActivities } from './email';
import { createModelActivities } from './model';
import type { ModelProvider } from './model/provider';
import { createNotificationActivities } from './notifications';
import { createSearchActivities } from './search';
import { createSqlActivities } from './sql';
import type { ToolActivity } from './types';
import { calculator } from './utility/calculator';
import { createGetTime } from './utility/get-time';
import { wait } from './utility/wait';

/** What activities are built from: the worker's config and swappable clients. */
export interface ActivityDeps {
  config: WorkerConfig;
  providers?: Partial<Record<ModelChoice['provider'], ModelProvider>>;
  now?: () => Date;
  /** Temporal client used to deliver notifications (signals); without it notify_user fails clearly. */
  client?: Client;
}

/**
 * Every activity the worker registers: `callModel` plus one activity per tool, named after the tool.
 */
export function createActivities(
  deps: ActivityDeps,
): Record<string, ToolActivity | ((input: never) => Promise<unknown>)> {
  return {
    ...createModelActivities({ config: deps.config, providers: deps.providers }),
    get_time: createGetTime(deps.now),
    calculator,
    wait,
    ...createNotificationActivities({ client: deps.client, taskQueue: deps.config.taskQueue }),
    ...createEmailActivities({ config: deps.config.email }),
    ...createSearchActivities({ search: deps.config.search }),
    ...createSqlActivities({ config: deps.config.databases }),
  };
}
