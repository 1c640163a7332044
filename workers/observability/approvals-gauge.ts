import type { Client } from '@temporalio/client';
import type { Logger } from '@temporalio/worker';
import { AGENT_WORKFLOW_TYPE } from '../../shared/agent';
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
