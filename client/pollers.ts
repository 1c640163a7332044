import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';

// Enum values of the API (TASK_QUEUE_KIND_NORMAL, TASK_QUEUE_TYPE_WORKFLOW); the proto package is not loaded for two numbers.
const KIND_NORMAL = 1 as temporal.api.enums.v1.TaskQueueKind;
const TYPE_WORKFLOW = 1 as temporal.api.enums.v1.TaskQueueType;

/**
 * A poller counts as a live worker when it polled this recently. The server remembers pollers for
 * minutes after they stop; an idle worker's long poll is renewed about every minute.
 */
const LIVE_POLLER_MS = 90_000;

/**
 * How many workers poll the workflow side of a task queue now (DescribeTaskQueue pollers), or
 * undefined when the server does not say (e.g. the API key may not describe task queues).
 */
export async function workflowPollers(client: Client, taskQueue: string): Promise<number | undefined> {
  try {
    const r = await client.workflowService.describeTaskQueue({
      namespace: client.options.namespace,
      taskQueue: { name: taskQueue, kind: KIND_NORMAL },
      taskQueueType: TYPE_WORKFLOW,
    });
    const now = Date.now();
    return (r.pollers ?? []).filter((p) => {
      const seconds = Number(p.lastAccessTime?.seconds ?? 0);
      return seconds === 0 || now - seconds * 1000 < LIVE_POLLER_MS;
    }).length;
  } catch {
    return undefined;
  }
}

/** What to tell the user when no worker polls the run's task queue. */
export function noWorkerMessage(taskQueue: string, address: string | undefined, namespace: string): string {
  const flags = [
    ...(address === undefined || address === '127.0.0.1:7233' ? [] : [`--address ${address}`]),
    ...(namespace === 'default' ? [] : [`--namespace ${namespace}`]),
  ];
  const env = taskQueue === 'durable-agent' ? '' : `DURABLE_AGENT_TASK_QUEUE=${taskQueue} `;
  return (
    `No worker polls task queue "${taskQueue}" (namespace ${namespace} at ${address ?? '127.0.0.1:7233'}); ` +
    `start one with: ${env}npx durable-agent ${flags.length ? `${flags.join(' ')} ` : ''}worker`
  );
}
