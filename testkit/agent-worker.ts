import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import type { WorkerConfig } from '../workers/config';
import type { AgentWorkerOptions } from '../workers/worker';
import { createAgentWorker } from '../workers/worker';
import { notificationDelivery } from '../client/deliver';
import { testConfig, workflowBundle } from './temporal';
/**
 * An agent worker on a test environment's server, polling `taskQueue`, with the suite's workflow
 * bundle and the test config (`config` over it); other options as createAgentWorker takes them.
 */
export async function agentWorkerOn(
  env: TestWorkflowEnvironment,
  taskQueue: string,
  opts: Omit<Partial<AgentWorkerOptions>, 'config'> & { config?: Partial<WorkerConfig> } = {},
): Promise<Worker> {
  const { config, ...rest } = opts;
  return createAgentWorker({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowBundle: await workflowBundle(),
    deliver: notificationDelivery(env.client, taskQueue),
    ...rest,
    config: testConfig(config),
  });
}
