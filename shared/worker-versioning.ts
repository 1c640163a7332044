/**
 * Which Worker Versioning behaviour each workflow declares, and why (docs/versioning.md). Only
 * versioned workers (DURABLE_AGENT_DEPLOYMENT_NAME and DURABLE_AGENT_BUILD_ID) declare them: they
 * load workflows/versioned.ts, which applies this table. When a new build becomes the deployment's
 * current version, an AUTO_UPGRADE run moves to it at its next workflow task (it replays its
 * history on the new code); a PINNED run stays on the build that started it until it ends.
 */

/** Temporal's versioning behaviours (`VersioningBehavior` of `@temporalio/common`), spelled out for the web code. */
export type VersioningBehavior = 'PINNED' | 'AUTO_UPGRADE';

/**
 * The behaviour of every workflow the worker registers, by workflow type.
 *
 * - `agentWorkflow`, **AUTO_UPGRADE**: a run lives for minutes to days (an approval waits durably
 *   for its timeout; long runs continue as new). Pinned, every old build's workers would have to
 *   stay up until its last waiting run ended, and fixes would never reach runs already going.
 *   Moving is safe because workflow changes that alter commands are behind `patched()` and the
 *   recorded histories replay against every change (tests/replay). A continue-as-new starts on the
 *   current build. Sub-agents are agent runs started as children: the same type, the same
 *   behaviour, and they start on the current build.
 * - `inboxWorkflow`, **AUTO_UPGRADE**: an inbox runs forever; pinned, it would never leave the
 *   build that created it.
 * - `toolCallWorkflow`, **PINNED**: one tool call, done within its activity's timeout. Pinned, it
 *   never replays on other code, so its changes need no patches, and the old build's share of them
 *   drains within that timeout.
 * - `contentGcWorkflow`, **PINNED**: one collection (a single activity) per schedule firing, done
 *   within its activity's timeout; like a tool call, it never needs to move.
 */
export const WORKFLOW_VERSIONING_BEHAVIOR = {
  agentWorkflow: 'AUTO_UPGRADE',
  inboxWorkflow: 'AUTO_UPGRADE',
  toolCallWorkflow: 'PINNED',
  contentGcWorkflow: 'PINNED',
} as const satisfies Record<string, VersioningBehavior>;

/**
 * A versioned worker's default for a workflow type that declares no behaviour (none: every type in
 * workflows/index.ts must have one in the table, or workflows/versioned.ts does not compile). PINNED: unpatched code that moved builds mid-run could fail to replay, while a
 * pinned run only keeps its build's workers busy until it ends.
 */
export const DEFAULT_VERSIONING_BEHAVIOR: VersioningBehavior = 'PINNED';

/** The build a run is on, as `status --json` and `GET /api/runs/:id` report it (null when unversioned). */
export interface RunBuildView {
  deploymentName: string;
  buildId: string;
  /** What the run's workflow declares, or an override replaces: whether it moves to a new build. */
  behavior: VersioningBehavior;
  /** Set when an operator overrode the declared behaviour (`temporal workflow update-options`). */
  override?: VersioningBehavior;
  /** The build its next workflow task goes to, while it moves there. */
  movingTo?: { deploymentName: string; buildId: string };
}

/** One line for people: `build 4f1c2ab of deployment agents (auto-upgrade)`. */
export function formatRunBuild(b: RunBuildView): string {
  const how = b.behavior === 'PINNED' ? 'pinned' : 'auto-upgrade';
  return (
    `build ${b.buildId} of deployment ${b.deploymentName} (${how}${b.override ? ', by an override' : ''})` +
    (b.movingTo ? `, moving to build ${b.movingTo.buildId}` : '')
  );
}
