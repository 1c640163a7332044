import type { Client } from '@temporalio/client';
import type { Logger } from '@temporalio/worker';
import { AGENT_WORKFLOW_TYPE, stateQuery } from '../../shared/agent';
import { AgentStatusKey } from '../../shared/search-attributes';
import type { AgentMetrics } from './metrics';

/** How often the count of runs waiting for approval is refreshed: Prometheus's default scrape interval. */
export const WAITING_APPROVALS_EVERY_MS = 15_000;

/** The visibility query of running agent runs of a task queue that wait for approval. */
export function waitingForApprovalQuery(taskQueue: string): string {
  const queue = taskQueue.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
  return (
    `WorkflowType = '${AGENT_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' AND ` +
    `TaskQueue = '${queue}' AND ${AgentStatusKey.name} = 'waiting_for_approval'`
  );
}

/** Waiting runs read for the oldest wait, at most: a bound on each refresh's queries. */
export const OLDEST_WAIT_RUNS = 50;

/**
 * How long the oldest call waits, in seconds: the `requestedAt` of each waiting run's approvals
 * (their `state` query), over the first {@link OLDEST_WAIT_RUNS} runs visibility lists, oldest
 * start first (a run that started earlier tends to wait longer). A run that answers no query
 * (finished meanwhile, or no worker) is skipped.
 */
export async function oldestWaitSeconds(client: Client, query: string, now = Date.now()): Promise<number> {
  let oldest = now;
  let seen = 0;
  for await (const wf of client.workflow.list({ query, pageSize: OLDEST_WAIT_RUNS })) {
    if (++seen > OLDEST_WAIT_RUNS) break;
    const state = await client.workflow
      .getHandle(wf.workflowId)
      .query(stateQuery)
      .catch(() => undefined);
    for (const a of state?.approvals ?? []) {
      const at = a.requestedAt ? Date.parse(a.requestedAt) : NaN;
      if (Number.isFinite(at) && at < oldest) oldest = at;
    }
  }
  return Math.max(0, (now - oldest) / 1000);
}

/**
 * Keeps `durable_agent_runs_waiting_for_approval` current: Temporal's visibility counts the runs
 * (their `AgentStatus` search attribute), so the number holds whichever worker last ran them and
 * across worker restarts; every worker of a queue reports the same count (take the max, not the
 * sum). Needs the search attributes registered (see docs/production.md); until a count succeeds
 * the gauge is absent, and one warning says why. Returns the function that stops it.
 */
export function watchRunsWaitingForApproval(opts: {
  client: Client;
  taskQueue: string;
  metrics: AgentMetrics;
  logger: Logger;
  everyMs?: number;
}): () => void {
  const query = waitingForApprovalQuery(opts.taskQueue);
  let warned = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const refresh = async () => {
    try {
      const { count } = await opts.client.workflow.count(query);
      opts.metrics.runsWaitingForApproval(count);
      opts.metrics.oldestApprovalWait(count ? await oldestWaitSeconds(opts.client, query) : 0);
      warned = false;
    } catch (err) {
      if (!warned) {
        warned = true;
        opts.logger.warn('cannot count the runs waiting for approval; the gauge is not updated', {
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
    if (!stopped) timer = setTimeout(() => void refresh(), opts.everyMs ?? WAITING_APPROVALS_EVERY_MS);
    timer?.unref();
  };
  void refresh();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
