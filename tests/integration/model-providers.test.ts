/**
 * The OpenAI and Anthropic providers against local HTTP servers that behave like the real APIs:
 * they validate the request the way the APIs do (path, headers, body shape, tool call/result
 * pairing) and answer with the response and error bodies from the APIs' documentation.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { z } from 'zod';
import type { ChatMessage } from '../../shared/conversation';
import type { CallModelOutput } from '../../shared/model';
import { createAnthropicProvider } from '../../activities/model/anthropic';
import { createOpenAIProvider } from '../../activities/model/openai';
import { ANTHROPIC_KEY, OPENAI_KEY, QUESTION, WEATHER_TOOL } from '../support/provider-fixtures';

const WRONG_KEY = 'sk-wrong-key-9876543210fedcba';

// ---------------------------------------------------------------------------------------------
// A local API server

interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

interface Reply {
  status: number;
  headers?: Record<string, string>;
  /** Sent as JSON, or verbatim when a string. */
  body: unknown;
}

/** A running fake API: records requests, validates them with `check`, answers with `reply` ('hang' never answers). */
interface MockApi {
  url: string;
  requests: RecordedRequest[];
  reply: (req: RecordedRequest) => Reply | 'hang';
  close: () => Promise<void>;
}

async function startMockApi(check: (req: RecordedRequest) => Reply | undefined): Promise<MockApi> {
  const server = http.createServer((incoming, res) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Kept as text; `check` rejects it like the API would.
      }
      const req: RecordedRequest = {
        method: incoming.method ?? '',
        path: incoming.url ?? '',
        headers: incoming.headers,
        body,
      };
      api.requests.push(req);
      const reply = check(req) ?? api.reply(req);
      if (reply === 'hang') return;
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const api: MockApi = {
    url: `http://127.0.0.1:${port}`,
    requests: [],
    reply: () => ({ status: 500, body: { error: { message: 'test set no reply' } } }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return api;
}

/** A port nothing listens on: bind one, then free it. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApplicationFailure);
  return error as ApplicationFailure;
}

async function until(predicate: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not met in 5 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Feeds a provider's tool-call turn back as the assistant message plus one tool result per call. */
function withToolResults(
  conversation: ChatMessage[],
  turn: CallModelOutput,
  results: Record<string, { content: string; isError?: boolean }>,
): ChatMessage[] {
  return [
    ...conversation,
    { role: 'assistant', content: turn.content, toolCalls: turn.toolCalls },
    ...turn.toolCalls.map((call): ChatMessage => {
      const result = results[call.id];
      if (!result) throw new Error(`no result prepared for ${call.id}`);
      return { role: 'tool', toolCallId: call.id, name: call.name, ...result };
    }),
  ];
}

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions, as documented at platform.openai.com/docs/api-reference/chat

const OpenAIToolCallSchema = z.strictObject({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.strictObject({ name: z.string().min(1), arguments: z.string() }),
});
const OpenAIRequestSchema = z.strictObject({
  model: z.string().min(1),
  messages: z
    .array(
      z.discriminatedUnion('role', [
        z.strictObject({ role: z.literal('system'), content: z.string() }),
        z.strictObject({ role: z.literal('user'), content: z.string() }),
        z.strictObject({
          role: z.literal('assistant'),
          content: z.string().nullable(),
          tool_calls: z.array(OpenAIToolCallSchema).min(1).optional(),
        }),
        z.strictObject({ role: z.literal('tool'), tool_call_id: z.string().min(1), content: z.string() }),
      ]),
    )
    .min(1),
  tools: z
    .array(
      z.strictObject({
        type: z.literal('function'),
        function: z.strictObject({
          name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'string does not match pattern'),
          description: z.string().optional(),
          parameters: z.looseObject({ type: z.literal('object') }),
        }),
      }),
    )
    .min(1)
    .optional(),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.number().int().positive().optional(),
});

function openAIError(status: number, message: string, code: string | null = null): Reply {
  return { status, body: { error: { message, type: 'invalid_request_error', param: null, code } } };
}

/** What OpenAI checks before it runs the model. */
function checkOpenAIRequest(req: RecordedRequest): Reply | undefined {
  if (req.method !== 'POST' || req.path !== '/v1/chat/completions') {
    return openAIError(404, `Invalid URL (${req.method} ${req.path})`);
  }
  const auth = req.headers.authorization;
  if (auth !== undefined && auth !== `Bearer ${OPENAI_KEY}`) {
    // Worse than the real API, which masks the middle of the key: this one echoes it whole.
    return openAIError(
      401,
      `Incorrect API key provided: ${auth.replace(/^Bearer /, '')}. You can find your API key at https://platform.openai.com/account/api-keys.`,
      'invalid_api_key',
    );
  }
  if (!req.headers['content-type']?.startsWith('application/json')) {
    return openAIError(400, 'We could not parse the JSON body of your request.');
  }
  const parsed = OpenAIRequestSchema.safeParse(req.body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return openAIError(400, `Invalid '${issue.path.join('.')}': ${issue.message}.`);
  }
  // Every tool call must be answered by tool messages right after it, and only tool calls may be answered.
  let pending = new Set<string>();
  for (const message of parsed.data.messages) {
    if (message.role === 'tool') {
      if (!pending.delete(message.tool_call_id)) {
        return openAIError(
          400,
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        );
      }
      continue;
    }
    if (pending.size > 0) break;
    if (message.role === 'assistant' && message.tool_calls)
      pending = new Set(message.tool_calls.map((c) => c.id));
  }
  if (pending.size > 0) {
    return openAIError(
      400,
      `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending].join(', ')}`,
    );
  }
  return undefined;
}

function openAICompletion(
  message: Record<string, unknown>,
  finishReason: string,
  usage: Record<string, number> | null = { prompt_tokens: 82, completion_tokens: 17, total_tokens: 99 },
): Reply {
  return {
    status: 200,
    body: {
      id: 'chatcmpl-abc123',
      object: 'chat.completion',
      created: 1699896916,
      model: 'gpt-4o-mini-2024-07-18',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', refusal: null, ...message },
          logprobs: null,
          finish_reason: finishReason,
        },
      ],
      ...(usage ? { usage } : {}),
      system_fingerprint: 'fp_44709d6fcb',
    },
  };
}

