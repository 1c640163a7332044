import { z } from 'zod';
import { schemaOnce } from './schema-once';
import type { ContentRef } from './content';
import type { ConversationMessage, ToolCall, Usage } from './conversation';

/** Token counts a scripted turn reports instead of its estimate (for exact budget tests). */
const ScriptedUsageSchema = schemaOnce('shared/model#ScriptedUsageSchema', () =>
  z
    .object({ inputTokens: z.number().int().nonnegative(), outputTokens: z.number().int().nonnegative() })
    .strict()
    .optional()
    .describe('Usage this turn reports, instead of the estimate (4 characters a token)'),
);

/** One scripted model turn: either tool calls or a final answer (text may use `{{last_tool_results}}`). */
/** Pace of a scripted turn's live tokens: milliseconds between words (default 0: all at once). */
const TokenDelaySchema = z
  .number()
  .int()
  .min(0)
  .max(1000)
  .optional()
  .describe(
    'Milliseconds between the pieces of the turn as it streams (live tokens: the words of its text, a few characters of its tool calls’ arguments at a time); default 0',
  );

export const ScriptedTurnSchema = schemaOnce('shared/model#ScriptedTurnSchema', () =>
  z.union([
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
      usage: ScriptedUsageSchema,
      tokenDelayMs: TokenDelaySchema,
    }),
    z.object({ content: z.string(), usage: ScriptedUsageSchema, tokenDelayMs: TokenDelaySchema }),
  ]),
);
/** A scripted model turn. */
export type ScriptedTurn = z.infer<typeof ScriptedTurnSchema>;

/** Most tokens one local-model decision may take: bounds the CPU time of one call. */
export const LOCAL_MAX_TOKENS_LIMIT = 2048;
/** Tokens one local-model decision may take unless the run says otherwise: room for the longest answer. */
export const LOCAL_DEFAULT_MAX_TOKENS = 512;

/** The model a run uses. Keys and endpoints are not here: the worker's configuration holds them. */
export const ModelChoiceSchema = schemaOnce('shared/model#ModelChoiceSchema', () =>
  z.discriminatedUnion('provider', [
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
  ]),
);
/** The model a run uses. */
export type ModelChoice = z.infer<typeof ModelChoiceSchema>;

/** A tool as the model sees it: name, description and JSON Schema of its arguments. */
export interface ModelToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/**
 * Context size, in tokens, assumed for a provider's models when the run's policy gives none. The
 * window each call sends is cut to fit it (see shared/context-window.ts).
 */
export const DEFAULT_CONTEXT_TOKENS: Readonly<Record<ModelChoice['provider'], number>> = Object.freeze({
  scripted: 128_000,
  openai: 128_000,
  anthropic: 200_000,
  // The local model's own context (activities/model/local) is 4,096 tokens.
  local: 4096,
});

/** How the model activity cuts the window it sends (from the run's policy). */
export interface WindowSettings {
  /** At most this many messages after the system prompt and task. */
  maxMessages: number;
  /** The model's context size in tokens; the provider's default when absent. */
  contextTokens?: number;
}

/**
 * Input of the `callModel` activity. It does not repeat the conversation: it names what the
 * previous call stored (`conversation`) and carries only what is new since then, so a model call
 * adds to history only its new messages, however long the run.
 */
export interface CallModelInput {
  model: ModelChoice;
  /** Names of the built-in tools offered; the activity turns them into provider tool specs. */
  tools: string[];
  /** The run's MCP tools as discovery stored them (model-facing specs), offered after the built-in ones. */
  mcpTools?: ContentRef;
  /** The worker's own tools the run names, as the worker stored their model-facing specs; offered after the MCP tools. */
  ownTools?: ContentRef;
  /** The run's sub-agents as tools (bounded: SUB_AGENT_LIMITS), offered after the own tools. */
  agentTools?: ModelToolSpec[];
  /** The run's client-side tools (bounded: QUESTION_LIMITS.clientTools), offered last. */
  clientTools?: ModelToolSpec[];
  /** The run's step (model turn number, from 1); the scripted model plays the turn of this step. */
  step?: number;
  /** The conversation through the previous call's input, as that call returned it; absent at first. */
  conversation?: ContentRef | null;
  /** System prompt and task: on a run's first call, or to replace them (a fork with another prompt). */
  head?: ConversationMessage[];
  /** Messages since `conversation` (the previous answer, tool results, user messages). */
  messages: ConversationMessage[];
  /** How the window is cut; defaults apply when absent. */
  window?: WindowSettings;
  /**
   * The JSON Schema the final answer must match (the run's `output`), asked of the provider
   * natively where it can: absent for runs without one.
   */
  output?: Record<string, unknown>;
}

/** What a model call sent: how many messages, how many results were elided, estimated tokens. */
export interface WindowReport {
  messages: number;
  elided: number;
  dropped: number;
  tokens: number;
}

/** Output of the `callModel` activity. */
export interface CallModelOutput {
  content: string | null;
  toolCalls: ToolCall[];
  usage: Usage;
  /** Provider-reported reason the turn ended (e.g. `stop`, `tool_calls`, `end_turn`), for transcripts. */
  finishReason: string | null;
  /** The conversation including this call's input (not its answer): the next call's `conversation`. */
  conversation?: ContentRef;
  /** What this call sent to the model. */
  window?: WindowReport;
}
