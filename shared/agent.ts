import { z } from 'zod';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ChatMessage, Usage } from './conversation';
import type { Citation, CitationState } from './citations';
import type { NotificationState } from './notifications/state';
import { ModelChoiceSchema } from './model';
import { TOOL_NAMES } from './tools/registry';

/** A Temporal duration written as milliseconds or as text such as "30 seconds" or "2h". */
const DurationSchema = z.union([
  z.number().int().nonnegative(),
  z
    .string()
    .regex(
      /^\s*\d+(\.\d+)?\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)\s*$/i,
      'use milliseconds or text such as "30 seconds", "5m", "2h"',
    ),
]);

/** Limits and rules for one run. */
export const PolicySchema = z
  .object({
    maxSteps: z.number().int().min(1).max(10_000).default(25).describe('Model turns before the run stops'),
    maxTokens: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Total input+output tokens before the run stops'),
    maxParallelTools: z.number().int().min(1).max(32).default(4),
    requireApproval: z
      .array(z.string())
      .default([])
      .describe('Tool names whose calls wait for an approve/reject update'),
    approvalTimeout: DurationSchema.default('1 hour'),
    maxContextMessages: z
      .number()
      .int()
      .min(4)
      .default(200)
      .describe('Messages sent to the model per call: the system prompt and task, then the latest ones'),
    continueAsNewAfterSteps: z
      .number()
      .int()
      .min(1)
      .default(100)
      .describe('Steps in one workflow run before it continues as new (also on the server’s suggestion)'),
  })
  .strict();
/** Limits and rules for one run. */
export type Policy = z.infer<typeof PolicySchema>;

/** Input of the agent workflow, validated inside the workflow before anything runs. */
export const AgentInputSchema = z
  .object({
    task: z.string().trim().min(1, 'the task must not be empty').max(100_000),
    system: z.string().max(100_000).optional().describe('System prompt; a default one is used when omitted'),
    model: ModelChoiceSchema,
    tools: z
      .array(z.string())
      .default(['get_time', 'calculator'])
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
      .object({ user: z.string().min(1).max(200).describe('Also deliver notifications to inbox:<user>') })
      .strict()
      .optional(),
  })
  .strict();
/** Input of the agent workflow as callers write it (defaults may be omitted). */
export type AgentInput = z.input<typeof AgentInputSchema>;
/** Input of the agent workflow after validation. */
export type ParsedAgentInput = z.output<typeof AgentInputSchema>;

/** Where a run is. */
export type AgentStatus =
  'running' | 'waiting_for_approval' | 'completed' | 'stopped' | 'failed' | 'cancelled';

/** Why a run stopped. */
export type StopReason = 'final_answer' | 'max_steps' | 'max_tokens' | 'cancelled';

/** A tool call that was requested and has not finished. */
export interface PendingToolCall {
  toolCallId: string;
  name: string;
  args: unknown;
  step: number;
  state: 'queued' | 'awaiting_approval' | 'running';
}

/** Something that happened in a run, for live progress in CLIs and UIs. */
export interface AgentEvent {
  seq: number;
  at: string;
  step: number;
  kind:
    | 'model_started'
    | 'model_finished'
    | 'tool_started'
    | 'tool_finished'
    | 'tool_rejected'
    | 'approval_requested'
    | 'approval_decided'
    | 'user_message'
    | 'continued_as_new'
    | 'final_answer'
    | 'stopped'
    | 'error';
  toolCallId?: string;
  tool?: string;
  args?: unknown;
  text?: string;
  isError?: boolean;
  durationMs?: number;
}

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
  lastError: string | null;
  /** How many times this run continued as new. */
  continuations: number;
  answer: string | null;
  stopReason: StopReason | null;
}

/** One line of the `transcript` query. */
export interface TranscriptEntry {
  role: ChatMessage['role'];
  text: string;
  toolCalls?: { id: string; name: string; args: unknown }[];
  toolCallId?: string;
  name?: string;
  isError?: boolean;
}

/** Result of a run: the final answer (null when a budget stopped it), why it stopped, and usage. */
export interface AgentResult {
  answer: string | null;
  stopReason: StopReason;
  steps: number;
  usage: RunUsage;
}

/** State carried across continue-as-new. Everything a run knows goes here; nothing is dropped. */
export interface CarriedState {
  messages: ChatMessage[];
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
}

/** Decision for a tool call waiting for approval. */
export interface ApprovalDecision {
  toolCallId: string;
  approve: boolean;
  reason?: string;
}

/** Signal: a user message for the running agent, read before its next model turn. */
export const userMessageSignal = defineSignal<[{ text: string }]>('userMessage');
/** Query: status, step, usage, pending tool calls, last error. */
export const stateQuery = defineQuery<AgentStateView>('state');
/** Query: the conversation so far, compacted for display. */
export const transcriptQuery = defineQuery<TranscriptEntry[]>('transcript');
/** Query: events after `since` (a sequence number), for live progress. */
export const eventsQuery = defineQuery<AgentEvent[], [{ since?: number }?]>('events');
/** Query: every citation of the run (`[[a1]]` → its full search record), for rendering final answers. */
export const citationsQuery = defineQuery<Citation[]>('citations');
/** Update: approve or reject a tool call that is waiting for approval. */
export const approveToolCallUpdate = defineUpdate<
  { toolCallId: string; approved: boolean },
  [ApprovalDecision]
>('approveToolCall');

/** Workflow type name of the agent workflow. */
export const AGENT_WORKFLOW_TYPE = 'agentWorkflow';
