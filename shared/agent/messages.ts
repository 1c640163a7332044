import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Citation } from '../citations';
import type { AgentEvent } from '../api-shapes';
import type {
  AgentStateView,
  ApprovalDecision,
  SubAgentProgress,
  TranscriptPage,
  TranscriptQueryArgs,
} from './views';
import type { QuestionAnswer, QuestionAnswered } from './questions';

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

/** Longest reason a decision may carry. */
export const MAX_DECISION_REASON_CHARS = 2000;

/**
 * What is wrong with the shape of an {@link approveToolCallUpdate} decision, or null: what every
 * workflow that takes the update checks in its validator first, in the same words.
 */
export function approvalDecisionShapeProblem(decision: ApprovalDecision | undefined): string | null {
  if (typeof decision?.toolCallId !== 'string' || typeof decision.approve !== 'boolean') {
    return 'Give { toolCallId: string, approve: boolean, reason?: string }';
  }
  if (
    decision.reason !== undefined &&
    (typeof decision.reason !== 'string' || decision.reason.length > MAX_DECISION_REASON_CHARS)
  ) {
    return 'reason must be a string of at most 2,000 characters';
  }
  return null;
}

/**
 * Update: answer a question (`ask_user`) or submit a client-side tool's result. The validator checks
 * the answer against the call's schema before it enters history; a refusal says why.
 */
export const answerQuestionUpdate = defineUpdate<QuestionAnswered, [QuestionAnswer]>('answerQuestion');

/** Signal: a sub-agent (child run) tells its parent what it used so far and its status. */
export const subAgentProgressSignal = defineSignal<[SubAgentProgress]>('subAgentProgress');

/** Workflow type name of the agent workflow. */
export const AGENT_WORKFLOW_TYPE = 'agentWorkflow';