const OPENAI_TOOL_TURN = openAICompletion(
  {
    content: null,
    tool_calls: [
      {
        id: 'call_paris',
        type: 'function',
        function: { name: 'get_weather', arguments: '{\n"city": "Paris"\n}' },
      },
      {
        id: 'call_rome',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city": "Rome", "unit": "celsius"}' },
      },
    ],
  },
  'tool_calls',
);

describe('OpenAI-compatible provider', () => {
  let api: MockApi;
  const openai = () => createOpenAIProvider({ apiKey: OPENAI_KEY, baseUrl: `${api.url}/v1` });
  const choice = { provider: 'openai' as const, model: 'gpt-4o-mini', temperature: 0.2, maxTokens: 512 };

  beforeAll(async () => {
    api = await startMockApi(checkOpenAIRequest);
  });
  afterAll(() => api.close());
  beforeEach(() => {
    api.requests.length = 0;
  });

  test('a tool-call turn: request in the documented format, tool calls parsed', async () => {
    api.reply = () => OPENAI_TOOL_TURN;
    const out = await openai()({ model: choice, messages: QUESTION, tools: [WEATHER_TOOL] });

    expect(api.requests).toHaveLength(1);
    const req = api.requests[0]!;
    expect(req.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(req.body).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You are a weather assistant.' },
        { role: 'user', content: 'Weather in Paris and Rome?' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Current weather for a city',
            parameters: WEATHER_TOOL.parameters,
          },
        },
      ],
      temperature: 0.2,
      max_tokens: 512,
    });
    expect(out).toEqual({
      content: null,
      toolCalls: [
        { id: 'call_paris', name: 'get_weather', arguments: { city: 'Paris' } },
        { id: 'call_rome', name: 'get_weather', arguments: { city: 'Rome', unit: 'celsius' } },
      ],
      usage: { inputTokens: 82, outputTokens: 17 },
      finishReason: 'tool_calls',
    });
  });

  test('round trip: tool results go back as tool messages and the final text turn is returned', async () => {
    api.reply = () => OPENAI_TOOL_TURN;
    const first = await openai()({ model: choice, messages: QUESTION, tools: [WEATHER_TOOL] });

    api.reply = () =>
      openAICompletion({ content: 'Paris is 18°C and sunny; the Rome forecast is unavailable.' }, 'stop', {
        prompt_tokens: 140,
        completion_tokens: 15,
        total_tokens: 155,
      });
    const conversation = withToolResults(QUESTION, first, {
      call_paris: { content: '18°C, sunny' },
      call_rome: { content: 'weather service timed out', isError: true },
    });
    const final = await openai()({ model: choice, messages: conversation, tools: [WEATHER_TOOL] });

    expect(api.requests).toHaveLength(2);
    expect((api.requests[1]!.body as { messages: unknown }).messages).toEqual([
      { role: 'system', content: 'You are a weather assistant.' },
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_paris',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
          {
            id: 'call_rome',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Rome","unit":"celsius"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_paris', content: '18°C, sunny' },
      { role: 'tool', tool_call_id: 'call_rome', content: 'weather service timed out' },
    ]);
    expect(final).toEqual({
      content: 'Paris is 18°C and sunny; the Rome forecast is unavailable.',
      toolCalls: [],
      usage: { inputTokens: 140, outputTokens: 15 },
      finishReason: 'stop',
    });
  });

  test('arguments that are not valid JSON stay raw, and go back to the API unchanged', async () => {
    const truncated = '{"city": "Par';
    api.reply = () =>
      openAICompletion(
        {
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: truncated } },
          ],
        },
        'length',
      );
    const first = await openai()({ model: choice, messages: QUESTION, tools: [WEATHER_TOOL] });
    expect(first.toolCalls).toEqual([{ id: 'call_1', name: 'get_weather', arguments: truncated }]);
    expect(first.finishReason).toBe('length');

    api.reply = () => openAICompletion({ content: 'Sorry, let me try again.' }, 'stop');
    const conversation = withToolResults(QUESTION, first, {
      call_1: { content: 'Invalid arguments: not JSON', isError: true },
    });
    await openai()({ model: choice, messages: conversation, tools: [WEATHER_TOOL] });
    const sent = (
      api.requests[1]!.body as { messages: { tool_calls?: { function: { arguments: string } }[] }[] }
    ).messages;
    expect(sent[2]!.tool_calls![0]!.function.arguments).toBe(truncated);
  });

  test('a server that reports no usage counts zero; no key means no Authorization header (Ollama)', async () => {
    api.reply = () => openAICompletion({ content: 'Hello!' }, 'stop', null);
    const ollama = createOpenAIProvider({ baseUrl: `${api.url}/v1/` });
    const out = await ollama({
      model: { provider: 'openai', model: 'llama3.2' },
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [],
    });

    expect(out).toEqual({
      content: 'Hello!',
      toolCalls: [],
      usage: { inputTokens: 0, outputTokens: 0 },
      finishReason: 'stop',
    });
    const req = api.requests[0]!;
    expect(req.headers.authorization).toBeUndefined();
    // No tools, temperature or max tokens chosen: none sent (OpenAI rejects `tools: []`).
    expect(req.body).toEqual({ model: 'llama3.2', messages: [{ role: 'user', content: 'Hi' }] });
  });

  test('401 fails non-retryably, naming the provider and the API message, never the key', async () => {
    const provider = createOpenAIProvider({ apiKey: WRONG_KEY, baseUrl: `${api.url}/v1` });
    const failure = await failureOf(provider({ model: choice, messages: QUESTION, tools: [] }));

    expect(failure.type).toBe('ModelAuthError');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('OpenAI');
    expect(failure.message).toContain('401');
    expect(failure.message).toContain('Incorrect API key provided');
    expect(failure.message).not.toContain(WRONG_KEY);
    expect(JSON.stringify(failure.details)).not.toContain(WRONG_KEY);
  });

  test('400 from request validation fails non-retryably with the API message', async () => {
    const badTool = { ...WEATHER_TOOL, name: 'get weather' };
    const failure = await failureOf(openai()({ model: choice, messages: QUESTION, tools: [badTool] }));

    expect(failure.type).toBe('ModelBadRequest');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('400');
    expect(failure.message).toContain("Invalid 'tools.0.function.name'");
  });

  test('404 for an unknown model is non-retryable and points at the model name', async () => {
    api.reply = () =>
      openAIError(
        404,
        'The model `gpt-nope` does not exist or you do not have access to it.',
        'model_not_found',
      );
    const failure = await failureOf(
      openai()({ model: { ...choice, model: 'gpt-nope' }, messages: QUESTION, tools: [] }),
    );

    expect(failure.type).toBe('ModelBadRequest');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('The model `gpt-nope` does not exist');
    expect(failure.message).toContain('model name');
  });

  test.each([403, 422])('%i is non-retryable', async (status) => {
    api.reply = () => openAIError(status, `refused with ${status}`);
    const failure = await failureOf(openai()({ model: choice, messages: QUESTION, tools: [] }));
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain(`refused with ${status}`);
  });

  test('429 with Retry-After: 7 is retryable after 7 s', async () => {
    api.reply = () => ({
      status: 429,
      headers: { 'retry-after': '7', 'x-request-id': 'req_429' },
      body: {
        error: {
          message: 'Rate limit reached for requests',
          type: 'requests',
          param: null,
          code: 'rate_limit_exceeded',
        },
      },
    });
    const failure = await failureOf(openai()({ model: choice, messages: QUESTION, tools: [] }));

    expect(failure.type).toBe('ModelRateLimited');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBe(7000);
    expect(failure.message).toContain('Rate limit reached');
    expect(failure.details).toEqual([{ api: 'OpenAI', status: 429, requestId: 'req_429' }]);
  });

  test('429 without Retry-After waits for the exhausted limit to reset, not the others', async () => {
    api.reply = () => ({
      status: 429,
      headers: {
        'x-ratelimit-remaining-requests': '42',
        'x-ratelimit-reset-requests': '10m0s',
        'x-ratelimit-remaining-tokens': '0',
        'x-ratelimit-reset-tokens': '1m30s',
      },
      body: {
        error: {
          message: 'Rate limit reached for tokens',
          type: 'tokens',
          param: null,
          code: 'rate_limit_exceeded',
        },
      },
    });
    const failure = await failureOf(openai()({ model: choice, messages: QUESTION, tools: [] }));
    expect(failure.nextRetryDelay).toBe(90_000);
  });

  test('retry-after-ms takes precedence over Retry-After', async () => {
    api.reply = () => ({
      status: 429,
      headers: { 'retry-after-ms': '1500', 'retry-after': '2' },
      body: { error: { message: 'slow down' } },
    });
    const failure = await failureOf(openai()({ model: choice, messages: QUESTION, tools: [] }));
    expect(failure.nextRetryDelay).toBe(1500);
  });

  test('503 with an HTTP-date Retry-After is retryable after about that long', async () => {
    const at = new Date(Date.now() + 30_000).toUTCString();
    api.reply = () => ({
      status: 503,
      headers: { 'retry-after': at },
      body: '<html><body>Service Unavailable</body></html>',
    });
    const failure = await failureOf(openai()({ model: choice, messages: QUESTION, tools: [] }));

    expect(failure.type).toBe('ModelServerError');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('Service Unavailable');
    // HTTP dates have whole seconds, so up to one second is lost.
    expect(failure.nextRetryDelay).toBeGreaterThan(28_000);
    expect(failure.nextRetryDelay).toBeLessThanOrEqual(30_000);
  });

  test.each([408, 409, 500, 502, 504])('%i is retryable', async (status) => {
    api.reply = () => ({ status, body: { error: { message: `transient ${status}`, type: 'server_error' } } });
    const failure = await failureOf(openai()({ model: choice, messages: QUESTION, tools: [] }));
    expect(failure.type).toBe('ModelServerError');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBeUndefined();
  });

  test('a 200 in an unknown shape is a non-retryable ModelBadResponse', async () => {
    api.reply = () => ({ status: 200, body: { object: 'list', data: [] } });
    const failure = await failureOf(openai()({ model: choice, messages: QUESTION, tools: [] }));
    expect(failure.type).toBe('ModelBadResponse');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('choices');
  });

  test('a 200 whose body is not JSON is retryable', async () => {
    api.reply = () => ({ status: 200, body: '{"id": "chatcmpl-abc123", "choi' });
    const failure = await failureOf(openai()({ model: choice, messages: QUESTION, tools: [] }));
    expect(failure.type).toBe('ModelServerError');
    expect(failure.nonRetryable).toBe(false);
  });

  test('connection refused is a retryable ModelUnreachable', async () => {
    const port = await closedPort();
    const provider = createOpenAIProvider({ apiKey: OPENAI_KEY, baseUrl: `http://127.0.0.1:${port}/v1` });
    const failure = await failureOf(provider({ model: choice, messages: QUESTION, tools: [] }));

    expect(failure.type).toBe('ModelUnreachable');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('ECONNREFUSED');
    expect(failure.message).toContain(`127.0.0.1:${port}`);
  });

  test('no answer within timeoutMs is a retryable ModelUnreachable', async () => {
    api.reply = () => 'hang';
    const provider = createOpenAIProvider({ apiKey: OPENAI_KEY, baseUrl: `${api.url}/v1`, timeoutMs: 200 });
    const started = Date.now();
    const failure = await failureOf(provider({ model: choice, messages: QUESTION, tools: [] }));

    expect(Date.now() - started).toBeLessThan(5000);
    expect(failure.type).toBe('ModelUnreachable');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('did not answer within 200 ms');
  });

  test('aborting the signal rejects with the abort reason, not a model failure', async () => {
    api.reply = () => 'hang';
    const controller = new AbortController();
    const call = openai()({ model: choice, messages: QUESTION, tools: [], signal: controller.signal });
    await until(() => api.requests.length === 1);
    // Temporal aborts an activity's signal with a CancelledFailure; it must surface as is.
    const reason = new CancelledFailure('CANCELLED');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
  });
});

