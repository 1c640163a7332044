import { z } from 'zod';
import { schemaOnce } from '../schema-once';
import { defineTool } from './define';

/** Arguments of `get_time`. */
export const GetTimeArgs = schemaOnce('shared/tools/get-time#GetTimeArgs', () =>
  z.object({
    timezone: z
      .string()
      .min(1)
      .default('UTC')
      .describe('IANA time zone such as "Europe/Paris" / IANA 时区名，例如 "Asia/Shanghai"'),
  }),
);

/** `get_time`: the current date and time in a time zone. */
export const getTimeTool = defineTool({
  name: 'get_time',
  description: 'Returns the current date and time in the given IANA time zone.',
  description_zh: '返回指定 IANA 时区的当前日期和时间。',
  category: 'utility',
  sign: 't',
  inputs: GetTimeArgs,
  output: 'ISO timestamp and a human-readable local time',
  local: true,
  activity: { startToCloseTimeout: '10 seconds', maximumAttempts: 3 },
});
