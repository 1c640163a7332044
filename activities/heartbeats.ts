import { Context } from '@temporalio/activity';

/** The shortest interval a clock heartbeat runs at, whatever the timeout. */
const MIN_INTERVAL_MS = 100;

/**
 * How often an activity that heartbeats on a clock beats: its usual interval, or a third of the
 * heartbeat timeout its call was given when that is shorter. A run may shorten a tool's heartbeat
 * timeout (`policy.toolTimeouts`); the SDK sends at most one heartbeat per 80% of the timeout, so a
 * beat must always be waiting when that window opens, or a live call is taken for a dead one.
 */
export function heartbeatEvery(usualMs: number, info = Context.current().info): number {
  const timeoutMs = info.heartbeatTimeoutMs;
  if (!timeoutMs) return usualMs;
  return Math.max(MIN_INTERVAL_MS, Math.min(usualMs, Math.floor(timeoutMs / 3)));
}
