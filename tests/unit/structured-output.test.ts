/**
 * Structured output without a server: the workflow's output-schema validator, the schemas it
 * refuses, the zod conversion, how the OpenAI and Anthropic requests ask for the schema natively,
 * and the local model's grammar built from it. No network and no model is loaded.
 */
import { z } from 'zod';
import type { AnthropicModelChoice } from '../../activities/model/anthropic';
import { anthropicRequest, createAnthropicProvider } from '../../activities/model/anthropic';
import type { OpenAIModelChoice } from '../../activities/model/openai';
import { createOpenAIProvider, openAIRequestBody } from '../../activities/model/openai';
import { decisionSchema, parseDecision, toGrammarSchema } from '../../activities/model/local/decision';
import {
  AgentInputSchema,
  checkOutput,
  outputSchemaFromZod,
  outputSchemaProblems,
  validateOutput,
} from '../../shared/agent';
import type { ChatMessage } from '../../shared/conversation';
import type { ModelToolSpec } from '../../shared/model';
import { SIZE_BUDGETS } from '../../shared/temporal-limits';
import { formatZodIssues } from '../../shared/zod-issues';
import { LOCAL_TOOL_CARDS } from '../../prompts/local-model';

const WEATHER = {
  title: 'weather',
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1 },
    celsius: { type: 'number', minimum: -90, maximum: 60 },
    sky: { enum: ['clear', 'cloudy'] },
    days: { type: 'array', items: { type: 'integer' }, maxItems: 2 },
  },
  required: ['city', 'celsius', 'sky', 'days'],
  additionalProperties: false,
};

const CALCULATOR: ModelToolSpec = {
  name: 'calculator',
  description: 'Arithmetic',
  parameters: {
    type: 'object',
    properties: { expression: { type: 'string' } },
    required: ['expression'],
    additionalProperties: false,
  },
};

const MESSAGES: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Weather in Paris?' },
];

