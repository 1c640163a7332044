/**
 * Streaming model calls (live tokens): the OpenAI and Anthropic providers against a local server
 * that replays recorded `text/event-stream` transcripts (tests/fixtures/streaming) in small pieces
 * with delays, and serves the same answers whole for the same request without `stream`. Streamed,
 * the deltas arrive in order while the answer is still coming and add up to it, and the provider's
 * output equals the non-streamed one; failures are classified as without streaming. Also the SSE
 * parser, and the local model's incremental extraction of its answer text (without loading it).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { createAnthropicProvider } from '../../activities/model/anthropic';
import { createOpenAIProvider } from '../../activities/model/openai';
import type { ModelDelta } from '../../activities/model/provider';
import { createSseParser } from '../../activities/model/sse';
import { answerTextStream } from '../../activities/model/local/decide';
import { ANTHROPIC_KEY, OPENAI_KEY, QUESTION, WEATHER_TOOL } from '../support/provider-fixtures';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'streaming');
const fixture = (name: string): string => fs.readFileSync(path.join(FIXTURES, name), 'utf8');
const fixtureJson = (name: string): unknown => JSON.parse(fixture(name)) as unknown;

// ---------------------------------------------------------------------------------------------
// A server that replays transcripts

interface Recorded {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** What the server answers: an SSE transcript (for streamed requests), a whole JSON answer, or an error status. */
interface Scenario {
  /** The transcript for a request with `stream: true`. */
  sse?: string;
  /** The answer for a request without it (status 200 unless `status` says otherwise). */
  json?: unknown;
  /** Answers every request with this status and `json` as body, before any stream. */
  status?: number;
  headers?: Record<string, string>;
  /** Stops after this many events: by resetting the connection, or by ending the body cleanly. */
  cutAfter?: { events: number; how: 'reset' | 'end' };
  /** Sends this many events, then nothing more (for timeouts and cancellation). */
  hangAfter?: number;
  /** Delay between two pieces of the stream, in ms. */
  delayMs?: number;
}

