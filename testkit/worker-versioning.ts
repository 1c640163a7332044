import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { temporalBinary } from '../workers/binaries';

const run = promisify(execFile);

/** Runs the pinned `temporal` CLI against `address`, as an operator would; resolves with its output. */
export async function temporalCli(address: string, args: string[]): Promise<string> {
  return (await run(temporalBinary('temporal'), [...args, '--address', address])).stdout;
}

/**
 * Makes `buildId` (null: the unversioned workers) the current version of a worker deployment the way docs/versioning.md tells an
 * operator to (`temporal worker deployment set-current-version`), then waits until the task queue
 * routes to it. A version exists once its workers have polled, so a refusal saying it is not
 * found is tried again; and the server answers before every task queue has the new routing
 * (150–190 ms measured here), so a task created meanwhile would still go to the old build.
 */
export async function setCurrentBuild(opts: {
  client: Client;
  address: string;
  deploymentName: string;
  buildId: string | null;
  taskQueue: string;
}): Promise<void> {
  const args = ['worker', 'deployment', 'set-current-version', '--deployment-name', opts.deploymentName];
  args.push(...(opts.buildId === null ? ['--unversioned'] : ['--build-id', opts.buildId]));
  args.push('--yes');
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await temporalCli(opts.address, args);
      break;
    } catch (err) {
      const stderr = String((err as { stderr?: unknown }).stderr ?? err);
      if (!/not found|no Worker Deployment found/i.test(stderr) || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const types = [
    temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
  ];
  for (const taskQueueType of types) {
    for (;;) {
      const d = await opts.client.workflowService.describeTaskQueue({
        namespace: opts.client.options.namespace,
        taskQueue: { name: opts.taskQueue },
        taskQueueType,
      });
      if ((d.versioningInfo?.currentDeploymentVersion?.buildId || null) === opts.buildId) break;
      if (Date.now() > deadline)
        throw new Error(`task queue ${opts.taskQueue} never routed to ${opts.buildId}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
