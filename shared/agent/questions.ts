/**
 * Questions a run asks a person, and calls of client-side tools: the two ways a run waits for input
 * from outside that is not an approval. Both are a pending tool call whose answer (or result) is a
 * JSON value, checked against a JSON Schema by the run's validator before it enters history, so a
 * wrong answer is refused with the reason and the call keeps waiting. Pure and deterministic: the
 * workflow, every door and the browser's types read it.
 */
import { z } from 'zod';
import { schemaOnce } from '../schema-once';
import { formatBytes, jsonBytes, utf8Bytes } from '../temporal-limits';
import { formatOutputIssues, outputSchemaProblems, validateOutput } from './output-schema';
import type { OutputSchema } from './output-schema';

export type { PendingQuestion, QuestionKind } from '../api-shapes';

/** The built-in tool that asks the run's user a question. */
export const ASK_USER_TOOL = 'ask_user';

/**
 * Bounds of questions and client-side tools. An answer enters history (the update) and the
 * conversation by value (it never passes an activity that could store it by reference), so
 * `answerBytes` times `open` stays well under the model input's budget
 * (`SIZE_BUDGETS.modelInputBytes`, 512 KB) and the continue-as-new input that carries a turn.
 */
export const QUESTION_LIMITS = Object.freeze({
  /** Characters of a question's text. */
  questionChars: 4000,
  /** One answer or client-tool result, as JSON (UTF-8 bytes). */
  answerBytes: 32 * 1024,
  /** Deepest nesting of arrays and objects in an answer (validation recurses through it). */
  answerDepth: 32,
  /** Questions and client-tool calls of one run waiting at once; a call past it gets a tool error. */
  open: 8,
  /** Client-side tools one run may declare. */
  clientTools: 32,
  /** Characters of a client tool's description. */
  descriptionChars: 2000,
  /** Characters of the name of the door that answered (`web`, `cli`, `mcp`, …). */
  byChars: 64,
  /** Longest timeout a question or client-tool call may have, in seconds (30 days). */
  maxTimeoutSeconds: 30 * 24 * 3600,
} as const);

/** How long a question or client-tool call waits when neither the call nor the run's policy says. */
export const DEFAULT_QUESTION_TIMEOUT = '1 day';

/** Problems of a JSON Schema given for an answer or a client tool's arguments or result (empty: usable). */
export function answerSchemaProblems(schema: unknown): string[] {
  // The in-house validator of output schemas; shared/tools/json-schema-check.ts may take its place.
  return outputSchemaProblems(schema);
}

/** An answer read against its schema: the value, or why it is refused (one line, for people). */
export type CheckedAnswer = { ok: true; value: unknown } | { ok: false; error: string };

/** How deep arrays and objects nest in a value (bounded: stops counting past `limit`). */
function depthOf(value: unknown, limit: number, depth = 0): number {
  if (depth > limit || value === null || typeof value !== 'object') return depth;
  let deepest = depth + 1;
  for (const v of Array.isArray(value) ? value : Object.values(value as Record<string, unknown>)) {
    deepest = Math.max(deepest, depthOf(v, limit, depth + 1));
    if (deepest > limit) break;
  }
  return deepest;
}

/**
 * Checks an answer: JSON of at most `QUESTION_LIMITS.answerBytes`, not nested past
 * `answerDepth`, matching `schema` when one is given. The one check every door and the workflow
 * use, so the reasons read the same everywhere.
 */
export function checkAnswer(schema: OutputSchema | undefined, value: unknown): CheckedAnswer {
  if (value === undefined) return { ok: false, error: 'no answer was given (send a JSON value)' };
  const bytes = jsonBytes(value);
  if (bytes > QUESTION_LIMITS.answerBytes) {
    return {
      ok: false,
      error: `the answer is ${formatBytes(bytes)} as JSON; at most ${formatBytes(QUESTION_LIMITS.answerBytes)} is accepted`,
    };
  }
  if (depthOf(value, QUESTION_LIMITS.answerDepth) > QUESTION_LIMITS.answerDepth) {
    return { ok: false, error: `the answer nests deeper than ${QUESTION_LIMITS.answerDepth} levels` };
  }
  if (!schema) return { ok: true, value };
  const issues = validateOutput(schema, value);
  return issues.length
    ? { ok: false, error: formatOutputIssues(issues).replace(/\(answer\)/g, 'the answer') }
    : { ok: true, value };
}

/**
 * An answer typed as text (a terminal, a form field with no schema) read as the schema wants it: a
 * string schema (or none) takes the text as it is; otherwise the text must be JSON. Malformed JSON
 * is refused with the parser's reason.
 */
export function answerFromText(
  schema: OutputSchema | undefined,
  text: string,
): { ok: true; value: unknown } | { ok: false; error: string } {
  if (!schema || schema.type === 'string') return { ok: true, value: text };
  // A choice among strings takes the text too.
  if (Array.isArray(schema.enum) && schema.enum.every((e) => typeof e === 'string'))
    return { ok: true, value: text };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, error: `the answer is not valid JSON: ${(err as Error).message}` };
  }
}

/** What the model reads as an answer: text as it is, anything else as JSON. */
export function answerText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
}

