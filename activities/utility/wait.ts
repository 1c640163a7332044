import { Context } from '@temporalio/activity';
import type { z } from 'zod';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';
import type { WaitArgs } from '../../shared/tools/wait';

/** Heartbeat interval; the tool declares a 5 s heartbeat timeout. */
const BEAT_MS = 1000;

/**
 * The `wait` activity. Heartbeats the seconds already waited, so a retry on another worker resumes
 * where the last attempt stopped instead of starting over; throws on cancellation.
 */
export async function wait({ args }: ToolActivityInput<z.output<typeof WaitArgs>>): Promise<ToolResult> {
  const ctx = Context.current();
  const resumed = typeof ctx.info.heartbeatDetails === 'number' ? ctx.info.heartbeatDetails : 0;
  let waitedMs = Math.min(resumed, args.seconds * 1000);
  const totalMs = args.seconds * 1000;
  while (waitedMs < totalMs) {
    const slice = Math.min(BEAT_MS, totalMs - waitedMs);
    await ctx.sleep(slice);
    waitedMs += slice;
    ctx.heartbeat(waitedMs);
  }
  return { content: `Waited ${args.seconds} s.`, data: { seconds: args.seconds, resumedFromMs: resumed } };
}
