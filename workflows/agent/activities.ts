/** Activity presets of the agent workflow: one `proxyActivities` call per preset. */
import { ActivityCancellationType, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';
import type {
  ModelActivities,
  NotificationActivities,
  RunDefaultsActivities,
  ToolActivity,
} from '../../activities/types';
import type { ToolTimeouts } from '../../shared/agent/input';
import type { ToolDefinition } from '../../shared/tools/define';
import { TOOL_REGISTRY } from '../../shared/tools/registry';

/** Model calls: one attempt may take a while; provider errors are classified by the activity. */
const MODEL_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '5 minutes',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  heartbeatTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 8,
    nonRetryableErrorTypes: ['ModelAuthError', 'ModelBadRequest', 'ModelNotConfigured', 'ScriptError'],
  },
} as const satisfies ActivityOptions;

/** The model activity. */
export const { callModel } = proxyActivities<ModelActivities>(MODEL_ACTIVITY_OPTIONS);

/**
 * The model call as a local activity (`policy.localActivities: 'auto'`): the same timeout and
 * retries, without heartbeats (a local activity reports to the workflow task, not to the server).
 */
export const { callModel: callModelLocally } = proxyLocalActivities<ModelActivities>(
  localOptions(MODEL_ACTIVITY_OPTIONS),
);

/** Delivery of notifications the workflow raises itself to the user's inbox. */
const NOTIFICATION_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 10, nonRetryableErrorTypes: ['NotificationsUnavailable'] },
} as const satisfies ActivityOptions;

/** Notification delivery to inboxes. */
export const { deliverNotification } = proxyActivities<NotificationActivities>(NOTIFICATION_ACTIVITY_OPTIONS);

/** Reading the worker's run defaults: local (no I/O), once when a run first starts. */
export const { runDefaults } = proxyLocalActivities<RunDefaultsActivities>({
  startToCloseTimeout: '10 seconds',
});

/** Options of the local form of an activity: the same, less what local activities lack. */
function localOptions(options: ActivityOptions): LocalActivityOptions {
  return {
    startToCloseTimeout: options.startToCloseTimeout,
    cancellationType: options.cancellationType,
    retry: options.retry,
  };
}

/** The options of a tool's activity: what the tool declares, with a run's own timeouts over them. */
function toolActivityOptions(def: ToolDefinition, timeouts?: ToolTimeouts): ActivityOptions {
  const a = def.activity;
  return {
    startToCloseTimeout: timeouts?.startToCloseTimeout ?? a.startToCloseTimeout,
    heartbeatTimeout: timeouts?.heartbeatTimeout ?? a.heartbeatTimeout,
    // Cancelling a run waits for running tools to stop and clean up, so nothing runs on unseen.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: {
      initialInterval: a.initialInterval ?? '1 second',
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
      maximumAttempts: a.maximumAttempts ?? 5,
      nonRetryableErrorTypes: a.nonRetryableErrorTypes ?? [],
    },
  };
}

/** One activity function per tool, each with the options its tool declares. Immutable after load. */
export const TOOL_ACTIVITIES: Readonly<Record<string, ToolActivity>> = Object.freeze(
  Object.fromEntries(
    // ask_user has no activity: the workflow waits for the answer itself.
    Object.values(TOOL_REGISTRY)
      .filter((def) => def.category !== 'human')
      .map((def) => [
        def.name,
        proxyActivities<Record<string, ToolActivity>>(toolActivityOptions(def))[def.name] as ToolActivity,
      ]),
  ),
);

/**
 * The local form of each tool that declares itself pure and quick (`local: true`), used when the
 * run's `policy.localActivities` allows it. Other tools have none: they always run as regular activities.
 */
export const LOCAL_TOOL_ACTIVITIES: Readonly<Record<string, ToolActivity>> = Object.freeze(
  Object.fromEntries(
    Object.values(TOOL_REGISTRY)
      .filter((def) => def.local === true)
      .map((def) => [
        def.name,
        proxyLocalActivities<Record<string, ToolActivity>>(localOptions(toolActivityOptions(def)))[
          def.name
        ] as ToolActivity,
      ]),
  ),
);

/**
 * The activity a run calls a built-in tool with: the preset of the tool (its local form when `local`
 * and the tool has one), or, when the run's `policy.toolTimeouts` sets the tool's timeouts, the same
 * activity with those. Only the options of the scheduled activity differ, so runs without the
 * setting schedule exactly what they did before it existed.
 */
export function toolActivity(
  def: ToolDefinition,
  local: boolean,
  timeouts: ToolTimeouts | undefined,
): ToolActivity | undefined {
  const runsLocally = local && def.local === true;
  if (!timeouts)
    return (runsLocally ? LOCAL_TOOL_ACTIVITIES[def.name] : undefined) ?? TOOL_ACTIVITIES[def.name];
  const options = toolActivityOptions(def, timeouts);
  return runsLocally
    ? proxyLocalActivities<Record<string, ToolActivity>>(localOptions(options))[def.name]
    : proxyActivities<Record<string, ToolActivity>>(options)[def.name];
}
