import type { ChatMessage, Usage } from '../conversation';
import type { PendingApproval, PendingQuestion } from '../api-shapes';
import type { RunLimitName } from '../run-limits';
import type { ParentLink, ReservableBudgets } from './sub-agents';

/** Where a run is. */
export type AgentStatus =
  'running' | 'waiting_for_approval' | 'waiting_for_input' | 'completed' | 'stopped' | 'failed' | 'cancelled';

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
  state: 'queued' | 'awaiting_approval' | 'awaiting_input' | 'running';
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
  /** Questions to the user and client-tool calls waiting for input (runs that have any). */
  questions?: PendingQuestion[];
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
  /** With an output schema: the final answer parsed, once it matched the schema. */
  output?: unknown;
  stopReason: StopReason | null;
  /** With sub-agents: each child run, running ones first, with what it used so far (in `usage` too). */
  agents?: ChildAgentView[];
  /** A sub-agent's link to the run that started it. */
  parent?: ParentLink;
}

/** One sub-agent call of a run: the child workflow, its status and what it used. */
export interface ChildAgentView {
  toolCallId: string;
  /** The sub-agent's name. */
  agent: string;
  /** The child's workflow id (read it like any run: status, transcript, approve). */
  workflowId: string;
  status: AgentStatus;
  steps: number;
  usage: RunUsage;
  costUsd: number;
  /** The budgets reserved for it from what the parent had left (wall clock in ms). */
  reserved: ReservableBudgets;
  /** Why it failed, when it did. */
  error?: string;
}

/** What a child run tells its parent as it goes (the `subAgentProgress` signal). */
export interface SubAgentProgress {
  toolCallId: string;
  /** When the child sent it (workflow time, ms) and its count in that child execution: signals sent together may arrive in any order, the newest wins. */
  at: number;
  n: number;
  status: AgentStatus;
  steps: number;
  usage: RunUsage;
  costUsd: number;
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
  /** With an output schema (`output` in the input): the final answer parsed as JSON, matching it. */
  output?: unknown;
  /** With an output schema: how many repair turns the run took to match it. */
  outputRepairs?: number;
  /** Where untrusted content entered the conversation, when it did (a parent treats the answer so). */
  untrusted?: string;
  /** With sub-agents: the steps they (and theirs) took, beside the run's own `steps`. */
  agentSteps?: number;
}

/** Decision for a tool call waiting for approval. */
export interface ApprovalDecision {
  toolCallId: string;
  approve: boolean;
  reason?: string;
  /** Approve with these arguments instead (checked against the tool's schema; recorded). */
  args?: unknown;
}
