import type { ChatMessage, Usage } from '../conversation';
import type { PendingApproval } from '../api-shapes';
import type { RunLimitName } from '../run-limits';

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

export type { PendingApproval } from '../api-shapes';

export type { AgentEvent } from '../api-shapes';

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
  budgets?: Partial<Record<RunLimitName, { used: number; max: number }>>;
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

/** Decision for a tool call waiting for approval. */
export interface ApprovalDecision {
  toolCallId: string;
  approve: boolean;
  reason?: string;
  /** Approve with these arguments instead (checked against the tool's schema; recorded). */
  args?: unknown;
}
