import type { z } from 'zod';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';
import type { GetTimeArgs } from '../../shared/tools/get-time';

/** Creates the `get_time` activity; `now` is injected so tests can pin the clock. */
export function createGetTime(now: () => Date = () => new Date()) {
  return async function get_time({
    args,
  }: ToolActivityInput<z.output<typeof GetTimeArgs>>): Promise<ToolResult> {
    const date = now();
    let local: string;
    try {
      local = new Intl.DateTimeFormat('en-GB', {
        timeZone: args.timezone,
        dateStyle: 'full',
        timeStyle: 'long',
      }).format(date);
    } catch {
      return {
        content: `Unknown time zone "${args.timezone}". Use an IANA name such as "Europe/Paris" or "UTC".`,
        isError: true,
      };
    }
    return {
      content: `${local} (${args.timezone}); UTC ${date.toISOString()}`,
      data: { iso: date.toISOString(), timezone: args.timezone, local },
    };
  };
}
