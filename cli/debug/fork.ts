import type { AgentInput, CarriedState } from '../../shared/agent';
import type { ChatMessage } from '../../shared/conversation';
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
  let messages: ChatMessage[] = next.messages;
  if (changes.system !== undefined) {
    messages = messages.map((m) =>
      m.role === 'system' ? { role: 'system', content: changes.system as string } : m,
    );
  }
  return {
    input: {
      ...input,
      ...(changes.system !== undefined ? { system: changes.system } : {}),
      ...(changes.model ? { model: changes.model } : {}),
    },
    carried: {
      messages,
      step: fromStep,
      usage: { inputTokens: 0, outputTokens: 0, modelCalls: 0, toolCalls: 0 },
      events: [],
      eventSeq: 0,
      continuations: 0,
      pendingUserMessages: [],
      lastError: null,
      toolCallSeq: 0,
    },
    origin: {
      workflowId: started.workflowId ?? '',
      runId: started.originalExecutionRunId ?? '',
      step: fromStep,
    },
  };
}
