import { Context } from '@temporalio/activity';
import type { z } from 'zod';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';
import type { WaitArgs } from '../../shared/tools/wait';
import { heartbeatEvery } from '../heartbeats';

/** Heartbeat interval unless the call's heartbeat timeout is shorter than 3 s (the tool declares 5 s). */
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
  const beatMs = heartbeatEvery(BEAT_MS, ctx.info);
  while (waitedMs < totalMs) {
    const slice = Math.min(beatMs, totalMs - waitedMs);
    await ctx.sleep(slice);
    waitedMs += slice;
    ctx.heartbeat(waitedMs);
  }
  return { content: `Waited ${args.seconds} s.`, data: { seconds: args.seconds, resumedFromMs: resumed } };
}