// ---------------------------------------------------------------------------------------------
// Anthropic Messages API, as documented at docs.anthropic.com/en/api/messages

const TextBlockSchema = z.strictObject({
  type: z.literal('text'),
  text: z.string().min(1, 'text content blocks must be non-empty'),
});
const AnthropicRequestSchema = z.strictObject({
  model: z.string().min(1),
  max_tokens: z.number().int().min(1),
  system: z.string().optional(),
  messages: z
    .array(
      z.discriminatedUnion('role', [
        z.strictObject({
          role: z.literal('user'),
          content: z.union([
            z.string(),
            z
              .array(
                z.discriminatedUnion('type', [
                  TextBlockSchema,
                  z.strictObject({
                    type: z.literal('tool_result'),
                    tool_use_id: z.string().min(1),
                    content: z.string(),
                    is_error: z.boolean().optional(),
                  }),
                ]),
              )
              .min(1),
          ]),
        }),
        z.strictObject({
          role: z.literal('assistant'),
          content: z.union([
            z.string(),
            z
              .array(
                z.discriminatedUnion('type', [
                  TextBlockSchema,
                  z.strictObject({
                    type: z.literal('tool_use'),
                    id: z.string().min(1),
                    name: z.string().min(1),
                    input: z.record(z.string(), z.unknown()),
                  }),
                ]),
              )
              .min(1),
          ]),
        }),
      ]),
    )
    .min(1),
  tools: z
    .array(
      z.strictObject({
        name: z
          .string()
          .regex(/^[a-zA-Z0-9_-]{1,128}$/, "String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"),
        description: z.string().optional(),
        input_schema: z.looseObject({ type: z.literal('object') }),
      }),
    )
    .optional(),
  temperature: z.number().min(0).max(1).optional(),
});

