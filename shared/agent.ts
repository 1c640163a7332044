import { z } from 'zod';
import { schemaOnce } from './schema-once';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ChatMessage, ConversationMessage, ToolCall, Usage } from './conversation';
import type { Citation, CitationState } from './citations';
import type { NotificationState } from './notifications/state';
import { BUDGETS, formatBytes, jsonBytes, overBudgetMessage, utf8Bytes } from './budgets';
import type { ContentRef } from './content';
import type { AgentEvent, PendingApproval } from './api-shapes';
import { ModelChoiceSchema } from './model';
import { TOOL_NAMES } from './tools/registry';
import { inboxUserProblem } from './identifiers';
import { ApprovalPolicySchema, approvalPolicyProblems } from './approvals';
import type { ApprovalPolicy } from './approvals';
import { PriceTableSchema } from './run-budgets';
import type { BudgetName, PriceTable } from './run-budgets';

/** Largest task and system prompt; with the rest they stay under BUDGETS.agentInputBytes. */
export const AGENT_TEXT_BUDGETS = Object.freeze({ task: 128 * 1024, system: 64 * 1024 });

/** A Temporal duration written as milliseconds or as text such as "30 seconds" or "2h". */
const DurationSchema = schemaOnce('shared/agent#DurationSchema', () =>
  z.union([
    z.number().int().nonnegative(),
    z
      .string()
      .regex(
        /^\s*\d+(\.\d+)?\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)\s*$/i,
        'use milliseconds or text such as "30 seconds", "5m", "2h"',
      ),
  ]),
);

/** Limits and rules for one run. */
export const PolicySchema = schemaOnce('shared/agent#PolicySchema', () =>
  z
    .object({
      maxSteps: z.number().int().min(1).max(10_000).default(25).describe('Model turns before the run stops'),
      maxTokens: z
        .number()
        .int()
        .positive()
        .optional()
        .describe('Total input+output tokens before the run stops'),
      maxParallelTools: z.number().int().min(1).max(32).default(4),
      maxInputTokens: z.number().int().positive().optional().describe('Input tokens before the run stops'),
      maxOutputTokens: z.number().int().positive().optional().describe('Output tokens before the run stops'),
      maxCostUsd: z
        .number()
        .positive()
        .optional()
        .describe(
          'Model cost in US dollars before the run stops (prices: `prices`, else the worker’s table)',
        ),
      maxWallClock: DurationSchema.optional().describe('Time from the start of the run before it stops'),
      prices: PriceTableSchema.optional().describe(
        'Model prices for this run, over the worker’s table: "provider:model" → USD per million tokens',
      ),
      requireApproval: z
        .array(z.string())
        .default([])
        .describe('Tool names whose calls always wait for an approve/reject update'),
      approvals: ApprovalPolicySchema.optional().describe(
        'Per-tool approval policies over the worker’s defaults (see README: Approvals and budgets)',
      ),
      approvalTimeout: DurationSchema.default('1 hour'),
      maxContextMessages: z
        .number()
        .int()
        .min(4)
        .max(10_000)
        .default(200)
        .describe('Messages sent to the model per call: the system prompt and task, then the latest ones'),
      contextTokens: z
        .number()
        .int()
        .min(1024)
        .max(10_000_000)
        .optional()
        .describe(
          'The model’s context size in tokens; each call’s window is cut to fit (default per provider)',
        ),
      localActivities: z
        .enum(['never', 'tools', 'auto'])
        .default('never')
        .describe(
          'Quick steps as local activities (no server round trip): "tools" runs the tools declared pure and quick that way, "auto" also the model calls; "never" runs every step as a regular activity',
        ),
      continueAsNewAfterSteps: z
        .number()
        .int()
        .min(1)
        .default(100)
        .describe('Steps in one workflow run before it continues as new (also on the server’s suggestion)'),
    })
    .strict(),
);
/** Limits and rules for one run. */
export type Policy = z.infer<typeof PolicySchema>;

/** Tools a run gets when its input names none. */
export const DEFAULT_TOOLS: readonly string[] = ['get_time', 'calculator'];