/** The argument of the `answerQuestion` update: the call it answers and the answer. */
export interface QuestionAnswer {
  toolCallId: string;
  /** Any JSON value; checked against the call's schema by the run's validator. */
  answer: unknown;
  /** Which door answered (`web`, `cli`, `api`, `mcp`, `sdk`, …), shown to the user; at most 64 characters. */
  by?: string;
}

/** What the `answerQuestion` update returns once the answer is taken. */
export interface QuestionAnswered {
  toolCallId: string;
  answered: true;
}

/**
 * Failure types the run's validator refuses an answer with (the client's typed errors follow them):
 * no such call waits, it was answered already, or the answer does not fit.
 */
export const ANSWER_REFUSALS = {
  notWaiting: 'QuestionNotWaiting',
  alreadyAnswered: 'QuestionAlreadyAnswered',
  invalid: 'InvalidAnswer',
} as const;

/** A name of a client-side tool: snake_case as models expect, like built-in tools. */
const CLIENT_TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** A JSON Schema field of a client tool, checked by {@link answerSchemaProblems}. */
function schemaField(what: 'input' | 'output') {
  return z.custom<OutputSchema>().superRefine((schema, ctx) => {
    for (const message of answerSchemaProblems(schema)) ctx.addIssue({ code: 'custom', message });
    if (what === 'input' && typeof schema === 'object' && schema !== null && schema.type !== 'object')
      ctx.addIssue({ code: 'custom', message: 'a client tool’s input schema must be of type "object"' });
  });
}

/** One client-side tool a run declares: its body runs in the client, not on any worker. */
export const ClientToolSpecSchema = schemaOnce('shared/agent/questions#ClientToolSpecSchema', () =>
  z
    .object({
      description: z
        .string()
        .trim()
        .min(1, 'say what the tool does: the model reads it to decide when to call it')
        .max(QUESTION_LIMITS.descriptionChars),
      input: schemaField('input')
        .optional()
        .describe('JSON Schema of the arguments the model calls it with; default: an object of anything'),
      output: schemaField('output')
        .optional()
        .describe('JSON Schema the result a client submits must match; default: any JSON'),
      timeoutSeconds: z
        .number()
        .int()
        .min(1)
        .max(QUESTION_LIMITS.maxTimeoutSeconds)
        .optional()
        .describe('How long a call waits for its result; default policy.questionTimeout'),
    })
    .strict(),
);
/** One client-side tool a run declares. */
export type ClientToolSpec = z.infer<typeof ClientToolSpecSchema>;

/** The `clientTools` of a run: name → spec. */
export const ClientToolsSchema = schemaOnce('shared/agent/questions#ClientToolsSchema', () =>
  z
    .record(
      z.string().regex(CLIENT_TOOL_NAME, 'a client tool name is snake_case: a-z, 0-9, _ (at most 64)'),
      ClientToolSpecSchema,
    )
    .refine((tools) => Object.keys(tools).length <= QUESTION_LIMITS.clientTools, {
      message: `at most ${QUESTION_LIMITS.clientTools} client tools per run`,
    }),
);

/** The arguments schema a client tool without one gets: an object of anything. */
export const DEFAULT_CLIENT_TOOL_INPUT: OutputSchema = Object.freeze({ type: 'object' });

/** Text of a question, checked: non-empty and bounded. */
export function questionTextProblem(text: string): string | null {
  if (!text.trim()) return 'the question must not be empty';
  if (text.length > QUESTION_LIMITS.questionChars)
    return `the question must be at most ${QUESTION_LIMITS.questionChars} characters`;
  return null;
}

/** Whether `by` is an acceptable name of a door. */
export function doorNameProblem(by: unknown): string | null {
  if (by === undefined) return null;
  return typeof by === 'string' && by.length > 0 && utf8Bytes(by) <= QUESTION_LIMITS.byChars
    ? null
    : `by must be a short name of who answers (at most ${QUESTION_LIMITS.byChars} characters)`;
}

/** What an answer must be, in words for a person at a terminal or in a chat: `one of "a", "b"`. */
export function describeAnswerSchema(schema: OutputSchema | undefined): string {
  if (!schema) return 'free text';
  const show = (v: unknown) => JSON.stringify(v);
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map(show).join(', ')}`;
  const range = (s: OutputSchema) =>
    [
      typeof s.minimum === 'number' ? `at least ${s.minimum}` : '',
      typeof s.maximum === 'number' ? `at most ${s.maximum}` : '',
    ]
      .filter(Boolean)
      .join(', ');
  switch (schema.type) {
    case 'boolean':
      return 'yes or no';
    case 'integer':
    case 'number': {
      const r = range(schema);
      return `${schema.type === 'integer' ? 'a whole number' : 'a number'}${r ? ` (${r})` : ''}`;
    }
    case 'string':
      if (schema.format === 'date') return 'a date (YYYY-MM-DD)';
      if (schema.format === 'date-time') return 'a date and time (ISO 8601)';
      return 'text';
    case 'object': {
      const props = Object.keys((schema.properties as Record<string, unknown> | undefined) ?? {});
      const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      return `a JSON object${props.length ? ` with ${props.join(', ')}` : ''}${required.length ? ` (required: ${required.join(', ')})` : ''}`;
    }
    case 'array':
      return 'a JSON list';
    default:
      return 'JSON matching the question’s schema';
  }
}
