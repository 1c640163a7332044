import path from 'node:path';
import type { RunDefaults } from '../../shared/agent';

export type { RunDefaults };

/** Activities the agent workflow uses to read the worker's run defaults. */
export interface RunDefaultsActivities {
  runDefaults(): Promise<RunDefaults>;
}

/** What a run is told about the worker besides its configured defaults. */
export interface WorkerFacts {
  /** Path of the worker's local model (its file name is what a `local` run is listed with). */
  localModelPath?: string;
  /** Whether the worker's namespace has the agent search attributes; false when absent. */
  agentSearchAttributes?: () => Promise<boolean>;
}

/**
 * Creates `runDefaults`: the worker's configured defaults, read once when a run starts, with what
 * the run cannot see itself (its worker's local model, whether its namespace has the agent search
 * attributes), so that a run started without memo or search attributes can set them.
 */
export function createRunDefaultsActivities(
  defaults: RunDefaults,
  facts: WorkerFacts = {},
): RunDefaultsActivities {
  return {
    async runDefaults() {
      return {
        ...defaults,
        ...(facts.localModelPath ? { localModel: path.basename(facts.localModelPath) } : {}),
        searchAttributes: (await facts.agentSearchAttributes?.()) ?? false,
      };
    },
  };
}
