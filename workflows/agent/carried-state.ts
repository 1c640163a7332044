import type { ChatMessage, ConversationMessage, ToolCall } from '../../shared/conversation';
import type { CitationState } from '../../shared/citations';
import type { NotificationState } from '../../shared/notifications/state';
import type { ContentRef } from '../../shared/content';
import type { McpCatalog } from '../../shared/tools/mcp';
import type { OwnToolCatalog } from '../../shared/tools/own';
import type { AgentEvent } from '../../shared/api-shapes';
import type { ApprovalDecision, RunDefaults, RunUsage, TranscriptEntry } from '../../shared/agent';
import type { CarriedSubAgents } from './sub-agents';

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
  /**
   * Its wait for input (a question or a client tool's result): when it began and ends (ms since the
   * epoch), and the answer once one came.
   */
  question?: { askedAt: number; deadline: number; answer?: { value: unknown; by?: string } };
  /** What the model is told about the call apart from its result (the user edited its arguments). */
  note?: string;
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
  /** The MCP tools discovery found (absent: discovered again). */
  mcp?: McpCatalog;
  /** The worker's own tools the run names, as the worker described them (absent: asked again). */
  own?: OwnToolCatalog;
  /** Repair turns an output schema has taken (runs with `output` only). */
  outputRepairs?: number;
  /** Sub-agents: steps finished children took, and the newest finished ones (runs with `agents` only). */
  agents?: CarriedSubAgents;
}

/** Budget state carried across continue-as-new. */
export interface CarriedBudget {
  /** When the run started (ms since the epoch, workflow time). */
  startedAt: number;
  costUsd: number;
  /** Budgets the user was already warned about. */
  warned: string[];
  /** Time spent waiting for answers that the wall-clock budget does not count (ms). */
  waitedMs?: number;
}