function anthropicError(status: number, type: string, message: string): Reply {
  return {
    status,
    headers: { 'request-id': 'req_011CSHoEeqs5C35K2UUqR7Fy' },
    body: { type: 'error', error: { type, message }, request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy' },
  };
}

/** What the Messages API checks before it runs the model. */
function checkAnthropicRequest(req: RecordedRequest): Reply | undefined {
  if (req.method !== 'POST' || req.path !== '/v1/messages')
    return anthropicError(404, 'not_found_error', 'Not Found');
  const key = req.headers['x-api-key'];
  if (key === undefined) return anthropicError(401, 'authentication_error', 'x-api-key header is required');
  if (key !== ANTHROPIC_KEY) return anthropicError(401, 'authentication_error', 'invalid x-api-key');
  if (req.headers['anthropic-version'] !== '2023-06-01') {
    return anthropicError(
      400,
      'invalid_request_error',
      'anthropic-version: header is required and must be a valid version',
    );
  }
  const parsed = AnthropicRequestSchema.safeParse(req.body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return anthropicError(400, 'invalid_request_error', `${issue.path.join('.')}: ${issue.message}`);
  }
  const { messages } = parsed.data;
  if (messages[0]!.role !== 'user')
    return anthropicError(400, 'invalid_request_error', 'messages: first message must use the "user" role');
  let previousToolUses: string[] = [];
  for (const [i, message] of messages.entries()) {
    if (i > 0 && messages[i - 1]!.role === message.role) {
      return anthropicError(
        400,
        'invalid_request_error',
        'messages: roles must alternate between "user" and "assistant"',
      );
    }
    const blocks = typeof message.content === 'string' ? [] : message.content;
    if (message.role === 'user') {
      const results = blocks.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []));
      const firstText = blocks.findIndex((b) => b.type === 'text');
      if (firstText !== -1 && firstText < results.length) {
        return anthropicError(
          400,
          'invalid_request_error',
          `messages.${i}: tool_result blocks must come before any text`,
        );
      }
      const missing = previousToolUses.filter((id) => !results.includes(id));
      const unexpected = results.filter((id) => !previousToolUses.includes(id));
      if (missing.length > 0) {
        return anthropicError(
          400,
          'invalid_request_error',
          `messages.${i}: tool_use ids were found without tool_result blocks immediately after: ${missing.join(', ')}`,
        );
      }
      if (unexpected.length > 0) {
        return anthropicError(
          400,
          'invalid_request_error',
          `messages.${i}: unexpected tool_use_id found in tool_result blocks: ${unexpected.join(', ')}`,
        );
      }
      previousToolUses = [];
    } else {
      previousToolUses = blocks.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
    }
  }
  return undefined;
}

