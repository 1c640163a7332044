import { patched } from '@temporalio/workflow';

/**
 * Marks runs that decide every later patch of the agent loop in their first activation. A patch
 * asked for the first time in code that follows a local activity (the run's defaults, a local model
 * or tool call) could fail the run's replay: a query arriving while the workflow task waits for the
 * local activity makes the task complete with the activity's marker before that code ran, so its
 * commands, the patch marker among them, go in the next task. On replay the activity resolves in
 * the first task, the patch is announced only with the next one's commands, `patched()` answers
 * false, and the new worker fails the run (or the query) with "patch marker encountered … but there
 * is no corresponding change command". A run with this marker asks no later patch at all: each is
 * on. Runs recorded before it replay as they ran, asking each patch where they did.
 */
export const PATCHES_AT_START_PATCH = 'patches-decided-at-start';

/** The agent loop's patches, as a run decides them (see PATCHES_AT_START_PATCH). */
export class RunPatches {
  /** Asked in the constructor, so in the execution's first activation, before any local activity. */
  private readonly atStart = patched(PATCHES_AT_START_PATCH);

  /** Whether the run takes patch `id`'s behaviour. */
  has(id: string): boolean {
    return this.atStart || patched(id);
  }
}
