import type { EmailConfig } from './email/config';
import type { McpConfig } from './mcp/config';
import type { ModelsConfig } from './model/config';
import type { RunDefaults } from './run/defaults';
import type { SearchConfig } from './search/config';
import type { DatabasesConfig } from './sql/config';

/**
 * What the activities read of the worker's configuration. The worker's own configuration
 * (`WorkerConfig` in workers/) holds this and its process settings; activities never reach up to it.
 */
import type { StreamConfig } from './streaming';

export interface ActivitiesConfig {
  /** The worker's task queue (notifications name it when they start an inbox). */
  taskQueue: string;
  /** Folder of scripted-model files (`<name>.json`). */
  scriptsDir: string;
  models: ModelsConfig;
  email: EmailConfig;
  databases: DatabasesConfig;
  search: SearchConfig;
  /** MCP servers whose tools runs may enable (`mcp:<server>`). */
  mcp: McpConfig;
  /** Approval policies and model prices for every run, unless a run says otherwise (config file `runs`). */
  runDefaults: RunDefaults;
  /** Where model calls publish live tokens (DURABLE_AGENT_STREAM); none when absent. */
  stream?: StreamConfig;
}
