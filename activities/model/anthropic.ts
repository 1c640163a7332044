/**
 * The Anthropic Messages API provider. The Messages API differs from chat completions in ways the
 * mapping below has to bridge: the system prompt is a top-level field, tool calls and tool results
 * are content blocks, and tool results travel inside a user turn.
 */
import { z } from 'zod';
import type { ChatMessage, ToolCall } from '../../shared/conversation';
import type { ModelChoice, ModelToolSpec } from '../../shared/model';
import { modelNotConfigured, postModelApi } from './errors';
import type { ModelProvider } from './provider';

/** The model choice this provider serves. */
export type AnthropicModelChoice = Extract<ModelChoice, { provider: 'anthropic' }>;

/** Where and how to reach the Anthropic Messages API. */
export interface AnthropicProviderOptions {
  /** Sent as `x-api-key`. Without one every call fails as `ModelNotConfigured`, so a worker can still start. */
  apiKey?: string;
  /** Without the `/v1` segment; defaults to `https://api.anthropic.com`. */
  baseUrl?: string;
  /** Per request; defaults to 10 minutes, as in Anthropic's own SDK, since long answers come slowly. */
  timeoutMs?: number;
  /** Replaces the global `fetch`, for proxies and tests. */
  fetchImpl?: typeof fetch;
}

const DEFAULT_BASE_URL = 'https://api.anthropic.com';
const DEFAULT_TIMEOUT_MS = 600_000;
/** The API version the request and response shapes below follow. */
const ANTHROPIC_VERSION = '2023-06-01';

type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: true };

interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

/** A Messages API answer as documented; block types we do not use (e.g. `thinking`) are skipped. */
const MessageResponseSchema = z.object({
  content: z.array(
    z.union([
      z.object({ type: z.literal('text'), text: z.string() }),
      z.object({
        type: z.literal('tool_use'),
        id: z.string(),
        name: z.string(),
        input: z.record(z.string(), z.unknown()),
      }),
      z.object({ type: z.string() }),
    ]),
  ),
  stop_reason: z.string().nullish(),
  usage: z
    .object({
      input_tokens: z.number().nullish(),
      output_tokens: z.number().nullish(),
      cache_creation_input_tokens: z.number().nullish(),
      cache_read_input_tokens: z.number().nullish(),
    })
    .nullish(),
});

/** Creates a provider that calls `POST {baseUrl}/v1/messages`. */
export function createAnthropicProvider(
  options: AnthropicProviderOptions = {},
): ModelProvider<AnthropicModelChoice> {
  const apiKey = options.apiKey ?? '';
  const url = `${(options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '')}/v1/messages`;
  return async (req) => {
    if (!apiKey) throw modelNotConfigured('Anthropic', 'no API key; set one in the worker configuration.');
    const { model } = req;
    const { system, messages } = toAnthropicConversation(req.messages);
    const answer = await postModelApi({
      api: 'Anthropic',
      url,
      headers: { 'x-api-key': apiKey, 'anthropic-version': ANTHROPIC_VERSION },
      body: {
        model: model.model,
        max_tokens: model.maxTokens,
        ...(system ? { system } : {}),
        messages,
        ...(req.tools.length > 0 ? { tools: req.tools.map(toAnthropicTool) } : {}),
        ...(model.temperature === undefined ? {} : { temperature: model.temperature }),
      },
      responseSchema: MessageResponseSchema,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      ...(req.signal ? { signal: req.signal } : {}),
      fetchImpl: options.fetchImpl ?? fetch,
      secrets: [apiKey],
    });
    const texts: string[] = [];
    const toolCalls: ToolCall[] = [];
    for (const block of answer.content) {
      if ('text' in block) texts.push(block.text);
      else if ('input' in block) toolCalls.push({ id: block.id, name: block.name, arguments: block.input });
    }
    const usage = answer.usage;
    return {
      // With citations one answer is split into several text blocks that read as one text, hence no separator.
      content: texts.length > 0 ? texts.join('') : null,
      toolCalls,
      usage: {
        // Cached prompt tokens are reported apart from `input_tokens`; token budgets must see them all.
        inputTokens:
          (usage?.input_tokens ?? 0) +
          (usage?.cache_creation_input_tokens ?? 0) +
          (usage?.cache_read_input_tokens ?? 0),
        outputTokens: usage?.output_tokens ?? 0,
      },
      finishReason: answer.stop_reason ?? null,
    };
  };
}

/**
 * Maps the conversation to Messages API turns. System messages become the top-level `system`
 * text; tool results become `tool_result` blocks in a user turn; consecutive same-role turns are
 * merged, because the API expects the results of all tool calls of one assistant turn together in the
 * next user turn.
 */
function toAnthropicConversation(conversation: ChatMessage[]): {
  system: string;
  messages: AnthropicMessage[];
} {
  const system: string[] = [];
  const messages: AnthropicMessage[] = [];
  const append = (role: AnthropicMessage['role'], blocks: ContentBlock[]): void => {
    if (blocks.length === 0) return;
    const last = messages.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const message of conversation) {
    switch (message.role) {
      case 'system':
        system.push(message.content);
        break;
      case 'user':
        append('user', textBlocks(message.content));
        break;
      case 'assistant':
        append('assistant', [
          ...textBlocks(message.content),
          ...(message.toolCalls ?? []).map((call): ContentBlock => ({
            type: 'tool_use',
            id: call.id,
            name: call.name,
            input: toolInput(call.arguments),
          })),
        ]);
        break;
      case 'tool':
        append('user', [
          {
            type: 'tool_result',
            tool_use_id: message.toolCallId,
            content: message.content,
            ...(message.isError ? { is_error: true as const } : {}),
          },
        ]);
        break;
    }
  }
  return { system: system.join('\n\n'), messages };
}

/** The API rejects empty text blocks, so empty content becomes no block at all. */
function textBlocks(text: string | null): ContentBlock[] {
  return text ? [{ type: 'text', text }] : [];
}

/**
 * `tool_use.input` must be an object. Claude only produces objects; anything else can only come from
 * a transcript written by another model, and the tool result that follows already tells the model
 * what was wrong with it.
 */
function toolInput(args: unknown): Record<string, unknown> {
  return typeof args === 'object' && args !== null && !Array.isArray(args)
    ? (args as Record<string, unknown>)
    : {};
}

function toAnthropicTool(tool: ModelToolSpec): Record<string, unknown> {
  return { name: tool.name, description: tool.description, input_schema: tool.parameters };
}
