import type { ChatMessage } from '../../shared/conversation';
import type { CallModelOutput, ModelChoice, ModelToolSpec } from '../../shared/model';

/** What a provider receives: the run's model choice, the conversation and the tools offered. */
export interface ProviderRequest<M extends ModelChoice = ModelChoice> {
  model: M;
  messages: ChatMessage[];
  tools: ModelToolSpec[];
  /** The run's step (model turn number, from 1). */
  step?: number;
  /** The JSON Schema the final answer must match, when the run declares one (structured output). */
  output?: Record<string, unknown>;
  /** Aborted when Temporal cancels the activity. */
  signal?: AbortSignal;
  /**
   * Called with each piece of the answer as the model generates it, when someone may watch (live
   * tokens). A provider that can stream asks for a stream and calls it in order; the answer it
   * returns is the same whole answer as without it. It must never throw into the provider.
   */
  onDelta?: (delta: ModelDelta) => void;
}

/** A piece of a model's answer as it is generated: text, or part of a tool call's arguments. */
export type ModelDelta =
  | { kind: 'text'; text: string }
  | {
      kind: 'tool_call';
      /** The call's position in the answer (0, 1, …). */
      index: number;
      /** The call's id and tool name, on the call's first delta when the provider says them. */
      id?: string;
      name?: string;
      /** The next piece of the call's arguments (JSON text). */
      args: string;
    };

/** A model provider: one chat turn in, one assistant turn out. */
export type ModelProvider<M extends ModelChoice = ModelChoice> = (
  req: ProviderRequest<M>,
) => Promise<CallModelOutput>;
