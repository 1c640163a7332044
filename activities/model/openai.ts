/**
 * The OpenAI Chat Completions provider. Speaks the wire format that OpenAI defined and vLLM, Ollama,
 * llama.cpp server and most gateways copy, so one provider serves all of them through `baseUrl`.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ChatMessage, ToolCall } from '../../shared/conversation';
import type { ModelChoice, ModelToolSpec } from '../../shared/model';
import { postModelApi } from './errors';
import type { ModelProvider } from './provider';

/** The model choice this provider serves. */
export type OpenAIModelChoice = Extract<ModelChoice, { provider: 'openai' }>;

/** Where and how to reach an OpenAI-compatible API. */
export interface OpenAIProviderOptions {
  /** Sent as a Bearer token; leave empty for local servers (Ollama, llama.cpp) that take none. */
  apiKey?: string;
  /** Up to and including the version segment; defaults to `https://api.openai.com/v1`. */
  baseUrl?: string;
  /** Per request; defaults to 10 minutes, as in OpenAI's own SDK, since long answers stream slowly. */
  timeoutMs?: number;
  /** Replaces the global `fetch`, for proxies and tests. */
  fetchImpl?: typeof fetch;
}

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';
const DEFAULT_TIMEOUT_MS = 600_000;

/** One choice of a chat completion, as documented; fields we do not read are left out. */
const ChoiceSchema = z.object({
  message: z.object({
    content: z.string().nullish(),
    refusal: z.string().nullish(),
    tool_calls: z
      .array(
        z.object({
          id: z.string().nullish(),
          // Some compatible servers send arguments as an object rather than a JSON string.
          function: z.object({ name: z.string(), arguments: z.unknown() }),
        }),
      )
      .nullish(),
  }),
  finish_reason: z.string().nullish(),
});
/** A chat completion; servers that report no usage count zero. */
const ChatCompletionSchema = z.object({
  // Only the first choice is read (we never ask for more); typed as a non-empty tuple so it is always there.
  choices: z.tuple([ChoiceSchema]).rest(ChoiceSchema),
  usage: z.object({ prompt_tokens: z.number().nullish(), completion_tokens: z.number().nullish() }).nullish(),
});

/** Creates a provider that calls `POST {baseUrl}/chat/completions`. */
export function createOpenAIProvider(options: OpenAIProviderOptions = {}): ModelProvider<OpenAIModelChoice> {
  const apiKey = options.apiKey ?? '';
  const url = `${(options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '')}/chat/completions`;
  return async (req) => {
    const { model } = req;
    const completion = await postModelApi({
      api: 'OpenAI',
      url,
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      body: {
        model: model.model,
        messages: req.messages.map(toOpenAIMessage),
        // OpenAI rejects an empty `tools` array, so no tools means no field.
        ...(req.tools.length > 0 ? { tools: req.tools.map(toOpenAITool) } : {}),
        ...(model.temperature === undefined ? {} : { temperature: model.temperature }),
        ...(model.maxTokens === undefined ? {} : { max_tokens: model.maxTokens }),
      },
      responseSchema: ChatCompletionSchema,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      ...(req.signal ? { signal: req.signal } : {}),
      fetchImpl: options.fetchImpl ?? fetch,
      secrets: [apiKey],
    });
    const [choice] = completion.choices;
    return {
      // A refusal arrives instead of content; surfacing it keeps the turn from looking empty.
      content: choice.message.content ?? choice.message.refusal ?? null,
      toolCalls: (choice.message.tool_calls ?? []).map((call): ToolCall => ({
        id: call.id || `call_${randomUUID()}`,
        name: call.function.name,
        arguments: parseArguments(call.function.arguments),
      })),
      usage: {
        inputTokens: completion.usage?.prompt_tokens ?? 0,
        outputTokens: completion.usage?.completion_tokens ?? 0,
      },
      finishReason: choice.finish_reason ?? null,
    };
  };
}

function toOpenAIMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case 'system':
    case 'user':
      return { role: message.role, content: message.content };
    case 'assistant': {
      const toolCalls = message.toolCalls ?? [];
      if (toolCalls.length === 0) return { role: 'assistant', content: message.content ?? '' };
      return {
        role: 'assistant',
        content: message.content,
        tool_calls: toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          function: {
            name: call.name,
            // Arguments that did not parse were kept as raw text; send them back exactly as the model wrote them.
            arguments:
              typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
          },
        })),
      };
    }
    case 'tool':
      // The API has no error flag on tool results; the content already says what went wrong.
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

function toOpenAITool(tool: ModelToolSpec): Record<string, unknown> {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

/**
 * Tool arguments arrive as a JSON string the model wrote. Invalid JSON stays raw so the workflow can
 * tell the model what it sent; an empty string is how some local servers encode "no arguments".
 */
function parseArguments(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw ?? {};
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}