interface ReplayServer {
  url: string;
  requests: Recorded[];
  scenario: Scenario;
  /** When the last piece of the last stream was written. */
  lastWriteAt: number;
  close: () => Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The transcript's events (each with its closing blank line), each cut in two at a byte offset so pieces split lines and characters. */
function pieces(transcript: string): Buffer[][] {
  const events = transcript.split(/(?<=\n\n)/).filter((e) => e.length > 0);
  return events.map((event, i) => {
    const bytes = Buffer.from(event, 'utf8');
    const at = Math.max(1, Math.floor((bytes.length * ((i % 5) + 1)) / 7));
    return [bytes.subarray(0, at), bytes.subarray(at)];
  });
}

async function startReplayServer(): Promise<ReplayServer> {
  const server = http.createServer((incoming, res) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      api.requests.push({ path: incoming.url ?? '', headers: incoming.headers, body });
      const s = api.scenario;
      if (s.status !== undefined || body.stream !== true) {
        res.writeHead(s.status ?? 200, { 'content-type': 'application/json', ...s.headers });
        res.end(typeof s.json === 'string' ? s.json : JSON.stringify(s.json));
        return;
      }
      void (async () => {
        res.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache',
          ...s.headers,
        });
        const events = pieces(s.sse ?? '');
        for (const [i, event] of events.entries()) {
          if (s.cutAfter && i === s.cutAfter.events) {
            if (s.cutAfter.how === 'reset') res.destroy();
            else res.end();
            return;
          }
          if (s.hangAfter !== undefined && i === s.hangAfter) return;
          for (const piece of event) {
            if (res.destroyed) return;
            res.write(piece);
            api.lastWriteAt = Date.now();
            await sleep(s.delayMs ?? 2);
          }
        }
        res.end();
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const api: ReplayServer = {
    url: `http://127.0.0.1:${port}`,
    requests: [],
    scenario: {},
    lastWriteAt: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return api;
}

async function failureOf(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApplicationFailure);
  return error as ApplicationFailure;
}

/** What a failure is, for comparing a streamed call's with a non-streamed one's. */
function classOf(f: ApplicationFailure) {
  return {
    type: f.type,
    nonRetryable: f.nonRetryable,
    nextRetryDelay: f.nextRetryDelay,
    details: f.details,
    message: f.message,
  };
}

/** Collects deltas with the time each arrived. */
function recorder() {
  const deltas: ModelDelta[] = [];
  const times: number[] = [];
  return {
    deltas,
    times,
    onDelta: (d: ModelDelta) => {
      deltas.push(d);
      times.push(Date.now());
    },
    text: () =>
      deltas
        .filter((d) => d.kind === 'text')
        .map((d) => d.text)
        .join(''),
    calls: () => {
      const calls: { id?: string; name?: string; args: string }[] = [];
      for (const d of deltas) {
        if (d.kind !== 'tool_call') continue;
        const call = (calls[d.index] ??= { args: '' });
        // A call's id and name come once, with its first delta.
        if (d.id !== undefined) {
          expect(call.id).toBeUndefined();
          expect(call.args).toBe('');
          call.id = d.id;
        }
        if (d.name !== undefined) {
          expect(call.name).toBeUndefined();
          call.name = d.name;
        }
        call.args += d.args;
      }
      return calls;
    },
  };
}

/** An OpenAI stream of content pieces, as OpenAI writes one. */
function openAIContentSse(contentPieces: string[], finish = 'stop'): string {
  const chunk = (choices: unknown[], usage: unknown = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-x', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices, usage })}\n\n`;
  return [
    chunk([{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, finish_reason: null }]),
    ...contentPieces.map((c) => chunk([{ index: 0, delta: { content: c }, finish_reason: null }])),
    chunk([{ index: 0, delta: {}, finish_reason: finish }]),
    chunk([], { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }),
    'data: [DONE]\n\n',
  ].join('');
}

function openAICompletionJson(content: string, finish = 'stop'): unknown {
  return {
    id: 'chatcmpl-x',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o-mini',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null },
        finish_reason: finish,
        logprobs: null,
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

// ---------------------------------------------------------------------------------------------
// OpenAI-compatible

describe('OpenAI-compatible provider, streaming', () => {
  let api: ReplayServer;
  const choice = { provider: 'openai' as const, model: 'gpt-4o-mini', temperature: 0.2, maxTokens: 512 };
  const openai = (timeoutMs?: number) =>
    createOpenAIProvider({
      apiKey: OPENAI_KEY,
      baseUrl: `${api.url}/v1`,
      ...(timeoutMs ? { timeoutMs } : {}),
    });

  beforeAll(async () => {
    api = await startReplayServer();
  });
  afterAll(() => api.close());
  beforeEach(() => {
    api.requests.length = 0;
    api.scenario = {};
  });

  test('a text answer streams as text deltas, in order, while it comes; the output equals the non-streamed one', async () => {
    api.scenario = { sse: fixture('openai-text.sse'), json: fixtureJson('openai-text.json') };
    const plain = await openai()({ model: choice, messages: QUESTION, tools: [WEATHER_TOOL] });
    const rec = recorder();
    const streamed = await openai()({
      model: choice,
      messages: QUESTION,
      tools: [WEATHER_TOOL],
      onDelta: rec.onDelta,
    });
    const doneAt = Date.now();

    expect(streamed).toEqual(plain);
    expect(streamed).toEqual({
      content: 'Paris is 18°C and sunny ☀️; Rome is 22°C with a light breeze. Enjoy "la dolce vita"!',
      toolCalls: [],
      usage: { inputTokens: 82, outputTokens: 17 },
      finishReason: 'stop',
    });
    expect(rec.deltas.every((d) => d.kind === 'text')).toBe(true);
    expect(rec.deltas.slice(0, 4)).toEqual([
      { kind: 'text', text: 'Paris' },
      { kind: 'text', text: ' is' },
      { kind: 'text', text: ' ' },
      { kind: 'text', text: '18' },
    ]);
    expect(rec.text()).toBe(streamed.content);
    // Live: the first pieces arrived while the server was still writing the rest.
    expect(rec.times[0]).toBeLessThan(api.lastWriteAt);
    expect(doneAt).toBeGreaterThanOrEqual(api.lastWriteAt);

    // The same body, asking for a stream with usage; without onDelta, no stream asked for.
    const [plainReq, streamReq] = api.requests;
    expect(plainReq!.body.stream).toBeUndefined();
    expect(plainReq!.headers.accept).toBe('application/json');
    expect(streamReq!.body).toEqual({
      ...plainReq!.body,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(streamReq!.headers.accept).toContain('text/event-stream');
    expect(streamReq!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
  });

  test('two parallel tool calls split over many chunks: tool_call deltas per call, the same output', async () => {
    api.scenario = { sse: fixture('openai-tool-calls.sse'), json: fixtureJson('openai-tool-calls.json') };
    const plain = await openai()({ model: choice, messages: QUESTION, tools: [WEATHER_TOOL] });
    const rec = recorder();
    const streamed = await openai()({
      model: choice,
      messages: QUESTION,
      tools: [WEATHER_TOOL],
      onDelta: rec.onDelta,
    });

    expect(streamed).toEqual(plain);
    expect(streamed).toEqual({
      content: null,
      toolCalls: [
        {
          id: 'call_Jb2XtFq8mWk3RzL0aYv5NpHd',
          name: 'get_weather',
          arguments: { city: 'Paris', unit: 'celsius' },
        },
        {
          id: 'call_Q7eLp1sVb9TnXc4KwZr2HmGf',
          name: 'get_weather',
          arguments: { city: 'Rome', unit: 'celsius' },
        },
      ],
      usage: { inputTokens: 96, outputTokens: 52 },
      finishReason: 'tool_calls',
    });
    expect(rec.deltas.every((d) => d.kind === 'tool_call')).toBe(true);
    expect(rec.deltas.length).toBeGreaterThan(20);
    expect(rec.deltas[0]).toEqual({
      kind: 'tool_call',
      index: 0,
      id: 'call_Jb2XtFq8mWk3RzL0aYv5NpHd',
      name: 'get_weather',
      args: '',
    });
    // In order: every delta of call 0 before call 1's.
    const indexes = rec.deltas.map((d) => (d.kind === 'tool_call' ? d.index : -1));
    expect(indexes).toEqual([...indexes].sort((a, b) => a - b));
    expect(rec.calls()).toEqual([
      {
        id: 'call_Jb2XtFq8mWk3RzL0aYv5NpHd',
        name: 'get_weather',
        args: '{"city": "Paris", "unit": "celsius"}',
      },
      {
        id: 'call_Q7eLp1sVb9TnXc4KwZr2HmGf',
        name: 'get_weather',
        args: '{"city": "Rome", "unit": "celsius"}',
      },
    ]);
  });

  test('ids missing from the stream are generated, as without streaming', async () => {
    const sse = fixture('openai-tool-calls.sse').replace(/"id":"call_[A-Za-z0-9]+",/g, '');
    api.scenario = { sse };
    const rec = recorder();
    const out = await openai()({
      model: choice,
      messages: QUESTION,
      tools: [WEATHER_TOOL],
      onDelta: rec.onDelta,
    });
    expect(out.toolCalls.map((c) => c.id)).toEqual([
      expect.stringMatching(/^call_[0-9a-f-]{36}$/),
      expect.stringMatching(/^call_[0-9a-f-]{36}$/),
    ]);
    expect(out.toolCalls[0]!.id).not.toBe(out.toolCalls[1]!.id);
    expect(rec.calls().map((c) => c.name)).toEqual(['get_weather', 'get_weather']);
  });

  test('a structured answer whose root is not an object is unwrapped, as without streaming', async () => {
    const output = { type: 'array', items: { type: 'string' } };
    const wrapped = '{"value":["Paris","Rome"]}';
    api.scenario = {
      sse: openAIContentSse(['{"', 'value', '":["', 'Par', 'is","', 'Rome', '"]}']),
      json: openAICompletionJson(wrapped),
    };
    const plain = await openai()({ model: choice, messages: QUESTION, tools: [], output });
    const rec = recorder();
    const streamed = await openai()({
      model: choice,
      messages: QUESTION,
      tools: [],
      output,
      onDelta: rec.onDelta,
    });
    expect(streamed).toEqual(plain);
    expect(streamed.content).toBe('["Paris","Rome"]');
    // The deltas are the content as the model writes it.
    expect(rec.text()).toBe(wrapped);
  });

  test('a refusal streams as text and is the content, as without streaming', async () => {
    const refusal = "I'm sorry, I can't help with that.";
    const chunk = (delta: unknown, finish: string | null = null) =>
      `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    api.scenario = {
      sse: [
        chunk({ role: 'assistant', content: null, refusal: '' }),
        chunk({ refusal: "I'm sorry, " }),
        chunk({ refusal: "I can't help with that." }),
        chunk({}, 'stop'),
        'data: [DONE]\n\n',
      ].join(''),
      json: {
        choices: [
          { index: 0, message: { role: 'assistant', content: null, refusal }, finish_reason: 'stop' },
        ],
      },
    };
    const plain = await openai()({ model: choice, messages: QUESTION, tools: [] });
    const rec = recorder();
    const streamed = await openai()({ model: choice, messages: QUESTION, tools: [], onDelta: rec.onDelta });
    expect(streamed).toEqual(plain);
    expect(streamed.content).toBe(refusal);
    expect(rec.text()).toBe(refusal);
  });

  test('a server that ignores `stream` and answers JSON gives the same output, as one delta', async () => {
    api.scenario = { status: 200, json: fixtureJson('openai-text.json') };
    const plain = await openai()({ model: choice, messages: QUESTION, tools: [] });
    const rec = recorder();
    const streamed = await openai()({ model: choice, messages: QUESTION, tools: [], onDelta: rec.onDelta });
    expect(streamed).toEqual(plain);
    expect(rec.deltas).toEqual([{ kind: 'text', text: plain.content }]);
  });

  test('a watcher that throws does not fail the call', async () => {
    api.scenario = { sse: fixture('openai-text.sse') };
    const out = await openai()({
      model: choice,
      messages: QUESTION,
      tools: [],
      onDelta: () => {
        throw new Error('watcher broke');
      },
    });
    expect(out.content).toContain('Paris');
  });

  test.each([
    [429, { 'retry-after': '7', 'x-request-id': 'req_429' }, 'Rate limit reached for requests'],
    [500, {}, 'The server had an error while processing your request.'],
    [503, {}, 'Service Unavailable'],
    [400, {}, "Invalid 'messages.1.content'"],
  ])('HTTP %i before the stream is classified as without streaming', async (status, headers, message) => {
    api.scenario = {
      status,
      headers,
      json: { error: { message, type: 'server_error', param: null, code: null } },
    };
    const plain = await failureOf(openai()({ model: choice, messages: QUESTION, tools: [] }));
    const streamed = await failureOf(
      openai()({ model: choice, messages: QUESTION, tools: [], onDelta: () => undefined }),
    );
    expect(classOf(streamed)).toEqual(classOf(plain));
    expect(streamed.message).toContain(message);
    expect(streamed.nonRetryable).toBe(status === 400);
  });

  test('a 401 that echoes the key never shows it, streamed or not', async () => {
    api.scenario = {
      status: 401,
      json: { error: { message: `Incorrect API key provided: ${OPENAI_KEY}.`, code: 'invalid_api_key' } },
    };
    const streamed = await failureOf(
      openai()({ model: choice, messages: QUESTION, tools: [], onDelta: () => undefined }),
    );
    expect(streamed.type).toBe('ModelAuthError');
    expect(streamed.nonRetryable).toBe(true);
    expect(streamed.message).not.toContain(OPENAI_KEY);
  });

  test('a stream cut mid-way (connection reset) fails retryably, saying so', async () => {
    api.scenario = { sse: fixture('openai-tool-calls.sse'), cutAfter: { events: 9, how: 'reset' } };
    const rec = recorder();
    const failure = await failureOf(
      openai()({ model: choice, messages: QUESTION, tools: [WEATHER_TOOL], onDelta: rec.onDelta }),
    );
    expect(failure.type).toBe('ModelUnreachable');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toMatch(/cut the connection while streaming its answer \(after 9 events\)/);
    expect(failure.message).not.toContain(OPENAI_KEY);
    // The pieces that came were passed on.
    expect(rec.deltas.length).toBeGreaterThan(0);
  });

  test('a stream that ends early without [DONE] or a finish reason fails retryably', async () => {
    api.scenario = { sse: fixture('openai-text.sse'), cutAfter: { events: 5, how: 'end' } };
    const failure = await failureOf(
      openai()({ model: choice, messages: QUESTION, tools: [], onDelta: () => {} }),
    );
    expect(failure.type).toBe('ModelServerError');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('ended its streamed answer early, after 5 chunks');
  });

  test('a chunk that is not JSON fails retryably, like a body that is not JSON', async () => {
    api.scenario = { sse: 'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\ndata: {"choi\n\n' };
    const failure = await failureOf(
      openai()({ model: choice, messages: QUESTION, tools: [], onDelta: () => {} }),
    );
    expect(failure.type).toBe('ModelServerError');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('not JSON');
  });

  test('an error chunk after the 200 is a retryable server error', async () => {
    api.scenario = {
      sse:
        'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n' +
        'data: {"error":{"message":"The server had an error while processing your request.","type":"server_error"}}\n\n',
    };
    const failure = await failureOf(
      openai()({ model: choice, messages: QUESTION, tools: [], onDelta: () => {} }),
    );
    expect(failure.type).toBe('ModelServerError');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('The server had an error');
  });

  test('a stream that stalls past timeoutMs is a retryable ModelUnreachable', async () => {
    api.scenario = { sse: fixture('openai-text.sse'), hangAfter: 3 };
    const failure = await failureOf(
      openai(300)({ model: choice, messages: QUESTION, tools: [], onDelta: () => undefined }),
    );
    expect(failure.type).toBe('ModelUnreachable');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('did not answer within 300 ms while streaming its answer');
  });

  test('aborting the signal mid-stream rejects with the abort reason, not a model failure', async () => {
    api.scenario = { sse: fixture('openai-text.sse'), hangAfter: 3 };
    const controller = new AbortController();
    const rec = recorder();
    const call = openai()({
      model: choice,
      messages: QUESTION,
      tools: [],
      signal: controller.signal,
      onDelta: rec.onDelta,
    });
    const deadline = Date.now() + 5000;
    while (rec.deltas.length === 0 && Date.now() < deadline) await sleep(5);
    const reason = new CancelledFailure('CANCELLED');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
  });
});

// ---------------------------------------------------------------------------------------------
// Anthropic

/** An Anthropic stream of one forced answer-tool call, its input in pieces. */
function anthropicAnswerToolSse(name: string, jsonPieces: string[]): string {
  const ev = (type: string, data: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  return [
    ev('message_start', {
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [],
        stop_reason: null,
        usage: { input_tokens: 300, output_tokens: 1 },
      },
    }),
    ev('content_block_start', {
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_answer', name, input: {} },
    }),
    ...jsonPieces.map((p) =>
      ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: p } }),
    ),
    ev('content_block_stop', { index: 0 }),
    ev('message_delta', {
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { output_tokens: 40 },
    }),
    ev('message_stop', {}),
  ].join('');
}

describe('Anthropic provider, streaming', () => {
  let api: ReplayServer;
  const choice = { provider: 'anthropic' as const, model: 'claude-sonnet-4-5', maxTokens: 1024 };
  const anthropic = () => createAnthropicProvider({ apiKey: ANTHROPIC_KEY, baseUrl: api.url });

  beforeAll(async () => {
    api = await startReplayServer();
  });
  afterAll(() => api.close());
  beforeEach(() => {
    api.requests.length = 0;
    api.scenario = {};
  });

  test('a text answer streams as text deltas; the output equals the non-streamed one', async () => {
    api.scenario = { sse: fixture('anthropic-text.sse'), json: fixtureJson('anthropic-text.json') };
    const plain = await anthropic()({ model: choice, messages: QUESTION, tools: [WEATHER_TOOL] });
    const rec = recorder();
    const streamed = await anthropic()({
      model: choice,
      messages: QUESTION,
      tools: [WEATHER_TOOL],
      onDelta: rec.onDelta,
    });

    expect(streamed).toEqual(plain);
    expect(streamed).toEqual({
      content: 'Paris is 18°C and sunny ☀️; Rome is 22°C with a light breeze.',
      toolCalls: [],
      // Cached prompt tokens count, as without streaming; output tokens from message_delta.
      usage: { inputTokens: 600, outputTokens: 24 },
      finishReason: 'end_turn',
    });
    expect(rec.deltas).toEqual([
      { kind: 'text', text: 'Paris is 18°C' },
      { kind: 'text', text: ' and sunny ☀️; Rome' },
      { kind: 'text', text: ' is 22°C with a' },
      { kind: 'text', text: ' light breeze.' },
    ]);
    expect(rec.times[0]).toBeLessThan(api.lastWriteAt);
    const [plainReq, streamReq] = api.requests;
    expect(plainReq!.body.stream).toBeUndefined();
    expect(streamReq!.body).toEqual({ ...plainReq!.body, stream: true });
    expect(streamReq!.headers['x-api-key']).toBe(ANTHROPIC_KEY);
  });

  test('text then two tool_use blocks: text deltas, tool_call deltas indexed among the calls, the same output', async () => {
    api.scenario = { sse: fixture('anthropic-tool-use.sse'), json: fixtureJson('anthropic-tool-use.json') };
    const plain = await anthropic()({ model: choice, messages: QUESTION, tools: [WEATHER_TOOL] });
    const rec = recorder();
    const streamed = await anthropic()({
      model: choice,
      messages: QUESTION,
      tools: [WEATHER_TOOL],
      onDelta: rec.onDelta,
    });

    expect(streamed).toEqual(plain);
    expect(streamed).toEqual({
      content: "I'll check the weather in both cities.",
      toolCalls: [
        {
          id: 'toolu_01A09q90qw90lq917835lq9',
          name: 'get_weather',
          arguments: { city: 'Paris', unit: 'celsius' },
        },
        {
          id: 'toolu_01B7fZk2mN4pQ8rS6tV3wX5y',
          name: 'get_weather',
          arguments: { city: 'Rome', unit: 'celsius' },
        },
      ],
      usage: { inputTokens: 531, outputTokens: 118 },
      finishReason: 'tool_use',
    });
    expect(rec.text()).toBe(streamed.content);
    expect(rec.deltas[2]).toEqual({
      kind: 'tool_call',
      index: 0,
      id: 'toolu_01A09q90qw90lq917835lq9',
      name: 'get_weather',
      args: '',
    });
    const calls = rec.calls();
    expect(calls.map((c) => [c.id, c.name])).toEqual([
      ['toolu_01A09q90qw90lq917835lq9', 'get_weather'],
      ['toolu_01B7fZk2mN4pQ8rS6tV3wX5y', 'get_weather'],
    ]);
    expect(calls.map((c) => JSON.parse(c.args) as unknown)).toEqual(
      streamed.toolCalls.map((c) => c.arguments),
    );
  });

  test.each([
    [
      'an object schema',
      { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      '{"city":"Paris"}',
      ['{"ci', 'ty": "Pa', 'ris"}'],
    ],
    [
      'a wrapped schema',
      { type: 'array', items: { type: 'string' } },
      '["Paris","Rome"]',
      ['{"value": ["Pa', 'ris", "Rome"', ']}'],
    ],
  ])(
    'the forced answer tool (%s) streams its JSON as text; the output is the same',
    async (_, output, content, jsonPieces) => {
      api.scenario = {
        sse: anthropicAnswerToolSse('final_answer', jsonPieces),
        json: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          content: [
            {
              type: 'tool_use',
              id: 'toolu_answer',
              name: 'final_answer',
              input: JSON.parse(jsonPieces.join('')) as unknown,
            },
          ],
          stop_reason: 'tool_use',
          usage: { input_tokens: 300, output_tokens: 40 },
        },
      };
      const plain = await anthropic()({ model: choice, messages: QUESTION, tools: [], output });
      const rec = recorder();
      const streamed = await anthropic()({
        model: choice,
        messages: QUESTION,
        tools: [],
        output,
        onDelta: rec.onDelta,
      });
      expect(streamed).toEqual(plain);
      expect(streamed).toEqual({
        content,
        toolCalls: [],
        usage: { inputTokens: 300, outputTokens: 40 },
        finishReason: 'tool_use',
      });
      expect(rec.deltas.every((d) => d.kind === 'text')).toBe(true);
      expect(rec.text()).toBe(jsonPieces.join(''));
    },
  );

  test('an overloaded_error event mid-stream is classified like a 529 before it', async () => {
    const error = {
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
      request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy',
    };
    api.scenario = { status: 529, json: error };
    const before = await failureOf(anthropic()({ model: choice, messages: QUESTION, tools: [] }));

    const sse = fixture('anthropic-text.sse').split(/(?<=\n\n)/);
    api.scenario = { sse: [...sse.slice(0, 4), `event: error\ndata: ${JSON.stringify(error)}\n\n`].join('') };
    const during = await failureOf(
      anthropic()({ model: choice, messages: QUESTION, tools: [], onDelta: () => {} }),
    );
    expect(during.type).toBe(before.type);
    expect(during.type).toBe('ModelServerError');
    expect(during.nonRetryable).toBe(false);
    expect(during.message).toContain('Overloaded (overloaded_error)');
  });

  test.each([429, 500, 529, 401])(
    'HTTP %i before the stream is classified as without streaming',
    async (status) => {
      api.scenario = {
        status,
        headers: { 'request-id': 'req_1', ...(status === 429 ? { 'retry-after': '12' } : {}) },
        json: {
          type: 'error',
          error: { type: 'some_error', message: `failed with ${status} for ${ANTHROPIC_KEY}` },
        },
      };
      const plain = await failureOf(anthropic()({ model: choice, messages: QUESTION, tools: [] }));
      const streamed = await failureOf(
        anthropic()({ model: choice, messages: QUESTION, tools: [], onDelta: () => {} }),
      );
      expect(classOf(streamed)).toEqual(classOf(plain));
      expect(streamed.message).toContain(`failed with ${status}`);
      expect(streamed.message).not.toContain(ANTHROPIC_KEY);
    },
  );

  test.each(['reset', 'end'] as const)(
    'a stream cut mid-way (%s) fails retryably, saying so',
    async (how) => {
      api.scenario = { sse: fixture('anthropic-tool-use.sse'), cutAfter: { events: 9, how } };
      const failure = await failureOf(
        anthropic()({ model: choice, messages: QUESTION, tools: [WEATHER_TOOL], onDelta: () => {} }),
      );
      expect(failure.nonRetryable).toBe(false);
      if (how === 'reset') {
        expect(failure.type).toBe('ModelUnreachable');
        expect(failure.message).toContain('cut the connection while streaming its answer (after 9 events)');
      } else {
        expect(failure.type).toBe('ModelServerError');
        expect(failure.message).toContain(
          'ended its streamed answer early, after 9 events without message_stop',
        );
      }
    },
  );
});

// ---------------------------------------------------------------------------------------------
// The SSE parser

describe('createSseParser', () => {
  const events = (pieces: string[]) => {
    const parser = createSseParser();
    return [...pieces.flatMap((p) => parser.push(p)), ...parser.end()];
  };

  test('events with names, multi-line data, comments, and every kind of line end, split anywhere', () => {
    const text =
      '\uFEFF: keep-alive\r\nevent: message_start\r\ndata: {"a":1}\r\n\r\n' +
      'data: line 1\rdata:line 2\r\rid: 7\nretry: 1000\ndata:  spaced\n\n' +
      'event: ping\ndata\n\n';
    const expected = [
      { event: 'message_start', data: '{"a":1}' },
      { event: 'message', data: 'line 1\nline 2' },
      { event: 'message', data: ' spaced' },
      { event: 'ping', data: '' },
    ];
    expect(events([text])).toEqual(expected);
    for (let size = 1; size <= 7; size++) {
      const pieces: string[] = [];
      for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
      expect(events(pieces)).toEqual(expected);
    }
  });

  test('a blank line without data dispatches nothing', () => {
    expect(events(['event: x\n\n\n\ndata: y\n\n'])).toEqual([{ event: 'message', data: 'y' }]);
  });

  test('at the end, complete lines make an event; an unterminated line is dropped', () => {
    expect(events(['data: [DONE]\n'])).toEqual([{ event: 'message', data: '[DONE]' }]);
    expect(events(['data: {"a":1}\n\ndata: {"cho'])).toEqual([{ event: 'message', data: '{"a":1}' }]);
  });
});

// ---------------------------------------------------------------------------------------------
// The local model's answer text, as it is generated

/** A high surrogate without its low half, or a low one without its high half. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe('answerTextStream (local model live tokens)', () => {
  const stream = (pieces: string[]) => {
    const s = answerTextStream();
    return pieces.map((p) => s.push(p));
  };
  const splitEvery = (text: string, size: number) => {
    const out: string[] = [];
    for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
    return out;
  };

  test('the answer text, unescaped, piece by piece, however the JSON is split', () => {
    const text = 'Line "one"\nTab\there, back\\slash, café, emoji 😀, ünïcode\u2028end.';
    // As the grammar writes it, with \u escapes for some characters.
    const json = JSON.stringify({ tool: 'answer', arguments: { text } })
      .replace('é', '\\u00e9')
      .replace('😀', '\\ud83d\\ude00');
    for (let size = 1; size <= 9; size++) {
      const out = stream(splitEvery(json, size));
      expect(out.join('')).toBe(text);
      // Every piece is whole text: no half escape, no lone surrogate.
      for (const piece of out) expect(piece).not.toMatch(LONE_SURROGATE);
    }
  });

  test('pieces come as the text is written, not at the end', () => {
    const out = stream(['{"tool":"answer","arguments":{"text":"', 'The ', 'answer', ' is 437.', '"}}']);
    expect(out).toEqual(['', 'The ', 'answer', ' is 437.', '']);
  });

  test('whitespace in the JSON is tolerated; nothing after the closing quote', () => {
    expect(stream(['{ "tool" : "answer",\n "arguments": { "text": "Hi', '"}, "x": "no"}']).join('')).toBe(
      'Hi',
    );
  });

  test('a tool call, or a cut-off opening, gives nothing', () => {
    expect(stream(splitEvery('{"tool":"get_weather","arguments":{"text":"Paris"}}', 3)).join('')).toBe('');
    expect(stream(splitEvery('{"tool":"answers","arguments":{"text":"Paris"}}', 2)).join('')).toBe('');
    expect(stream(['{"tool":"ans']).join('')).toBe('');
  });
});
