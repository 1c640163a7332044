import { patched, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { AgentStatus, ParsedAgentInput } from '../../shared/agent';
import {
  AgentLastToolKey,
  AgentModelKey,
  AgentStatusKey,
  AgentStepKey,
} from '../../shared/search-attributes';

/**
 * Marks runs that upsert their status at once but the step and the last tool only every
 * STEP_ATTRIBUTE_EVERY_STEPS steps or STEP_ATTRIBUTE_EVERY_MS of workflow time (and with every
 * status change), instead of at every step. Each upsert is a history event and a visibility write
 * on the server: at every step they cost 14 % of a worker's steps/s with 500 runs at once
 * (bench/density.ts). Runs recorded before it replay as they ran.
 */
export const SEARCH_ATTRIBUTES_PATCH = 'search-attributes-on-change';

/** Workflow time after which a step that moved on is shown, even without a status change. */
export const STEP_ATTRIBUTE_EVERY_MS = 30_000;
/** Steps after which a step that moved on is shown, even without a status change. */
export const STEP_ATTRIBUTE_EVERY_STEPS = 5;

/** What the run's search attributes show. */
export interface RunAttributes {
  status: AgentStatus;
  step: number;
  model: ParsedAgentInput['model'];
  lastTool: string | undefined;
}

/**
 * Keeps a run's search attributes current, but only when the starter set them: upserting an
 * attribute the namespace has not registered would fail every workflow task. The values the
 * server holds are the workflow info's (the SDK updates it on every upsert).
 */
export class SearchAttributePublisher {
  /** Whether this run upserts on change (SEARCH_ATTRIBUTES_PATCH); undefined until first asked. */
  private onChange: boolean | undefined;
  private lastAt = Date.now();

  publish(a: RunAttributes): void {
    const shown = workflowInfo().typedSearchAttributes;
    const status = shown.get(AgentStatusKey);
    if (status === undefined) return;
    if ((this.onChange ??= patched(SEARCH_ATTRIBUTES_PATCH))) {
      const step = shown.get(AgentStepKey) ?? 0;
      const moved =
        a.step !== step || (a.lastTool !== undefined && a.lastTool !== shown.get(AgentLastToolKey));
      const due =
        moved &&
        (a.step - step >= STEP_ATTRIBUTE_EVERY_STEPS || Date.now() - this.lastAt >= STEP_ATTRIBUTE_EVERY_MS);
      if (a.status === status && !due) return;
    }
    this.lastAt = Date.now();
    const { model, lastTool } = a;
    upsertSearchAttributes([
      { key: AgentStatusKey, value: a.status },
      { key: AgentStepKey, value: a.step },
      {
        key: AgentModelKey,
        value: model.provider === 'scripted' ? 'scripted' : `${model.provider}:${model.model}`,
      },
      ...(lastTool ? [{ key: AgentLastToolKey, value: lastTool }] : []),
    ]);
  }
}
