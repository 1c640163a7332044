/**
 * One decision per step: the local model writes `{"tool": name, "arguments": {...}}`, where name is
 * one of the offered tools or `answer`. The JSON Schema of that object is built from the tools' own
 * schemas and handed to the runtime as a grammar, so every output parses into a call with arguments
 * of the right shape, or into a final answer. Strings and arrays get upper bounds, so a small model
 * that starts repeating itself stops at a bounded length instead of filling the context.
 */
import type { ModelToolSpec } from '../../../shared/model';
import type { LocalToolCard } from '../../../prompts/local-model';
import { ANSWER_TOOL } from '../../../prompts/local-model';

/** Longest string the model may write in a tool argument. */
export const ARGUMENT_STRING_LIMIT = 300;
/** Longest final answer, in characters. */
export const ANSWER_TEXT_LIMIT = 600;
/** Most items in an array argument. */
export const ARGUMENT_ARRAY_LIMIT = 8;
/** Nesting depth followed in argument schemas; deeper values become scalars. */
const MAX_SCHEMA_DEPTH = 4;

/** The subset of JSON Schema the runtime's grammar accepts (structurally, node-llama-cpp's GbnfJsonSchema). */
export type GrammarSchema =
  | { type: GrammarScalar | GrammarScalar[] }
  | { type: 'string'; minLength?: number; maxLength: number }
  | { const: string | number | boolean | null }
  | { enum: (string | number | boolean | null)[] }
  | { oneOf: GrammarSchema[] }
  | { type: 'array'; items: GrammarSchema; minItems?: number; maxItems: number }
  | {
      type: 'object';
      properties: Record<string, GrammarSchema>;
      required: string[];
      additionalProperties: false;
    };

type GrammarScalar = 'string' | 'number' | 'integer' | 'boolean' | 'null';

const ANY_SCALAR: GrammarSchema = { type: ['string', 'number', 'boolean', 'null'] };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isLiteral(value: unknown): value is string | number | boolean | null {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

/**
 * Converts a tool's JSON Schema (as zod writes it) into the grammar subset: descriptions, defaults,
 * patterns and numeric ranges are dropped (the workflow still validates with the tool's zod schema),
 * strings and arrays are bounded.
 */
export function toGrammarSchema(schema: unknown, depth = 0): GrammarSchema {
  if (!isRecord(schema) || depth > MAX_SCHEMA_DEPTH) return ANY_SCALAR;
  if ('const' in schema && isLiteral(schema.const)) return { const: schema.const };
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every(isLiteral)) {
    return { enum: schema.enum };
  }
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union) && union.length > 0) {
    return { oneOf: union.map((s) => toGrammarSchema(s, depth + 1)) };
  }
  switch (schema.type) {
    case 'string': {
      const max = Math.min(
        typeof schema.maxLength === 'number' ? schema.maxLength : ARGUMENT_STRING_LIMIT,
        ARGUMENT_STRING_LIMIT,
      );
      const min = typeof schema.minLength === 'number' ? Math.min(schema.minLength, max) : 0;
      return min > 0
        ? { type: 'string', minLength: min, maxLength: max }
        : { type: 'string', maxLength: max };
    }
    case 'number':
    case 'integer':
    case 'boolean':
    case 'null':
      return { type: schema.type };
    case 'array': {
      const max = Math.min(
        typeof schema.maxItems === 'number' ? schema.maxItems : ARGUMENT_ARRAY_LIMIT,
        ARGUMENT_ARRAY_LIMIT,
      );
      const min = typeof schema.minItems === 'number' ? Math.min(schema.minItems, max) : 0;
      return {
        type: 'array',
        items: toGrammarSchema(schema.items, depth + 1),
        ...(min > 0 ? { minItems: min } : {}),
        maxItems: max,
      };
    }
    case 'object': {
      const properties = isRecord(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required)
        ? schema.required.filter((k): k is string => typeof k === 'string' && k in properties)
        : [];
      return {
        type: 'object',
        properties: Object.fromEntries(
          Object.entries(properties).map(([k, v]) => [k, toGrammarSchema(v, depth + 1)]),
        ),
        required,
        additionalProperties: false,
      };
    }
    default:
      return ANY_SCALAR;
  }
}

/** A required string argument is never empty: an empty message or query is never what a task needs. */
function nonEmpty(schema: GrammarSchema): GrammarSchema {
  return 'type' in schema && schema.type === 'string' && 'maxLength' in schema
    ? { ...schema, minLength: Math.max(1, schema.minLength ?? 0) }
    : schema;
}

