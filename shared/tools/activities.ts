/**
 * The built-in tools' activities as workflow code calls them: one per tool, named after it, typed
 * by the tool's own argument schema. Types only.
 */
import type { z } from 'zod';
import type { CalculatorArgs } from './calculator';
import type { ToolActivityInput, ToolResult } from './define';
import type { FetchEmailArgs, SendEmailArgs } from './email';
import type { GetTimeArgs } from './get-time';
import type { NotifyUserArgs } from './notify-user';
import type { KnowledgeBaseSearchArgs, WebSearchArgs } from './search';
import type { SqlQueryArgs, SqlSchemaArgs } from './sql';
import type { WaitArgs } from './wait';

type Call<S extends z.ZodType> = (input: ToolActivityInput<z.input<S>>) => Promise<ToolResult>;

/**
 * `proxyActivities<BuiltInToolActivities>({ startToCloseTimeout: '1 minute' })` in your workflow
 * gives these; `toolCallId` is the idempotency key of each call.
 */
export interface BuiltInToolActivities {
  get_time: Call<typeof GetTimeArgs>;
  calculator: Call<typeof CalculatorArgs>;
  wait: Call<typeof WaitArgs>;
  notify_user: Call<typeof NotifyUserArgs>;
  fetch_email: Call<typeof FetchEmailArgs>;
  send_email: Call<typeof SendEmailArgs>;
  knowledge_base_search: Call<typeof KnowledgeBaseSearchArgs>;
  web_search: Call<typeof WebSearchArgs>;
  sql_schema: Call<typeof SqlSchemaArgs>;
  sql_query: Call<typeof SqlQueryArgs>;
}