/** Input of the agent workflow, validated inside the workflow before anything runs. */
export const AgentInputSchema = schemaOnce('shared/agent#AgentInputSchema', () =>
  z
    .object({
      task: z
        .string()
        .trim()
        .min(1, 'the task must not be empty')
        .refine((t) => utf8Bytes(t) <= AGENT_TEXT_BUDGETS.task, {
          message: `the task must be at most ${formatBytes(AGENT_TEXT_BUDGETS.task)} (UTF-8); put large material in a file the agent can search`,
        }),
      system: z
        .string()
        .refine((t) => utf8Bytes(t) <= AGENT_TEXT_BUDGETS.system, {
          message: `the system prompt must be at most ${formatBytes(AGENT_TEXT_BUDGETS.system)} (UTF-8)`,
        })
        .optional()
        .describe('System prompt; a default one is used when omitted'),
      model: ModelChoiceSchema,
      tools: z
        .array(z.string())
        .default([...DEFAULT_TOOLS])
        .superRefine((names, ctx) => {
          for (const name of names) {
            if (!TOOL_NAMES.includes(name)) {
              ctx.addIssue({
                code: 'custom',
                message: `unknown tool "${name}"; known tools: ${TOOL_NAMES.join(', ')}`,
              });
            }
          }
        }),
      policy: PolicySchema.default(() => PolicySchema.parse({})),
      notify: z
        .object({
          user: z
            .string()
            .superRefine((user, ctx) => {
              const problem = inboxUserProblem(user);
              if (problem) ctx.addIssue({ code: 'custom', message: problem });
            })
            .describe('Also deliver notifications to inbox:<user>'),
        })
        .strict()
        .optional(),
    })
    .strict()
    .superRefine((input, ctx) => {
      const policy = input.policy;
      for (const p of approvalPolicyProblems(policy.approvals, policy.requireApproval, input.tools)) {
        ctx.addIssue({ code: 'custom', message: p.message, path: ['policy', ...p.path] });
      }
    }),
);
/** Input of the agent workflow as callers write it (defaults may be omitted). */
export type AgentInput = z.input<typeof AgentInputSchema>;

/**
 * Checks a raw agent input against the workflow input budget (it is re-sent with every
 * continue-as-new). Returns the problem, or null when it fits.
 */
export function agentInputBudgetProblem(input: unknown): string | null {
  const bytes = jsonBytes(input);
  return bytes > BUDGETS.agentInputBytes
    ? overBudgetMessage('The agent input', bytes, BUDGETS.agentInputBytes)
    : null;
}
/** Input of the agent workflow after validation. */
export type ParsedAgentInput = z.output<typeof AgentInputSchema>;

/** Where a run is. */
export type AgentStatus =
  'running' | 'waiting_for_approval' | 'completed' | 'stopped' | 'failed' | 'cancelled';

/** Why a run stopped. */
export type StopReason =
  | 'final_answer'
  | 'max_steps'
  | 'max_tokens'
  | 'max_input_tokens'
  | 'max_output_tokens'
  | 'max_cost'
  | 'max_wall_clock'
  | 'cancelled';

/** A tool call that was requested and has not finished. */
export interface PendingToolCall {
  toolCallId: string;
  name: string;
  args: unknown;
  step: number;
  state: 'queued' | 'awaiting_approval' | 'running';
}

export type { PendingApproval } from './api-shapes';

export type { AgentEvent } from './api-shapes';

/** Usage counters of a run, across continue-as-new. */
export interface RunUsage extends Usage {
  modelCalls: number;
  toolCalls: number;
}

/** What the `state` query returns. */
export interface AgentStateView {
  status: AgentStatus;
  step: number;
  maxSteps: number;
  usage: RunUsage;
  pendingToolCalls: PendingToolCall[];
  /** Calls waiting for approval, with arguments and deadline. */
  approvals?: PendingApproval[];
  /** Budgets set for the run and how much of each is used (cost in USD, wall-clock in ms). */
  budgets?: Partial<Record<BudgetName, { used: number; max: number }>>;
  /** Model cost so far in US dollars, when prices are known. */
  costUsd?: number;
  /** Where untrusted content entered the conversation, or null. */
  untrusted?: string | null;
  lastError: string | null;
  /** How many times this run continued as new. */
  continuations: number;
  answer: string | null;
  stopReason: StopReason | null;
}

/** One line of the `transcript` query: a message, its text cut to a preview when long. */
export interface TranscriptEntry {
  role: ChatMessage['role'];
  text: string;
  toolCalls?: { id: string; name: string; args: unknown }[];
  toolCallId?: string;
  name?: string;
  isError?: boolean;
  /** Set when `text` is a preview: the whole text's UTF-8 size (read it with `durable-agent transcript`). */
  fullBytes?: number;
}

/** Arguments of the `transcript` query. */
export interface TranscriptQueryArgs {
  /** At most this many entries (newest), default all the run keeps. */
  limit?: number;
  /** Entries before this position (0 = the system prompt), for paging back. */
  before?: number;
}

/**
 * What the `transcript` query returns: the newest entries the run keeps (a bounded recent part of
 * the conversation), where they start, and whether earlier ones exist that are not in the answer.
 */
export interface TranscriptPage {
  entries: TranscriptEntry[];
  /** Position of `entries[0]` in the whole conversation (0 = the system prompt). */
  first: number;
  /** Messages in the whole conversation. */
  total: number;
  /**
   * True when earlier messages are not in `entries` (paged by `limit`, or no longer kept by the run:
   * `durable-agent transcript <id>` reads the whole conversation from history and the content store).
   */
  truncated: boolean;
}

