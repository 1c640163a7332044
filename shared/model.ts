import { z } from 'zod';
import type { ChatMessage, ToolCall, Usage } from './conversation';

/** One scripted model turn: either tool calls or a final answer (text may use `{{last_tool_results}}`). */
export const ScriptedTurnSchema = z.union([
  z.object({
    toolCalls: z
      .array(
        z.object({
          id: z.string().min(1).optional().describe('Tool call id; generated from the step when omitted'),
          name: z.string().min(1),
          arguments: z.unknown(),
        }),
      )
      .min(1),
    content: z.string().optional(),
  }),
  z.object({ content: z.string() }),
]);
/** A scripted model turn. */
export type ScriptedTurn = z.infer<typeof ScriptedTurnSchema>;

/** Most tokens one local-model decision may take: bounds the CPU time of one call. */
export const LOCAL_MAX_TOKENS_LIMIT = 2048;
/** Tokens one local-model decision may take unless the run says otherwise: room for the longest answer. */
export const LOCAL_DEFAULT_MAX_TOKENS = 512;

/** The model a run uses. Keys and endpoints are not here: the worker's configuration holds them. */
export const ModelChoiceSchema = z.discriminatedUnion('provider', [
  z
    .object({
      provider: z.literal('scripted'),
      script: z
        .string()
        .min(1)
        .optional()
        .describe('Name of a script file in the worker’s scripts folder, e.g. "demo"'),
      turns: z.array(ScriptedTurnSchema).min(1).optional().describe('Inline turns, for tests'),
    })
    .refine((m) => (m.script === undefined) !== (m.turns === undefined), {
      message: 'give exactly one of "script" or "turns" for the scripted model',
    }),
  z.object({
    provider: z.literal('openai'),
    model: z.string().min(1),
    temperature: z.number().min(0).max(2).optional(),
    maxTokens: z.number().int().positive().optional(),
  }),
  z.object({
    provider: z.literal('local'),
    model: z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/,
        'a file name in the worker’s models folder, e.g. "my-model.gguf"',
      )
      .optional()
      .describe('GGUF file in the worker’s models folder; omit for the worker’s configured local model'),
    maxTokens: z
      .number()
      .int()
      .min(32)
      .max(LOCAL_MAX_TOKENS_LIMIT)
      .default(LOCAL_DEFAULT_MAX_TOKENS)
      .describe('Tokens one decision may take (a tool call or the answer)'),
  }),
  z.object({
    provider: z.literal('anthropic'),
    model: z.string().min(1),
    temperature: z.number().min(0).max(1).optional(),
    maxTokens: z.number().int().positive().default(1024),
  }),
]);
/** The model a run uses. */
export type ModelChoice = z.infer<typeof ModelChoiceSchema>;

/** A tool as the model sees it: name, description and JSON Schema of its arguments. */
export interface ModelToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** Input of the `callModel` activity. */
export interface CallModelInput {
  model: ModelChoice;
  messages: ChatMessage[];
  /** Names of the tools offered; the activity turns them into provider tool specs. */
  tools: string[];
  /** The run's step (model turn number, from 1); the scripted model plays the turn of this step. */
  step?: number;
}

/** Output of the `callModel` activity. */
export interface CallModelOutput {
  content: string | null;
  toolCalls: ToolCall[];
  usage: Usage;
  /** Provider-reported reason the turn ended (e.g. `stop`, `tool_calls`, `end_turn`), for transcripts. */
  finishReason: string | null;
}
