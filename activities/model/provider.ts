import type { ChatMessage } from '../../shared/conversation';
import type { CallModelOutput, ModelChoice, ModelToolSpec } from '../../shared/model';

/** What a provider receives: the run's model choice, the conversation and the tools offered. */
export interface ProviderRequest<M extends ModelChoice = ModelChoice> {
  model: M;
  messages: ChatMessage[];
  tools: ModelToolSpec[];
  /** The run's step (model turn number, from 1). */
  step?: number;
  /** Aborted when Temporal cancels the activity. */
  signal?: AbortSignal;
}

/** A model provider: one chat turn in, one assistant turn out. */
export type ModelProvider<M extends ModelChoice = ModelChoice> = (
  req: ProviderRequest<M>,
) => Promise<CallModelOutput>;
