/**
 * Provider-neutral conversation types. Workflows, the model activity and clients all speak these;
 * each model provider maps them to and from its own wire format at the activity boundary.
 *
 * Two forms of a message: {@link ChatMessage} holds plain text (what a provider sends to a model);
 * {@link ConversationMessage} is what a run keeps and sends through Temporal, where large content
 * is a reference into the content store (see ./content.ts).
 */
import type { ContentRef, StoredText } from './content';

/** One tool call requested by the model. `arguments` is parsed JSON, or the raw text when it did not parse. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: unknown;
}

/** A message in the agent's conversation, with plain text: what a model provider receives. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string; isError?: boolean };

/**
 * A search tool's result kept by reference: the model activity renders what the model reads
 * (title, text, index, reference mark per result) from the stored records and the cite indexes the
 * run assigned, so neither the records nor the rendering enter history.
 */
export interface SearchResultContent {
  /** The search activity's full data (`{ records }`) in the content store. */
  search: ContentRef;
  /** Each result the model reads, in rank order: its position in the stored records and its index (`a3`). */
  picks: [number, string][];
  /** Longest text per result, in characters. */
  maxTextChars: number;
  /** What transcripts show without the store. */
  preview: string;
  /** UTF-8 size of the stored data. */
  bytes: number;
}

/** What a tool message holds: text (by value or by reference), or a search result to render. */
export type ToolMessageContent = StoredText | SearchResultContent;

/** Whether tool message content is a search result to render. */
export function isSearchResultContent(content: unknown): content is SearchResultContent {
  return (
    typeof content === 'object' &&
    content !== null &&
    typeof (content as { search?: unknown }).search === 'string' &&
    Array.isArray((content as { picks?: unknown }).picks)
  );
}

/** A message as a run keeps it and sends it through Temporal: large content by reference. */
export type ConversationMessage =
  | { role: 'system'; content: StoredText }
  | { role: 'user'; content: StoredText }
  | { role: 'assistant'; content: string | null; toolCalls?: ToolCall[] }
  | {
      role: 'tool';
      toolCallId: string;
      name: string;
      content: ToolMessageContent;
      isError?: boolean;
      /** The step whose model turn asked for the call (for the elision notice). */
      step?: number;
    };

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
