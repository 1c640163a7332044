/**
 * The OpenAI Chat Completions provider. Speaks the wire format that OpenAI defined and vLLM, Ollama,
 * llama.cpp server and most gateways copy, so one provider serves all of them through `baseUrl`.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ChatMessage, ToolCall } from '../../shared/conversation';
import type { CallModelOutput, ModelChoice, ModelToolSpec } from '../../shared/model';
import type { ModelApiRequest, ModelEventStream } from './errors';
import { postModelApi, streamModelApi } from './errors';
import type { ModelDelta, ModelProvider, ProviderRequest } from './provider';
import { objectRootSchema, openAIStrictCompatible, outputName, unwrapAnswer } from './structured-output';

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

/** A chat completion as this provider reads it. */
type ChatCompletion = z.infer<typeof ChatCompletionSchema>;

/**
 * One chunk of a streamed chat completion (`stream: true`), as documented; the last one, asked for
 * with `stream_options.include_usage`, has no choices and the usage. A server may report an error in
 * the stream instead.
 */
const ChunkSchema = z.object({
  choices: z
    .array(
      z.object({
        index: z.number().nullish(),
        delta: z
          .object({
            content: z.string().nullish(),
            refusal: z.string().nullish(),
            tool_calls: z
              .array(
                z.object({
                  index: z.number().nullish(),
                  id: z.string().nullish(),
                  function: z
                    .object({ name: z.string().nullish(), arguments: z.unknown().optional() })
                    .nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: z.object({ prompt_tokens: z.number().nullish(), completion_tokens: z.number().nullish() }).nullish(),
  error: z.unknown().optional(),
});

/** Creates a provider that calls `POST {baseUrl}/chat/completions`. */
export function createOpenAIProvider(options: OpenAIProviderOptions = {}): ModelProvider<OpenAIModelChoice> {
  const apiKey = options.apiKey ?? '';
  const url = `${(options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '')}/chat/completions`;
  return async (req) => {
    const body = openAIRequestBody(req);
    const request: ModelApiRequest<ChatCompletion> = {
      api: 'OpenAI',
      url,
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      body,
      responseSchema: ChatCompletionSchema,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      ...(req.signal ? { signal: req.signal } : {}),
      fetchImpl: options.fetchImpl ?? fetch,
      secrets: [apiKey],
    };
    const { onDelta } = req;
    if (!onDelta) return toOutput(await postModelApi(request), req);
    const answer = await streamModelApi({
      ...request,
      body: { ...body, stream: true, stream_options: { include_usage: true } },
    });
    if ('json' in answer) {
      // A server that does not stream answered whole: the answer is one piece.
      const completion = answer.json;
      const { message } = completion.choices[0];
      const text = message.content ?? message.refusal;
      if (text) emit(onDelta, { kind: 'text', text });
      (message.tool_calls ?? []).forEach((call, index) => {
        const args = call.function.arguments;
        emit(onDelta, {
          kind: 'tool_call',
          index,
          ...(call.id ? { id: call.id } : {}),
          name: call.function.name,
          args: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
        });
      });
      return toOutput(completion, req);
    }
    return toOutput(await readStream(answer.stream, onDelta), req);
  };
}

/** Calls a watcher, which must not be able to fail the model call. */
function emit(onDelta: (delta: ModelDelta) => void, delta: ModelDelta): void {
  try {
    onDelta(delta);
  } catch {
    // A watcher's failure is its own.
  }
}

/** A tool call being streamed: the pieces of its arguments so far (an object from servers that send one whole). */
interface StreamedCall {
  id: string | null;
  name: string | null;
  arguments: unknown;
}

/**
 * Reads a streamed completion, passing each piece of the first choice to `onDelta`, into the
 * completion the same call without streaming would have returned.
 */
async function readStream(
  stream: ModelEventStream,
  onDelta: (delta: ModelDelta) => void,
): Promise<ChatCompletion> {
  let content: string | null = null;
  let refusal: string | null = null;
  let finishReason: string | null = null;
  let usage: ChatCompletion['usage'] = null;
  const calls: StreamedCall[] = [];
  // The server's index of each call → its position in the answer.
  const positions = new Map<number, number>();
  let done = false;
  let chunks = 0;
  for await (const event of stream.events) {
    if (event.data.trim() === '[DONE]') {
      done = true;
      break;
    }
    if (event.data.trim() === '') continue;
    const chunk = stream.parse(event.data, ChunkSchema);
    chunks++;
    if (chunk.error !== undefined && chunk.error !== null) {
      // OpenAI and vLLM report a failure after the 200 as an `error` chunk: a server-side error.
      const status =
        typeof chunk.error === 'object' && 'code' in chunk.error && typeof chunk.error.code === 'number'
          ? chunk.error.code
          : 500;
      throw stream.apiError(status >= 400 && status <= 599 ? status : 500, event.data);
    }
    if (chunk.usage) usage = chunk.usage;
    const choice = (chunk.choices ?? []).find((c) => (c.index ?? 0) === 0);
    if (!choice) continue;
    if (choice.finish_reason) finishReason = choice.finish_reason;
    const delta = choice.delta;
    if (!delta) continue;
    if (typeof delta.content === 'string') {
      content = (content ?? '') + delta.content;
      if (delta.content) emit(onDelta, { kind: 'text', text: delta.content });
    }
    if (typeof delta.refusal === 'string') {
      refusal = (refusal ?? '') + delta.refusal;
      if (delta.refusal) emit(onDelta, { kind: 'text', text: delta.refusal });
    }
    for (const piece of delta.tool_calls ?? []) {
      let position: number;
      if (typeof piece.index === 'number') {
        position = positions.get(piece.index) ?? calls.length;
        positions.set(piece.index, position);
      } else {
        // Servers that leave out `index` send each call whole, or its id with its first piece.
        position =
          calls.length === 0 || (piece.id && !calls.some((c) => c.id === piece.id))
            ? calls.length
            : calls.length - 1;
      }
      const call = (calls[position] ??= { id: null, name: null, arguments: undefined });
      const first = call.id === null && call.name === null && call.arguments === undefined;
      // The id and name come with the first piece; servers that repeat them later are not taken twice.
      const id = piece.id && call.id === null ? piece.id : undefined;
      const name = piece.function?.name && call.name === null ? piece.function.name : undefined;
      if (id) call.id = id;
      if (name) call.name = name;
      const args = piece.function?.arguments;
      let text = '';
      if (typeof args === 'string') {
        text = args;
        call.arguments = typeof call.arguments === 'string' ? call.arguments + args : args;
      } else if (args !== undefined && args !== null) {
        text = JSON.stringify(args);
        call.arguments = args;
      }
      if (text || first || id || name) {
        emit(onDelta, {
          kind: 'tool_call',
          index: position,
          ...(id ? { id } : {}),
          ...(name ? { name } : {}),
          args: text,
        });
      }
    }
  }
  // A server that sends no `[DONE]` (some compatible ones) is over once the choice has finished.
  if (!done && finishReason === null) {
    throw stream.cut(
      chunks === 0 ? 'before any chunk' : `after ${chunks} chunks without a finish reason or [DONE]`,
    );
  }
  const toolCalls = calls.map((call, i) => {
    if (!call.name) throw stream.badResponse(`choices.0.delta.tool_calls: call ${i} has no function name`);
    return { id: call.id, function: { name: call.name, arguments: call.arguments } };
  });
  return {
    choices: [
      {
        message: {
          // Without streaming a tool-call turn has `content: null`; a stream may open it with "".
          content: content === '' && toolCalls.length > 0 ? null : content,
          refusal,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: finishReason,
      },
    ],
    usage,
  };
}

/** The provider's answer from a chat completion, streamed or not. */
function toOutput(completion: ChatCompletion, req: ProviderRequest<OpenAIModelChoice>): CallModelOutput {
  const [choice] = completion.choices;
  const content = choice.message.content;
  return {
    // A refusal arrives instead of content; surfacing it keeps the turn from looking empty.
    content:
      (content && req.output && objectRootSchema(req.output).wrapped ? unwrapAnswer(content) : content) ??
      choice.message.refusal ??
      null,
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
}

/**
 * The body of one chat completion request. With an output schema the answer is asked for as
 * `response_format: json_schema` (strict when the schema meets strict mode's rules; a root that is
 * not an object wrapped in `{ value }`, as the API requires); tool calls stay possible, and only
 * the final answer is held to the schema.
 */
export function openAIRequestBody(req: ProviderRequest<OpenAIModelChoice>): Record<string, unknown> {
  const { model, output } = req;
  return {
    model: model.model,
    messages: req.messages.map(toOpenAIMessage),
    // OpenAI rejects an empty `tools` array, so no tools means no field.
    ...(req.tools.length > 0 ? { tools: req.tools.map(toOpenAITool) } : {}),
    ...(model.temperature === undefined ? {} : { temperature: model.temperature }),
    ...(model.maxTokens === undefined ? {} : { max_tokens: model.maxTokens }),
    ...(output ? { response_format: responseFormat(output) } : {}),
  };
}

function responseFormat(output: Record<string, unknown>): Record<string, unknown> {
  const { schema } = objectRootSchema(output);
  return {
    type: 'json_schema',
    json_schema: { name: outputName(output), schema, strict: openAIStrictCompatible(schema) },
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