function anthropicMessage(
  content: unknown[],
  stopReason: string,
  usage: Record<string, number> = { input_tokens: 472, output_tokens: 89 },
): Reply {
  return {
    status: 200,
    body: {
      id: 'msg_01Aq9w938a90dw8q',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5-20250929',
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage,
    },
  };
}

const ANTHROPIC_TOOL_TURN = anthropicMessage(
  [
    { type: 'text', text: "I'll check the weather in both cities." },
    { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { city: 'Paris' } },
    {
      type: 'tool_use',
      id: 'toolu_01B78x61mn23ab456789cd0',
      name: 'get_weather',
      input: { city: 'Rome', unit: 'celsius' },
    },
  ],
  'tool_use',
);

describe('Anthropic provider', () => {
  let api: MockApi;
  const anthropic = () => createAnthropicProvider({ apiKey: ANTHROPIC_KEY, baseUrl: api.url });
  const choice = {
    provider: 'anthropic' as const,
    model: 'claude-sonnet-4-5',
    temperature: 0.3,
    maxTokens: 1024,
  };

  beforeAll(async () => {
    api = await startMockApi(checkAnthropicRequest);
  });
  afterAll(() => api.close());
  beforeEach(() => {
    api.requests.length = 0;
  });

  test('a tool-call turn: headers, top-level system, tools and max_tokens sent; text and tool_use parsed', async () => {
    api.reply = () => ANTHROPIC_TOOL_TURN;
    const out = await anthropic()({ model: choice, messages: QUESTION, tools: [WEATHER_TOOL] });

    const req = api.requests[0]!;
    expect(req.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(req.headers['anthropic-version']).toBe('2023-06-01');
    expect(req.headers.authorization).toBeUndefined();
    expect(req.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      system: 'You are a weather assistant.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] }],
      tools: [
        {
          name: 'get_weather',
          description: 'Current weather for a city',
          input_schema: WEATHER_TOOL.parameters,
        },
      ],
      temperature: 0.3,
    });
    expect(out).toEqual({
      content: "I'll check the weather in both cities.",
      toolCalls: [
        { id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', arguments: { city: 'Paris' } },
        {
          id: 'toolu_01B78x61mn23ab456789cd0',
          name: 'get_weather',
          arguments: { city: 'Rome', unit: 'celsius' },
        },
      ],
      usage: { inputTokens: 472, outputTokens: 89 },
      finishReason: 'tool_use',
    });
  });

  test('round trip: tool results merge into one user turn with is_error, then the final text turn', async () => {
    api.reply = () => ANTHROPIC_TOOL_TURN;
    const first = await anthropic()({ model: choice, messages: QUESTION, tools: [WEATHER_TOOL] });

    api.reply = () =>
      anthropicMessage(
        [
          { type: 'text', text: 'Paris is 18°C and sunny. ' },
          { type: 'text', text: 'I could not get the Rome forecast.' },
        ],
        'end_turn',
        {
          input_tokens: 610,
          output_tokens: 25,
          cache_creation_input_tokens: 100,
          cache_read_input_tokens: 50,
        },
      );
    const conversation: ChatMessage[] = [
      ...withToolResults(QUESTION, first, {
        toolu_01A09q90qw90lq917835lq9: { content: '18°C, sunny' },
        toolu_01B78x61mn23ab456789cd0: { content: 'weather service timed out', isError: true },
      }),
      // A message the user sent into the running agent meanwhile: it must join the same user turn.
      { role: 'user', content: 'Answer briefly, please.' },
    ];
    const final = await anthropic()({ model: choice, messages: conversation, tools: [WEATHER_TOOL] });

    expect(api.requests).toHaveLength(2);
    const body = api.requests[1]!.body as { system: unknown; messages: unknown };
    expect(body.system).toBe('You are a weather assistant.');
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: "I'll check the weather in both cities." },
          {
            type: 'tool_use',
            id: 'toolu_01A09q90qw90lq917835lq9',
            name: 'get_weather',
            input: { city: 'Paris' },
          },
          {
            type: 'tool_use',
            id: 'toolu_01B78x61mn23ab456789cd0',
            name: 'get_weather',
            input: { city: 'Rome', unit: 'celsius' },
          },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', content: '18°C, sunny' },
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01B78x61mn23ab456789cd0',
            content: 'weather service timed out',
            is_error: true,
          },
          { type: 'text', text: 'Answer briefly, please.' },
        ],
      },
    ]);
    expect(final).toEqual({
      content: 'Paris is 18°C and sunny. I could not get the Rome forecast.',
      toolCalls: [],
      // Cache writes and reads are input tokens too.
      usage: { inputTokens: 760, outputTokens: 25 },
      finishReason: 'end_turn',
    });
  });

  test('several system messages join into the one top-level system prompt; blocks it does not know are skipped', async () => {
    api.reply = () =>
      anthropicMessage(
        [
          { type: 'thinking', thinking: 'The user greets me.', signature: 'EqQBCgIYAhIM' },
          { type: 'text', text: 'Bonjour !' },
        ],
        'end_turn',
      );
    const out = await anthropic()({
      model: { provider: 'anthropic', model: 'claude-sonnet-4-5', maxTokens: 64 },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: 'Hello' },
      ],
      tools: [],
    });

    expect(api.requests[0]!.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      system: 'Be brief.\n\nAnswer in French.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
    });
    expect(out.content).toBe('Bonjour !');
    expect(out.toolCalls).toEqual([]);
  });

  test('401 fails non-retryably, naming the provider and the API message, never the key', async () => {
    const provider = createAnthropicProvider({ apiKey: WRONG_KEY, baseUrl: api.url });
    const failure = await failureOf(provider({ model: choice, messages: QUESTION, tools: [] }));

    expect(failure.type).toBe('ModelAuthError');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('Anthropic');
    expect(failure.message).toContain('401');
    expect(failure.message).toContain('invalid x-api-key (authentication_error)');
    expect(failure.message).not.toContain(WRONG_KEY);
    expect(failure.details).toEqual([
      { api: 'Anthropic', status: 401, requestId: 'req_011CSHoEeqs5C35K2UUqR7Fy' },
    ]);
  });

  test('no API key configured: ModelNotConfigured, and no request is sent', async () => {
    const provider = createAnthropicProvider({ apiKey: '', baseUrl: api.url });
    const failure = await failureOf(provider({ model: choice, messages: QUESTION, tools: [] }));

    expect(failure.type).toBe('ModelNotConfigured');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('Anthropic');
    expect(api.requests).toHaveLength(0);
  });

  test('400 from request validation fails non-retryably with the API message', async () => {
    const badTool = { ...WEATHER_TOOL, name: 'get weather' };
    const failure = await failureOf(anthropic()({ model: choice, messages: QUESTION, tools: [badTool] }));

    expect(failure.type).toBe('ModelBadRequest');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('tools.0.name');
    expect(failure.message).toContain('invalid_request_error');
  });

  test.each([
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [413, 'request_too_large'],
  ])('%i %s is non-retryable', async (status, type) => {
    api.reply = () => anthropicError(status, type, `refused: ${type}`);
    const failure = await failureOf(anthropic()({ model: choice, messages: QUESTION, tools: [] }));
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain(`refused: ${type}`);
  });

  test('429 with retry-after: 7 is retryable after 7 s', async () => {
    api.reply = () => {
      const reply = anthropicError(
        429,
        'rate_limit_error',
        'Number of request tokens has exceeded your per-minute rate limit',
      );
      return { ...reply, headers: { ...reply.headers, 'retry-after': '7' } };
    };
    const failure = await failureOf(anthropic()({ model: choice, messages: QUESTION, tools: [] }));

    expect(failure.type).toBe('ModelRateLimited');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBe(7000);
  });

  test('429 without retry-after waits until the exhausted limit resets (RFC 3339)', async () => {
    const reset = new Date(Date.now() + 20_000).toISOString();
    api.reply = () => ({
      status: 429,
      headers: {
        'anthropic-ratelimit-requests-remaining': '49',
        'anthropic-ratelimit-requests-reset': new Date(Date.now() + 60_000).toISOString(),
        'anthropic-ratelimit-output-tokens-remaining': '0',
        'anthropic-ratelimit-output-tokens-reset': reset,
      },
      body: {
        type: 'error',
        error: { type: 'rate_limit_error', message: 'output tokens per minute exceeded' },
      },
    });
    const failure = await failureOf(anthropic()({ model: choice, messages: QUESTION, tools: [] }));
    expect(failure.nextRetryDelay).toBeGreaterThan(18_000);
    expect(failure.nextRetryDelay).toBeLessThanOrEqual(20_000);
  });

  test.each([
    [529, 'overloaded_error', 'Overloaded'],
    [500, 'api_error', 'Internal server error'],
    [503, 'api_error', 'Service unavailable'],
  ])('%i %s is retryable', async (status, type, message) => {
    api.reply = () => anthropicError(status, type, message);
    const failure = await failureOf(anthropic()({ model: choice, messages: QUESTION, tools: [] }));
    expect(failure.type).toBe('ModelServerError');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain(`${message} (${type})`);
  });

  test('connection refused is a retryable ModelUnreachable', async () => {
    const port = await closedPort();
    const provider = createAnthropicProvider({ apiKey: ANTHROPIC_KEY, baseUrl: `http://127.0.0.1:${port}` });
    const failure = await failureOf(provider({ model: choice, messages: QUESTION, tools: [] }));

    expect(failure.type).toBe('ModelUnreachable');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('Anthropic');
    expect(failure.message).toContain('ECONNREFUSED');
  });

  test('aborting the signal rejects with the abort reason, not a model failure', async () => {
    api.reply = () => 'hang';
    const controller = new AbortController();
    const call = anthropic()({ model: choice, messages: QUESTION, tools: [], signal: controller.signal });
    await until(() => api.requests.length === 1);
    controller.abort();
    const error = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).not.toBeInstanceOf(ApplicationFailure);
    expect((error as Error).name).toBe('AbortError');
  });
});
