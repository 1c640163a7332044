/**
 * The Anthropic Messages API provider. The Messages API differs from chat completions in ways the
 * mapping below has to bridge: the system prompt is a top-level field, tool calls and tool results
 * are content blocks, and tool results travel inside a user turn.
 */
import { z } from 'zod';
import type { ChatMessage, ToolCall } from '../../shared/conversation';
import type { CallModelOutput, ModelChoice, ModelToolSpec } from '../../shared/model';
import type { ModelApiRequest, ModelEventStream } from './errors';
import { modelNotConfigured, postModelApi, streamModelApi } from './errors';
import type { ModelDelta, ModelProvider, ProviderRequest } from './provider';
import { objectRootSchema, outputName } from './structured-output';

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

/** A Messages API answer as this provider reads it. */
type MessageResponse = z.infer<typeof MessageResponseSchema>;

const StreamUsageSchema = z
  .object({
    input_tokens: z.number().nullish(),
    output_tokens: z.number().nullish(),
    cache_creation_input_tokens: z.number().nullish(),
    cache_read_input_tokens: z.number().nullish(),
  })
  .nullish();

/** The events of a streamed answer (`stream: true`), as documented; `ping` and unknown events are skipped. */
const StreamEventSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('message_start'),
    message: z.object({ usage: StreamUsageSchema, stop_reason: z.string().nullish() }),
  }),
  z.object({
    type: z.literal('content_block_start'),
    index: z.number(),
    content_block: z.union([
      z.object({ type: z.literal('text'), text: z.string().nullish() }),
      z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string() }),
      z.object({ type: z.string() }),
    ]),
  }),
  z.object({
    type: z.literal('content_block_delta'),
    index: z.number(),
    delta: z.union([
      z.object({ type: z.literal('text_delta'), text: z.string() }),
      z.object({ type: z.literal('input_json_delta'), partial_json: z.string() }),
      z.object({ type: z.string() }),
    ]),
  }),
  z.object({ type: z.literal('content_block_stop'), index: z.number() }),
  z.object({
    type: z.literal('message_delta'),
    delta: z.object({ stop_reason: z.string().nullish() }).nullish(),
    usage: StreamUsageSchema,
  }),
  z.object({ type: z.literal('message_stop') }),
  z.object({ type: z.literal('error'), error: z.object({ type: z.string().nullish() }).nullish() }),
]);

const STREAM_EVENT_TYPES = new Set<string>(StreamEventSchema.options.map((o) => o.shape.type.value));

/** What each error type of an `error` event would have come as before the stream: its HTTP status. */
const ERROR_EVENT_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

/** Creates a provider that calls `POST {baseUrl}/v1/messages`. */
export function createAnthropicProvider(
  options: AnthropicProviderOptions = {},
): ModelProvider<AnthropicModelChoice> {
  const apiKey = options.apiKey ?? '';
  const url = `${(options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '')}/v1/messages`;
  return async (req) => {
    if (!apiKey) throw modelNotConfigured('Anthropic', 'no API key; set one in the worker configuration.');
    const { body, answerTool } = anthropicRequest(req);
    const request: ModelApiRequest<MessageResponse> = {
      api: 'Anthropic',
      url,
      headers: { 'x-api-key': apiKey, 'anthropic-version': ANTHROPIC_VERSION },
      body,
      responseSchema: MessageResponseSchema,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      ...(req.signal ? { signal: req.signal } : {}),
      fetchImpl: options.fetchImpl ?? fetch,
      secrets: [apiKey],
    };
    const { onDelta } = req;
    if (!onDelta) return toOutput(await postModelApi(request), answerTool);
    const answer = await streamModelApi({ ...request, body: { ...body, stream: true } });
    if ('json' in answer) {
      // A gateway that does not stream answered whole: the answer is one piece.
      const blocks = answer.json.content.map((block): StreamedBlock => {
        if ('text' in block) return { type: 'text', text: block.text };
        if ('input' in block)
          return { type: 'tool_use', id: block.id, name: block.name, json: '', input: block.input };
        return { type: 'other' };
      });
      const deltas = new DeltaWriter(onDelta, answerTool);
      blocks.forEach((block, i) => {
        deltas.start(i, block);
        if (block.type === 'text') deltas.text(block.text);
        if (block.type === 'tool_use') deltas.json(i, JSON.stringify(block.input));
      });
      return toOutput(answer.json, answerTool);
    }
    return toOutput(await readStream(answer.stream, new DeltaWriter(onDelta, answerTool)), answerTool);
  };
}

