import type { RunDefaults } from '../../shared/agent';

export type { RunDefaults };

/** Activities the agent workflow uses to read the worker's run defaults. */
export interface RunDefaultsActivities {
  runDefaults(): Promise<RunDefaults>;
}

/** Creates `runDefaults`: the worker's configured defaults, read once when a run starts. */
export function createRunDefaultsActivities(defaults: RunDefaults): RunDefaultsActivities {
  return {
    async runDefaults() {
      return defaults;
    },
  };
}
