import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { ActivityOptions } from '@temporalio/workflow';
import type { OwnToolActivities, ToolActivity } from '../../activities/types';
import type { ParsedAgentInput } from '../../shared/agent';
import type { ToolDefinition } from '../../shared/tools/define';
import type { OwnToolCatalog, OwnToolSpec } from '../../shared/tools/own';
import { isOwnToolName, ownToolDefinition } from '../../shared/tools/own';

/** Describing the run's own tools: local to the worker's memory, so quick; an unknown name fails the run. */
const { describeOwnTools } = proxyActivities<OwnToolActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: ['OwnToolsUnknown', 'ActivityNotRegistered'] },
});

/** The options of an own tool's activity, from what the tool declares. */
function optionsOf(spec: OwnToolSpec): ActivityOptions {
  const a = spec.activity;
  return {
    startToCloseTimeout: a.startToCloseTimeout,
    ...(a.heartbeatTimeout !== undefined ? { heartbeatTimeout: a.heartbeatTimeout } : {}),
    // Cancelling a run waits for running tools to stop and clean up, as for built-in tools.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: {
      initialInterval: a.initialInterval ?? '1 second',
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
      maximumAttempts: a.maximumAttempts ?? 3,
      nonRetryableErrorTypes: a.nonRetryableErrorTypes ?? [],
    },
  };
}

/**
 * The run's own tools (tools of the worker's, defined with `defineTool`): described by the worker
 * when the run starts (or carried from the run before), offered to the model by reference,
 * checked against their JSON Schemas in the workflow, each call an activity named after the tool
 * with the options the tool declares.
 */
export class OwnToolbox {
  private catalog: OwnToolCatalog | undefined;
  private byName = new Map<string, OwnToolSpec>();
  private readonly definitions = new Map<string, ToolDefinition>();
  private readonly activities = new Map<string, ToolActivity>();
  /** The own tools the run names. */
  readonly names: string[];

  constructor(input: ParsedAgentInput, carried: OwnToolCatalog | undefined) {
    this.names = input.tools.filter(isOwnToolName);
    if (carried) this.use(carried);
  }

  /** Whether the run names own tools at all. */
  get enabled(): boolean {
    return this.names.length > 0;
  }

  /** Whether the worker must describe them before the next model call. */
  needsDiscovery(): boolean {
    return this.enabled && this.catalog === undefined;
  }

  /** Asks the worker what the tools are; a name it does not have fails the run, saying what exists. */
  async discover(): Promise<void> {
    let catalog: OwnToolCatalog;
    try {
      catalog = await describeOwnTools({ names: this.names });
    } catch (err) {
      const cause = err instanceof ActivityFailure ? err.cause : undefined;
      const type = cause instanceof ApplicationFailure ? cause.type : undefined;
      throw ApplicationFailure.create({
        type: type === 'OwnToolsUnknown' ? 'InvalidAgentInput' : 'OwnToolsUnavailable',
        message:
          type === 'OwnToolsUnknown'
            ? `Invalid run: tools: ${cause?.message ?? ''}`
            : `The worker could not describe the run's own tools (${cause?.message ?? (err as Error).message}); ` +
              'start the workers of this task queue with the plugin and the same tools',
        nonRetryable: true,
      });
    }
    this.use(catalog);
  }

  /** The tools the model sees by reference: the catalog's stored specs, when the run has own tools. */
  modelTools(): { ownTools: OwnToolCatalog['specsRef'] } | Record<string, never> {
    return this.catalog && this.catalog.tools.length > 0 ? { ownTools: this.catalog.specsRef } : {};
  }

  /** The own tool the model calls by this name, if any. */
  find(name: string): OwnToolSpec | undefined {
    return this.byName.get(name);
  }

  /** The tool as the tool runner handles every tool. */
  definition(spec: OwnToolSpec): ToolDefinition {
    let def = this.definitions.get(spec.name);
    if (!def) {
      def = ownToolDefinition(spec);
      this.definitions.set(spec.name, def);
    }
    return def;
  }

  /** The activity that runs a call: named after the tool, local when declared so and the run allows it. */
  activity(spec: OwnToolSpec, localTools: boolean): ToolActivity {
    const local = localTools && spec.local === true;
    const key = `${local ? 'local' : 'remote'}:${spec.name}`;
    let activity = this.activities.get(key);
    if (!activity) {
      const options = optionsOf(spec);
      const proxies = local
        ? proxyLocalActivities<Record<string, ToolActivity>>({
            startToCloseTimeout: options.startToCloseTimeout,
            cancellationType: options.cancellationType,
            retry: options.retry,
          })
        : proxyActivities<Record<string, ToolActivity>>(options);
      const named = proxies[spec.name];
      // A proxy answers every name: this never throws.
      if (!named) throw new Error(`no activity proxy for ${spec.name}`);
      activity = named;
      this.activities.set(key, activity);
    }
    return activity;
  }

  /** What the run carries across continue-as-new. */
  carry(): OwnToolCatalog | undefined {
    return this.catalog;
  }

  /** Drops the catalog when the carried state is short of space: the next run asks again. */
  forget(): void {
    this.catalog = undefined;
    this.byName = new Map();
    this.definitions.clear();
  }

  private use(catalog: OwnToolCatalog): void {
    this.catalog = catalog;
    this.byName = new Map(catalog.tools.map((t) => [t.name, t]));
    this.definitions.clear();
  }
}