/** A content block being streamed. */
type StreamedBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; json: string; input?: unknown }
  | { type: 'other' };

/**
 * Turns content blocks into deltas: text as `text`; a tool call as `tool_call` deltas indexed by its
 * position among the tool calls; the answer tool's input (structured output) as `text`, since it is
 * the answer: its JSON as the model writes it, while the turn's content is that JSON re-serialized
 * (and unwrapped from `{ value }` when the schema's root is not an object).
 */
class DeltaWriter {
  private readonly calls = new Map<number, number>();
  private readonly answers = new Set<number>();

  constructor(
    private readonly onDelta: (delta: ModelDelta) => void,
    private readonly answerTool: AnswerTool | undefined,
  ) {}

  start(index: number, block: StreamedBlock): void {
    if (block.type !== 'tool_use') return;
    if (block.name === this.answerTool?.name) {
      this.answers.add(index);
      return;
    }
    const position = this.calls.size;
    this.calls.set(index, position);
    this.emit({ kind: 'tool_call', index: position, id: block.id, name: block.name, args: '' });
  }

  text(text: string): void {
    if (text) this.emit({ kind: 'text', text });
  }

  json(index: number, partial: string): void {
    if (!partial) return;
    if (this.answers.has(index)) this.emit({ kind: 'text', text: partial });
    const position = this.calls.get(index);
    if (position !== undefined) this.emit({ kind: 'tool_call', index: position, args: partial });
  }

  private emit(delta: ModelDelta): void {
    try {
      this.onDelta(delta);
    } catch {
      // A watcher's failure is its own: it must not fail the model call.
    }
  }
}

/** Reads a streamed answer, passing each piece to `deltas`, into the answer the same call without streaming returns. */
async function readStream(stream: ModelEventStream, deltas: DeltaWriter): Promise<Answer> {
  const blocks = new Map<number, StreamedBlock>();
  let usage: NonNullable<MessageResponse['usage']> = {};
  let stopReason: string | null = null;
  let started = false;
  let stopped = false;
  let events = 0;
  const mergeUsage = (next: z.infer<typeof StreamUsageSchema>) => {
    // `message_delta` usage counts are cumulative; a field it leaves out keeps `message_start`'s.
    for (const [key, value] of Object.entries(next ?? {})) {
      if (typeof value === 'number') usage = { ...usage, [key]: value };
    }
  };
  for await (const event of stream.events) {
    if (event.event === 'ping' || event.data.trim() === '') continue;
    const parsed = stream.parse(event.data, z.object({ type: z.string() }).loose());
    events++;
    if (!STREAM_EVENT_TYPES.has(parsed.type)) continue;
    const data = stream.parse(event.data, StreamEventSchema);
    switch (data.type) {
      case 'error': {
        const status = ERROR_EVENT_STATUS[data.error?.type ?? ''] ?? 500;
        throw stream.apiError(status, event.data);
      }
      case 'message_start':
        started = true;
        mergeUsage(data.message.usage);
        stopReason = data.message.stop_reason ?? null;
        break;
      case 'content_block_start': {
        const b = data.content_block;
        const block: StreamedBlock =
          b.type === 'text' && 'text' in b
            ? { type: 'text', text: b.text ?? '' }
            : b.type === 'tool_use' && 'id' in b
              ? { type: 'tool_use', id: b.id, name: b.name, json: '' }
              : { type: 'other' };
        blocks.set(data.index, block);
        deltas.start(data.index, block);
        if (block.type === 'text') deltas.text(block.text);
        break;
      }
      case 'content_block_delta': {
        const block = blocks.get(data.index);
        if (!block)
          throw stream.badResponse(`content_block_delta for block ${data.index}, which never started`);
        const d = data.delta;
        if (block.type === 'text' && d.type === 'text_delta' && 'text' in d) {
          block.text += d.text;
          deltas.text(d.text);
        } else if (block.type === 'tool_use' && d.type === 'input_json_delta' && 'partial_json' in d) {
          block.json += d.partial_json;
          deltas.json(data.index, d.partial_json);
        }
        break;
      }
      case 'content_block_stop':
        break;
      case 'message_delta':
        if (data.delta?.stop_reason) stopReason = data.delta.stop_reason;
        mergeUsage(data.usage);
        break;
      case 'message_stop':
        stopped = true;
        break;
    }
    if (stopped) break;
  }
  if (!stopped) {
    throw stream.cut(
      events === 0
        ? 'before any event'
        : `after ${events} events without message_stop${started ? '' : ' (and without message_start)'}`,
    );
  }
  const content = [...blocks.entries()]
    .sort(([a], [b]) => a - b)
    .flatMap(([, block]): Answer['content'] => {
      if (block.type === 'text') return [{ type: 'text', text: block.text }];
      if (block.type === 'other') return [{ type: 'other' }];
      return [{ type: 'tool_use', id: block.id, name: block.name, input: toolInputOf(block.json) }];
    });
  return { content, stop_reason: stopReason, usage };
}