/**
 * The arguments a small model is asked for: the card's fields when the tool has a card (all of them
 * required, so the model never weighs optional fields), else the schema's required fields.
 */
export function argumentsSchema(tool: ModelToolSpec, card: LocalToolCard | undefined): GrammarSchema {
  const full = toGrammarSchema(tool.parameters);
  if (!('properties' in full)) return full;
  const fields = card
    ? Object.keys(card.args).filter((k) => k in full.properties)
    : full.required.filter((k) => k in full.properties);
  return {
    type: 'object',
    properties: Object.fromEntries(fields.map((k) => [k, nonEmpty(full.properties[k] as GrammarSchema)])),
    required: fields,
    additionalProperties: false,
  };
}

/**
 * The schema of one decision: a call of one of `tools`, or the answer. With an output schema (the
 * run's `output`, through `toGrammarSchema`) the answer's arguments are the structured answer
 * itself instead of `{ text }`.
 */
export function decisionSchema(
  tools: ModelToolSpec[],
  cards: Readonly<Record<string, LocalToolCard>>,
  canAnswer = true,
  output?: GrammarSchema,
): GrammarSchema {
  const call = (name: string, args: GrammarSchema): GrammarSchema => ({
    type: 'object',
    properties: { tool: { const: name }, arguments: args },
    required: ['tool', 'arguments'],
    additionalProperties: false,
  });
  return {
    oneOf: [
      ...tools.map((t) => call(t.name, argumentsSchema(t, cards[t.name]))),
      ...(canAnswer || tools.length === 0
        ? [
            call(
              ANSWER_TOOL,
              output ?? {
                type: 'object',
                properties: { text: { type: 'string', minLength: 1, maxLength: ANSWER_TEXT_LIMIT } },
                required: ['text'],
                additionalProperties: false,
              },
            ),
          ]
        : []),
    ],
  };
}

/** A parsed decision; `cut` when the token budget ended it before the JSON closed. */
export type Decision =
  | { kind: 'answer'; text: string; cut?: boolean }
  | { kind: 'call'; tool: string; arguments: Record<string, unknown> | string; cut?: boolean };

const CUT_ANSWER = /^\{"tool":"answer","arguments":\{"text":"((?:[^"\\]|\\.)*)/;
const CUT_CALL = /^\{"tool":"([a-z][a-z0-9_]*)","arguments":(.*)$/s;
const CUT_STRUCTURED = /^\{"tool":"answer","arguments":(.*)$/s;

/**
 * Reads the model's JSON. The grammar guarantees the shape, so the one way it can fail is the token
 * budget running out mid-object. Then what was written is kept: an answer as far as it got, a call
 * with its unfinished arguments as raw text, which the workflow refuses with a message the model can
 * act on, as it does for any invalid arguments. A `structured` answer (the run has an output schema)
 * is its arguments as JSON text; cut, the unfinished JSON, which the workflow's validation refuses.
 */
export function parseDecision(text: string, structured = false): Decision {
  try {
    const value = JSON.parse(text) as { tool: string; arguments: Record<string, unknown> };
    if (value.tool === ANSWER_TOOL && structured)
      return { kind: 'answer', text: JSON.stringify(value.arguments) };
    if (value.tool === ANSWER_TOOL) {
      return { kind: 'answer', text: typeof value.arguments.text === 'string' ? value.arguments.text : '' };
    }
    return { kind: 'call', tool: value.tool, arguments: value.arguments };
  } catch {
    const partial = structured ? CUT_STRUCTURED.exec(text) : null;
    if (partial) return { kind: 'answer', text: partial[1] ?? '', cut: true };
    const answer = CUT_ANSWER.exec(text);
    if (answer) {
      const written = (answer[1] ?? '').replace(/\\$/, '');
      return { kind: 'answer', text: `${JSON.parse(`"${written}"`) as string}…`, cut: true };
    }
    const call = CUT_CALL.exec(text);
    if (call && call[1] !== ANSWER_TOOL)
      return { kind: 'call', tool: call[1] as string, arguments: call[2] ?? '', cut: true };
    return { kind: 'answer', text: '', cut: true };
  }
}

/** The compact JSON the model writes for a decision, used for few-shot examples and past turns. */
export function decisionText(tool: string, args: unknown): string {
  return JSON.stringify({ tool, arguments: args ?? {} });
}
