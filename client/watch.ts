/** Following a run as data: its events as they come, the retries the server makes, how it ended. */
import path from 'node:path';
import type { RetryingActivity } from './retries';
import { retryingActivities } from './retries';
import type { StreamChannel } from '../activities/streaming';
import { STREAM_ENV, parseStreamSetting, streamChannelFor } from '../activities/streaming';
import { DATA_ROOT } from '../shared/project-root';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, TerminatedFailure } from '@temporalio/common';
import type { AgentEvent, AgentResult } from '../shared/agent';
import { eventsQuery } from '../shared/agent/messages';

/** How a followed run ended. */
export interface RunOutcome {
  outcome: 'completed' | 'stopped' | 'failed' | 'cancelled';
  result?: AgentResult;
  error?: string;
  /** The failure's type when the run failed with one (`OutputValidationError`, `InvalidAgentInput`, …). */
  errorType?: string;
}

/** What {@link followRun} tells as it goes. */
export interface RunFollower {
  /** Each new event of the run, in order, once. */
  onEvent(e: AgentEvent): void;
  /** An activity the server retries (each attempt once), read from the run's description every second. */
  onRetry?(r: RetryingActivity): void;
  /** How often to ask the run (milliseconds; default 250). */
  pollMs?: number;
}

/**
 * Follows a run: hands over each new event (by polling the `events` query) until the run closes,
 * then returns its outcome. Survives continue-as-new because the handle follows the chain.
 */
export async function followRun(
  client: Client,
  handle: WorkflowHandle,
  follower: RunFollower,
): Promise<RunOutcome> {
  const pollMs = follower.pollMs ?? 250;
  let since = 0;
  let done = false;
  const result = handle
    .result()
    .then((r) => r as AgentResult)
    .finally(() => {
      done = true;
    });
  // Handled from the start: the run can end (a cancelled one rejects) while the first query still
  // waits for a worker, and an unhandled rejection would end this process with exit code 1.
  result.catch(() => undefined);
  const follow = client.workflow.getHandle(handle.workflowId);
  const drain = async () => {
    try {
      const events = await follow.query(eventsQuery, { since });
      for (const e of events) {
        since = Math.max(since, e.seq);
        follower.onEvent(e);
      }
    } catch {
      // Between runs of a continue-as-new chain, or before the first task: try again next tick.
    }
  };
  // Retries happen on the server, out of the run's sight: its description says which, every second.
  const retriesSeen = new Set<string>();
  let lastRetryCheck = 0;
  const retries = async () => {
    if (!follower.onRetry || Date.now() - lastRetryCheck < 1000) return;
    lastRetryCheck = Date.now();
    try {
      for (const r of retryingActivities(await follow.describe())) {
        const key = `${r.activityId}/${r.attempt}`;
        if (retriesSeen.has(key)) continue;
        retriesSeen.add(key);
        follower.onRetry?.(r);
      }
    } catch {
      // A description is best effort: the events go on either way.
    }
  };
  while (!done) {
    await drain();
    await retries();
    await Promise.race([result.catch(() => undefined), new Promise((r) => setTimeout(r, pollMs))]);
  }
  await drain();
  try {
    const r = await result;
    const outcome = r.stopReason === 'final_answer' ? 'completed' : 'stopped';
    return { outcome, result: r };
  } catch (err) {
    if (err instanceof WorkflowFailedError) {
      if (err.cause instanceof CancelledFailure || err.cause instanceof TerminatedFailure) {
        return { outcome: 'cancelled', error: err.cause.message || 'cancelled' };
      }
      const errorType = err.cause instanceof ApplicationFailure ? err.cause.type : undefined;
      return {
        outcome: 'failed',
        error: err.cause?.message ?? err.message,
        ...(errorType ? { errorType } : {}),
      };
    }
    throw err;
  }
}

/** The live-token channel the environment names (DURABLE_AGENT_STREAM), or null when off or unreadable. */
export function liveChannelFromEnv(env: NodeJS.ProcessEnv = process.env): StreamChannel | null {
  try {
    return streamChannelFor(parseStreamSetting(env[STREAM_ENV], path.join(DATA_ROOT, '.data', 'streams')));
  } catch {
    return null;
  }
}
