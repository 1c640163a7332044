import type { AgentInput } from '../../shared/agent';
import type { CarriedState } from '../../workflows/agent/carried-state';
import type { ChatMessage, ConversationMessage } from '../../shared/conversation';
import type { CallModelInput, ModelChoice } from '../../shared/model';
import type { History } from './history';
import { decodePayloads } from './payloads';
import type { ForkOrigin } from './timeline';

/** What a fork starts from: the original input and the conversation through a step. */
export interface ForkPlan {
  input: AgentInput;
  carried: CarriedState;
  origin: ForkOrigin;
}

/**
 * Plans a fork of a run after step `fromStep`, from its history only: the new run's conversation is
 * what the model was given for step `fromStep + 1` (everything through step `fromStep`'s tool
 * results), so no earlier tool runs again. `system` replaces the system prompt, `model` the model.
 */
export function planFork(
  history: History,
  fromStep: number,
  changes: { system?: string; model?: ModelChoice } = {},
): ForkPlan {
  const events = history.events ?? [];
  const started = events[0]?.workflowExecutionStartedEventAttributes;
  if (!started || started.workflowType?.name !== 'agentWorkflow')
    throw new Error('This history is not an agent run');
  const [input, carried] = decodePayloads(started.input) as [AgentInput, CarriedState | undefined];
  const firstStep = (carried?.step ?? 0) + 1;
  const modelInputs = events
    .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
    .map((e) => decodePayloads(e.activityTaskScheduledEventAttributes?.input)[0] as CallModelInput);
  const lastStep = firstStep + modelInputs.length - 1;
  if (!Number.isInteger(fromStep) || fromStep < firstStep || fromStep >= lastStep) {
    throw new Error(
      `--from-step must be between ${firstStep} and ${lastStep - 1} for this run (its model turns are steps ${firstStep}–${lastStep}; ` +
        'a fork continues with the step after the one given)',
    );
  }
  const next = modelInputs[fromStep - firstStep + 1] as CallModelInput;
  const fresh = {
    step: fromStep,
    usage: { inputTokens: 0, outputTokens: 0, modelCalls: 0, toolCalls: 0 },
    events: [],
    eventSeq: 0,
    continuations: 0,
    pendingUserMessages: [],
    lastError: null,
    toolCallSeq: 0,
  };
  // A forked sub-agent runs on its own: it does not report to the run that started the original.
  const own: AgentInput = { ...input };
  delete own.parent;
  const changed = {
    ...own,
    ...(changes.system !== undefined ? { system: changes.system } : {}),
    ...(changes.model ? { model: changes.model } : {}),
  };
  const byReference = next.conversation !== undefined || next.head !== undefined;
  if (!byReference) {
    // A run that sent its conversation by value: the next call's input holds all of it.
    let messages = next.messages as ChatMessage[];
    if (changes.system !== undefined) {
      messages = messages.map((m) =>
        m.role === 'system' ? { role: 'system', content: changes.system as string } : m,
      );
    }
    return { input: changed, carried: { ...fresh, messages }, origin: originOf(started, fromStep) };
  }
  // The stored conversation through step `fromStep`, plus what that step added: no content is copied.
  const atStart = carried?.conversation;
  const sentBefore = modelInputs
    .slice(0, fromStep - firstStep + 2)
    .reduce((n, m) => n + (m.messages?.length ?? 0), 0);
  const total = (atStart ? atStart.total - atStart.unsent.length : 2) + sentBefore;
  const head: ConversationMessage[] | undefined =
    changes.system !== undefined
      ? [
          { role: 'system', content: changes.system },
          { role: 'user', content: input.task },
        ]
      : next.conversation
        ? undefined
        : next.head;
  return {
    input: changed,
    carried: {
      ...fresh,
      conversation: {
        ref: next.conversation ?? null,
        ...(head ? { head } : {}),
        unsent: next.messages,
        total,
        recentCallIds: [],
      },
    },
    origin: originOf(started, fromStep),
  };
}

function originOf(
  started: NonNullable<NonNullable<History['events']>[number]['workflowExecutionStartedEventAttributes']>,
  step: number,
): ForkOrigin {
  return { workflowId: started.workflowId ?? '', runId: started.originalExecutionRunId ?? '', step };
}