describe('the output validator', () => {
  test('accepts a matching value and names each field that misses', () => {
    expect(validateOutput(WEATHER, { city: 'Paris', celsius: 21, sky: 'clear', days: [1, 2] })).toEqual([]);
    expect(
      validateOutput(WEATHER, { city: '', celsius: 99, sky: 'fog', days: [1.5, 2, 3], wind: 1 }),
    ).toEqual([
      { path: 'city', message: 'needs at least 1 characters; has 0' },
      { path: 'celsius', message: 'must be at most 60; got 99' },
      { path: 'sky', message: 'must be one of "clear", "cloudy"; got "fog"' },
      { path: 'days[0]', message: 'expected integer, got number' },
      { path: 'days', message: 'allows at most 2 items; has 3' },
      { path: 'wind', message: 'is not a field of the schema' },
    ]);
    expect(validateOutput(WEATHER, { celsius: '21' })).toEqual([
      { path: 'city', message: 'is required' },
      { path: 'sky', message: 'is required' },
      { path: 'days', message: 'is required' },
      { path: 'celsius', message: 'expected number, got string' },
    ]);
  });

  test('follows $ref into $defs, and reports the closest shape of an anyOf', () => {
    const schema = {
      $defs: { point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] } },
      type: 'object',
      properties: {
        at: { $ref: '#/$defs/point' },
        label: { anyOf: [{ type: 'string', pattern: '^[A-Z]' }, { type: 'null' }] },
      },
    };
    expect(outputSchemaProblems(schema)).toEqual([]);
    expect(validateOutput(schema, { at: { x: 1 }, label: null })).toEqual([]);
    expect(validateOutput(schema, { at: {}, label: 'paris' })).toEqual([
      { path: 'at.x', message: 'is required' },
      { path: 'label', message: 'matches none of the 2 allowed shapes (anyOf)' },
      { path: 'label', message: 'must match the pattern ^[A-Z]' },
    ]);
  });

  test('reads the answer as JSON, forgiving a code fence, and says when it is not JSON', () => {
    expect(checkOutput({ type: 'array' }, '```json\n[1, 2]\n```')).toEqual({ ok: true, value: [1, 2] });
    const notJson = checkOutput({ type: 'array' }, 'Here it is: [1, 2]');
    expect(notJson.ok).toBe(false);
    expect(!notJson.ok && notJson.issues[0]?.message).toMatch(/^is not valid JSON/);
    // Deep nesting is refused before anything recurses through it (brackets in strings do not count).
    expect(checkOutput({}, '['.repeat(100_000) + ']'.repeat(100_000))).toEqual({
      ok: false,
      issues: [{ path: '(answer)', message: 'nests 100000 levels deep; at most 64' }],
    });
    expect(checkOutput({ type: 'string' }, JSON.stringify('[\\"['.repeat(100)))).toMatchObject({ ok: true });
    expect(checkOutput({ type: 'array' }, null)).toEqual({
      ok: false,
      issues: [{ path: '(answer)', message: 'is empty; expected JSON' }],
    });
  });

  test('refuses at run start what it cannot enforce: not an object, unknown keywords, bad values, too big', () => {
    const problems = (output: unknown) => {
      const parsed = AgentInputSchema.safeParse({
        task: 't',
        model: { provider: 'scripted', turns: [{ content: '{}' }] },
        output,
      });
      return parsed.success ? '' : formatZodIssues(parsed.error);
    };
    expect(problems(WEATHER)).toBe('');
    expect(problems('string')).toMatch(/^output: must be a JSON Schema object/);
    expect(problems({ type: 'object', if: {}, properties: { a: { type: 'text' } } })).toMatch(
      /output: if: the keyword "if" is not supported.*output: properties\.a\.type must be one of string, number/,
    );
    expect(problems({ $ref: '#/$defs/missing' })).toMatch(/output: \$ref must point into this schema/);
    // Matching runs in the workflow task: the classic catastrophic-backtracking shapes are refused.
    expect(problems({ type: 'string', pattern: '^(\\w+\\s?)+$' })).toMatch(
      /output: pattern repeats a group that ends in a repeat/,
    );
    expect(problems({ type: 'string', pattern: '^(?:[a-z]+\\.)*[a-z]+$' })).toBe('');
    expect(problems({ type: 'string', pattern: '(' })).toMatch(
      /output: pattern is not a valid regular expression/,
    );
    const big = { type: 'object', description: 'x'.repeat(SIZE_BUDGETS.outputSchemaBytes) };
    expect(problems(big)).toMatch(/output: the schema is 16(\.\d)? KiB as JSON; at most 16 KiB is accepted/);
  });

  test('a zod schema converts once into a schema the validator enforces', () => {
    const schema = outputSchemaFromZod(
      z.object({
        name: z.string(),
        email: z.email(),
        host: z.hostname(),
        photo: z.base64(),
        tags: z.array(z.string()),
        note: z.string().nullable().optional(),
      }),
    );
    expect(schema).not.toHaveProperty('$schema');
    expect(outputSchemaProblems(schema)).toEqual([]);
    const valid = { name: 'Ana', email: 'ana@example.test', host: 'example.test', photo: 'QUJD', tags: [] };
    expect(validateOutput(schema, valid)).toEqual([]);
    expect(
      validateOutput(schema, { ...valid, email: 'nope', photo: 'A', note: 3 }).map((i) => i.path),
    ).toEqual(['email', 'photo', 'note']);
    expect(() => outputSchemaFromZod(z.object({ when: z.date() }))).toThrow();
  });
});