/**
 * Result of a run: the final answer (a budget stop: the model's summary of what was done, or null),
 * why it stopped, and usage.
 */
export interface AgentResult {
  answer: string | null;
  stopReason: StopReason;
  /** When a budget stopped the run: which one, in words, with its use. */
  budget?: string;
  /** Model cost in US dollars, when prices are known. */
  costUsd?: number;
  steps: number;
  usage: RunUsage;
}

/** The conversation as a run carries it: a reference to what is stored, plus what is new since. */
export interface CarriedConversation {
  /** The stored conversation through the last model call's input; null before the first call. */
  ref: ContentRef | null;
  /** System prompt and task to send with the next call: before the first call, or a fork replacing them. */
  head?: ConversationMessage[];
  /** Messages since `ref`, sent with the next model call. */
  unsent: ConversationMessage[];
  /** Messages in the whole conversation, head included. */
  total: number;
  /** Tool call ids of the latest calls, so a provider that repeats an id gets a unique one. */
  recentCallIds: string[];
}

/** A tool call of a turn that was interrupted by continue-as-new. */
export interface CarriedCall {
  call: ToolCall;
  /** Its result, when it finished before the run continued. */
  result?: Extract<ConversationMessage, { role: 'tool' }>;
  /** Its approval wait: when it ends (ms since the epoch), and the decision if one came. */
  approval?: { deadline: number; decision?: ApprovalDecision; reason?: string };
}

/**
 * A turn interrupted by continue-as-new: the history grew past its budget (e.g. a flood of
 * signals) while calls of the turn waited for approval. The new run finishes the turn first.
 */
export interface CarriedTurn {
  step: number;
  calls: CarriedCall[];
}

/**
 * State carried across continue-as-new: everything a run knows, each part within its budget, and
 * large content by reference, so it always fits in one payload.
 */
export interface CarriedState {
  conversation?: CarriedConversation;
  /** A conversation carried by value, by runs of earlier versions (read, never written). */
  messages?: ChatMessage[];
  /** The recent transcript the `transcript` query answers from. */
  transcript?: TranscriptEntry[];
  turn?: CarriedTurn;
  step: number;
  usage: RunUsage;
  events: AgentEvent[];
  eventSeq: number;
  continuations: number;
  pendingUserMessages: string[];
  lastError: string | null;
  toolCallSeq: number;
  notifications?: NotificationState;
  citations?: CitationState;
  /** Budget bookkeeping: start time, cost so far, budgets already warned about. */
  budget?: CarriedBudget;
  /** Where untrusted content entered the conversation. */
  untrusted?: string | null;
  /** The worker's run defaults, read when the run first started. */
  defaults?: RunDefaults;
}

/** What the worker's configuration sets for every run it executes, unless a run says otherwise. */
export interface RunDefaults {
  /** Approval policies per tool; a run's own policy wins tool by tool. */
  approvals?: ApprovalPolicy;
  /** Model prices; a run's `policy.prices` wins model by model. */
  prices?: PriceTable;
}

/** Budget state carried across continue-as-new. */
export interface CarriedBudget {
  /** When the run started (ms since the epoch, workflow time). */
  startedAt: number;
  costUsd: number;
  /** Budgets the user was already warned about. */
  warned: string[];
}

/** Decision for a tool call waiting for approval. */
export interface ApprovalDecision {
  toolCallId: string;
  approve: boolean;
  reason?: string;
  /** Approve with these arguments instead (checked against the tool's schema; recorded). */
  args?: unknown;
}

/** Signal: a user message for the running agent, read before its next model turn. */
export const userMessageSignal = defineSignal<[{ text: string }]>('userMessage');
/** Query: status, step, usage, pending tool calls, last error. */
export const stateQuery = defineQuery<AgentStateView>('state');
/** Query: the recent conversation, message texts as previews; pages back with `before`. */
export const transcriptQuery = defineQuery<TranscriptPage, [TranscriptQueryArgs?]>('transcript');
/** Query: events after `since` (a sequence number), for live progress. */
export const eventsQuery = defineQuery<AgentEvent[], [{ since?: number }?]>('events');
/** Query: every citation of the run (`[[a1]]` → its full search record), for rendering final answers. */
export const citationsQuery = defineQuery<Citation[]>('citations');
/** Update: approve (optionally with edited arguments) or reject a tool call waiting for approval. */
export const approveToolCallUpdate = defineUpdate<
  { toolCallId: string; approved: boolean; editedArgs?: boolean },
  [ApprovalDecision]
>('approveToolCall');

/** Workflow type name of the agent workflow. */
export const AGENT_WORKFLOW_TYPE = 'agentWorkflow';