/**
 * A streamed tool call's input from its JSON pieces: `{}` when there were none, as without
 * streaming. JSON that does not parse (the token limit cut the call) stays raw, as the OpenAI provider
 * keeps such arguments, so the workflow can tell the model what it sent.
 */
function toolInputOf(json: string): unknown {
  if (json.trim() === '') return {};
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return json;
  }
}

/** An answer as {@link toOutput} reads it: a streamed tool call's input may be raw text. */
interface Answer {
  content: (
    | { type: 'text'; text: string }
    | { type: 'tool_use'; id: string; name: string; input: unknown }
    | { type: string }
  )[];
  stop_reason?: string | null | undefined;
  usage?: MessageResponse['usage'];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The provider's answer from a Messages API answer, streamed or not. */
function toOutput(answer: Answer, answerTool: AnswerTool | undefined): CallModelOutput {
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  let structured: string | undefined;
  for (const block of answer.content) {
    if ('text' in block) texts.push(block.text);
    else if ('input' in block && block.name === answerTool?.name) {
      const { input } = block;
      structured = isRecord(input)
        ? JSON.stringify(answerTool.wrapped ? input.value : input)
        : typeof input === 'string'
          ? input
          : JSON.stringify(input);
    } else if ('input' in block) toolCalls.push({ id: block.id, name: block.name, arguments: block.input });
  }
  const usage = answer.usage;
  return {
    // The answer tool's input is the answer when no other tool is called (the workflow validates it).
    // With citations one answer is split into several text blocks that read as one text, hence no separator.
    content:
      structured !== undefined && toolCalls.length === 0
        ? structured
        : texts.length > 0
          ? texts.join('')
          : null,
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
}

/** The answer tool of a run with an output schema: its name, and whether its input wraps the answer in `value`. */
export interface AnswerTool {
  name: string;
  wrapped: boolean;
}

/**
 * The body of one Messages API request. With an output schema the answer is asked for by a tool
 * whose input schema is the answer's: forced (`tool_choice: { type: "tool" }`) when no other tool is
 * offered, else required among them (`{ type: "any" }`), so the model either calls a tool or answers
 * through the answer tool.
 */
export function anthropicRequest(req: ProviderRequest<AnthropicModelChoice>): {
  body: Record<string, unknown>;
  answerTool?: AnswerTool;
} {
  const { model, output } = req;
  const { system, messages } = toAnthropicConversation(req.messages);
  const tools = req.tools.map(toAnthropicTool);
  let answerTool: AnswerTool | undefined;
  let toolChoice: Record<string, unknown> | undefined;
  if (output) {
    const name = outputName(
      output,
      req.tools.map((t) => t.name),
    );
    const { schema, wrapped } = objectRootSchema(output);
    tools.push({
      name,
      description: 'Give your final answer: the input of this tool is the answer.',
      input_schema: schema,
    });
    answerTool = { name, wrapped };
    toolChoice = req.tools.length > 0 ? { type: 'any' } : { type: 'tool', name };
  }
  return {
    body: {
      model: model.model,
      max_tokens: model.maxTokens,
      ...(system ? { system } : {}),
      messages,
      ...(tools.length > 0 ? { tools } : {}),
      ...(toolChoice ? { tool_choice: toolChoice } : {}),
      ...(model.temperature === undefined ? {} : { temperature: model.temperature }),
    },
    ...(answerTool ? { answerTool } : {}),
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
