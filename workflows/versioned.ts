/**
 * The workflows as a versioned worker registers them (DURABLE_AGENT_DEPLOYMENT_NAME and
 * DURABLE_AGENT_BUILD_ID): the same functions as ./index, each with the versioning behaviour it
 * declares (WORKFLOW_VERSIONING_BEHAVIOR says which and why).
 *
 * An entry of its own, because the server refuses a workflow task that an unversioned worker
 * completes with a versioning behaviour ("versioning behavior cannot be specified without deployment
 * options being set with versioned mode"), and the task then retries forever. Declared in ./index,
 * every run on an unversioned worker (the default, the demo) would stop at its first task; declared
 * on the fly from what the run sees (`workflowInfo().currentDeploymentVersion`), a run replayed by
 * an unversioned worker would still see the versioned build in its history and declare one. A
 * bundle of this entry declares them on every task, replayed or not; a bundle of ./index never.
 */
import { setWorkflowOptions } from '@temporalio/workflow';
import type { VersioningBehavior } from '../shared/worker-versioning';
import { WORKFLOW_VERSIONING_BEHAVIOR } from '../shared/worker-versioning';
import * as workflows from './index';

// A workflow added to ./index without a behaviour in the table fails to compile here.
const declared: Record<keyof typeof workflows, VersioningBehavior> = WORKFLOW_VERSIONING_BEHAVIOR;
for (const name of Object.keys(declared) as (keyof typeof workflows)[]) {
  const fn: (...args: never[]) => Promise<unknown> = workflows[name];
  setWorkflowOptions({ versioningBehavior: declared[name] }, fn);
}

export * from './index';
