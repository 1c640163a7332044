/**
 * Provider-neutral conversation types. Workflows, the model activity and clients all speak these;
 * each model provider maps them to and from its own wire format at the activity boundary.
 */

/** One tool call requested by the model. `arguments` is parsed JSON, or the raw text when it did not parse. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: unknown;
}

/** A message in the agent's conversation. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string; isError?: boolean };

/** Token usage reported by a model call. Providers that report nothing count zero. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** Adds two usage records. */
export function addUsage(a: Usage, b: Usage): Usage {
  return { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens };
}

/** A zero usage record. */
export const ZERO_USAGE: Usage = Object.freeze({ inputTokens: 0, outputTokens: 0 });

/**
 * The messages the model sees: all of them up to `max`, else the system prompt and task plus the
 * latest messages, starting at a turn boundary so no tool result loses the call it answers (the
 * window may exceed `max` by the results of that one turn). The run keeps the whole conversation;
 * this bounds each model call, and the history it writes.
 */
export function contextWindow(messages: ChatMessage[], max: number): ChatMessage[] {
  if (messages.length <= max) return messages;
  const head = messages.slice(0, 2);
  let start = Math.max(2, messages.length - (max - head.length));
  while (start > 2 && messages[start]?.role === 'tool') start -= 1;
  return [...head, ...messages.slice(start)];
}
