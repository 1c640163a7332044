import type { SearchAttributePair } from '@temporalio/common';
import { upsertMemo, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
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

/**
 * Marks runs that set what their starter did not: the memo (`task`, `notifyUser`) of a run started
 * by a plain Temporal client or as a child of someone's own workflow, the agent search attributes
 * where the namespace has them, and the model's name where the starter could not know it (a `local`
 * run that names no file uses the worker's). Only runs that lack one of them check it, so a run
 * started by this project's start function issues the commands it always did. The server carries
 * search attributes over a continue-as-new but only a start's memo, so each execution of such a run
 * sets its memo again (one event).
 */
export const SELF_DESCRIBED_RUN_PATCH = 'run-describes-itself';

/** Most characters of the task a run's memo keeps (the runs list shows the start of it). */
export const MEMO_TASK_CHARS = 200;

/** Workflow time after which a step that moved on is shown, even without a status change. */
export const STEP_ATTRIBUTE_EVERY_MS = 30_000;
/** Steps after which a step that moved on is shown, even without a status change. */
export const STEP_ATTRIBUTE_EVERY_STEPS = 5;

/** What the run's search attributes show. */
export interface RunAttributes {
  status: AgentStatus;
  step: number;
  /** The `AgentModel` value (shared/search-attributes.ts `modelAttribute`). */
  model: string;
  lastTool: string | undefined;
}

/** The memo every run has, as this project's start function writes it. */
export function runMemo(input: ParsedAgentInput): Record<string, string> {
  return {
    task: input.task.slice(0, MEMO_TASK_CHARS),
    ...(input.notify?.user ? { notifyUser: input.notify.user } : {}),
  };
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

  /** `patched` answers whether the run takes a patch's behaviour (RunPatches.has). */
  constructor(private readonly patched: (id: string) => boolean) {}

  publish(a: RunAttributes): void {
    const shown = workflowInfo().typedSearchAttributes;
    const status = shown.get(AgentStatusKey);
    if (status === undefined) return;
    if ((this.onChange ??= this.patched(SEARCH_ATTRIBUTES_PATCH))) {
      const step = shown.get(AgentStepKey) ?? 0;
      const moved =
        a.step !== step || (a.lastTool !== undefined && a.lastTool !== shown.get(AgentLastToolKey));
      const due =
        moved &&
        (a.step - step >= STEP_ATTRIBUTE_EVERY_STEPS || Date.now() - this.lastAt >= STEP_ATTRIBUTE_EVERY_MS);
      if (a.status === status && !due) return;
    }
    this.lastAt = Date.now();
    const { lastTool } = a;
    upsertSearchAttributes([
      { key: AgentStatusKey, value: a.status },
      { key: AgentStepKey, value: a.step },
      { key: AgentModelKey, value: a.model },
      ...(lastTool ? [{ key: AgentLastToolKey, value: lastTool }] : []),
    ]);
  }

  /**
   * Sets what the run's starter did not (see SELF_DESCRIBED_RUN_PATCH): its memo, and its search
   * attributes where `namespaceHasThem` (the worker asked the server) or a better model name.
   */
  describeSelf(a: RunAttributes, memo: Record<string, string>, namespaceHasThem: boolean): void {
    const info = workflowInfo();
    // Only what the starter left out: a memo of its own (`runAgent`'s `task`) stays as it is.
    const missing = Object.entries(memo).filter(([k]) => info.memo?.[k] === undefined);
    const shown = info.typedSearchAttributes;
    const attributes: SearchAttributePair[] =
      shown.get(AgentStatusKey) === undefined
        ? namespaceHasThem
          ? [
              { key: AgentStatusKey, value: a.status },
              { key: AgentStepKey, value: a.step },
              { key: AgentModelKey, value: a.model },
            ]
          : []
        : shown.get(AgentModelKey) !== a.model
          ? [{ key: AgentModelKey, value: a.model }]
          : [];
    if ((missing.length === 0 && attributes.length === 0) || !this.patched(SELF_DESCRIBED_RUN_PATCH)) return;
    if (missing.length > 0) upsertMemo(Object.fromEntries(missing));
    if (attributes.length > 0) {
      this.lastAt = Date.now();
      upsertSearchAttributes(attributes);
    }
  }
}
