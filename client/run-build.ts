import type { WorkflowExecutionDescription } from '@temporalio/client';
import { decodeVersioningBehavior } from '@temporalio/common';
import type { RunBuildView, VersioningBehavior } from '../shared/worker-versioning';

function version(v: { deploymentName?: string | null; buildId?: string | null } | null | undefined) {
  return v?.deploymentName && v.buildId
    ? { deploymentName: v.deploymentName, buildId: v.buildId }
    : undefined;
}

/**
 * The build that completed the run's last workflow task and its behaviour, from the run's
 * description (Worker Versioning; docs/versioning.md); null for a run on unversioned workers, or
 * one that has completed no task yet. A pinned override names the build the run is held to, which
 * is then the one reported.
 */
export function runBuild(desc: WorkflowExecutionDescription): RunBuildView | null {
  const info = desc.raw.workflowExecutionInfo?.versioningInfo;
  if (!info) return null;
  const o = info.versioningOverride;
  const pinnedTo = version(o?.pinned?.version);
  const override: VersioningBehavior | undefined = pinnedTo
    ? 'PINNED'
    : o?.autoUpgrade
      ? 'AUTO_UPGRADE'
      : undefined;
  const behavior = override ?? decodeVersioningBehavior(info.behavior);
  const at = pinnedTo ?? version(info.deploymentVersion);
  if (!at || !behavior) return null;
  const movingTo = version(info.versionTransition?.deploymentVersion);
  return { ...at, behavior, ...(override ? { override } : {}), ...(movingTo ? { movingTo } : {}) };
}