describe('provider requests', () => {
  const openai: OpenAIModelChoice = { provider: 'openai', model: 'gpt-4o-mini' };
  const anthropic: AnthropicModelChoice = {
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    maxTokens: 1024,
  };

  test('OpenAI: response_format json_schema, strict when the schema allows it; absent without output', () => {
    // Strict mode takes closed objects with every field required, and no string lengths.
    const strict = { ...WEATHER, properties: { ...WEATHER.properties, city: { type: 'string' } } };
    const body = openAIRequestBody({
      model: openai,
      messages: MESSAGES,
      tools: [CALCULATOR],
      output: strict,
    });
    expect(body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'weather', schema: strict, strict: true },
    });
    const withLength = openAIRequestBody({ model: openai, messages: MESSAGES, tools: [], output: WEATHER });
    expect(withLength.response_format).toMatchObject({ json_schema: { strict: false } });
    expect(body.tools).toHaveLength(1);
    const loose = { type: 'object', properties: { a: { type: 'string', minLength: 2 } } };
    expect(
      openAIRequestBody({ model: openai, messages: MESSAGES, tools: [], output: loose }).response_format,
    ).toEqual({
      type: 'json_schema',
      json_schema: { name: 'final_answer', schema: loose, strict: false },
    });
    expect(openAIRequestBody({ model: openai, messages: MESSAGES, tools: [] })).not.toHaveProperty(
      'response_format',
    );
  });

  test('OpenAI: a root that is not an object is wrapped in { value } and unwrapped from the answer', async () => {
    const list = { type: 'array', items: { type: 'number' } };
    expect(
      openAIRequestBody({ model: openai, messages: MESSAGES, tools: [], output: list }).response_format,
    ).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'final_answer',
        schema: {
          type: 'object',
          properties: { value: list },
          required: ['value'],
          additionalProperties: false,
        },
        strict: true,
      },
    });
    const fetchImpl = (async () =>
      Response.json({
        choices: [{ message: { content: '{"value":[1,2]}' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 5 },
      })) as typeof fetch;
    const out = await createOpenAIProvider({ apiKey: 'sk-test', fetchImpl })({
      model: openai,
      messages: MESSAGES,
      tools: [],
      output: list,
    });
    expect(out.content).toBe('[1,2]');
  });

  test('Anthropic: the answer is a tool, forced alone, required among other tools; a non-object root is wrapped', () => {
    const alone = anthropicRequest({ model: anthropic, messages: MESSAGES, tools: [], output: WEATHER });
    expect(alone.body.tool_choice).toEqual({ type: 'tool', name: 'weather' });
    expect(alone.body.tools).toEqual([
      {
        name: 'weather',
        description: expect.stringMatching(/final answer/) as string,
        input_schema: WEATHER,
      },
    ]);
    const withTools = anthropicRequest({
      model: anthropic,
      messages: MESSAGES,
      tools: [CALCULATOR],
      output: WEATHER,
    });
    expect(withTools.body.tool_choice).toEqual({ type: 'any' });
    expect((withTools.body.tools as { name: string }[]).map((t) => t.name)).toEqual([
      'calculator',
      'weather',
    ]);
    const list = anthropicRequest({
      model: anthropic,
      messages: MESSAGES,
      tools: [],
      output: { type: 'array' },
    });
    expect(list.answerTool).toEqual({ name: 'final_answer', wrapped: true });
    expect((list.body.tools as { input_schema: unknown }[])[0]?.input_schema).toEqual({
      type: 'object',
      properties: { value: { type: 'array' } },
      required: ['value'],
      additionalProperties: false,
    });
    const plain = anthropicRequest({ model: anthropic, messages: MESSAGES, tools: [] });
    expect(plain.body).not.toHaveProperty('tool_choice');
    expect(plain.body).not.toHaveProperty('tools');
  });

  test('Anthropic: the answer tool’s input comes back as the answer text (no network)', async () => {
    const fetchImpl = (async () =>
      new Response(
        JSON.stringify({
          content: [{ type: 'tool_use', id: 'tu_1', name: 'final_answer', input: { value: [1, 2] } }],
          stop_reason: 'tool_use',
          usage: { input_tokens: 10, output_tokens: 5 },
        }),
        { status: 200, headers: { 'content-type': 'application/json' } },
      )) as typeof fetch;
    const provider = createAnthropicProvider({ apiKey: 'sk-ant-test', fetchImpl });
    const out = await provider({
      model: anthropic,
      messages: MESSAGES,
      tools: [],
      output: { type: 'array' },
    });
    expect(out.content).toBe('[1,2]');
    expect(out.toolCalls).toEqual([]);
  });
});

describe('the local model grammar', () => {
  test('the answer’s grammar becomes the output schema’s; the structured answer parses to its JSON', () => {
    const grammar = decisionSchema(
      [CALCULATOR],
      LOCAL_TOOL_CARDS,
      true,
      toGrammarSchema(WEATHER),
    ) as unknown as {
      oneOf: { properties: { tool: unknown; arguments: unknown } }[];
    };
    expect(grammar.oneOf).toHaveLength(2);
    expect(grammar.oneOf[1]?.properties).toEqual({
      tool: { const: 'answer' },
      arguments: {
        type: 'object',
        properties: {
          city: { type: 'string', minLength: 1, maxLength: 300 },
          celsius: { type: 'number' },
          sky: { enum: ['clear', 'cloudy'] },
          days: { type: 'array', items: { type: 'integer' }, maxItems: 2 },
        },
        required: ['city', 'celsius', 'sky', 'days'],
        additionalProperties: false,
      },
    });
    const plain = decisionSchema([], LOCAL_TOOL_CARDS) as unknown as typeof grammar;
    expect(plain.oneOf[0]?.properties.arguments).toMatchObject({ properties: { text: { type: 'string' } } });

    const written = '{"tool":"answer","arguments":{"city":"Paris","celsius":21,"sky":"clear","days":[]}}';
    expect(parseDecision(written, true)).toEqual({
      kind: 'answer',
      text: '{"city":"Paris","celsius":21,"sky":"clear","days":[]}',
    });
    expect(parseDecision('{"tool":"answer","arguments":{"city":"Par', true)).toEqual({
      kind: 'answer',
      text: '{"city":"Par',
      cut: true,
    });
  });
});
