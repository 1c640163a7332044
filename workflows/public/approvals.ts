/**
 * Approvals in your own workflows: ask a person yes or no, and wait durably (days if need be) for
 * the answer. Answers arrive as the same `approveToolCall` update agent runs take, so every door
 * that approves a tool call approves these too (`durable-agent approve <workflow id> <key>`, the
 * HTTP API, the client SDK).
 */
import type { Duration } from '@temporalio/common';
import { ApplicationFailure, condition, setHandler, workflowInfo } from '@temporalio/workflow';
import type { ApprovalDecision } from '../../shared/agent';
import { approvalDecisionShapeProblem, approveToolCallUpdate } from '../../shared/agent/messages';
import { NotificationPriority } from '../../shared/notifications/schema';
import { notifyInbox } from './notify';

/** A question for a person. */
export interface ApprovalRequest {
  /** The id people answer with, unique in your workflow; default `approval-1`, `approval-2`, … */
  key?: string;
  /** What is asked, in a few words (the notification's title). */
  title: string;
  /** What happens on yes, and why it needs a person. */
  message: string;
  /** Whose inbox gets a HIGH notification about it (updated in place once answered); none when absent. */
  user?: string;
  /** How long to wait before the answer counts as no; default 1 hour. */
  timeout?: Duration;
}

/** What the person decided. */
export interface ApprovalOutcome {
  approved: boolean;
  /** Their reason, when they gave one. */
  reason?: string;
  /** Nobody answered within the timeout (then `approved` is false). */
  timedOut: boolean;
}

/**
 * The approval requests of one workflow. Make one at the top of your workflow function (it
 * registers the update handler), then `await approvals.request({...})` wherever a step needs a yes.
 */
export class ApprovalRequests {
  private readonly waiting = new Map<string, { decision?: ApprovalDecision }>();
  private count = 0;

  constructor() {
    setHandler(
      approveToolCallUpdate,
      (decision) => {
        const entry = this.waiting.get(decision.toolCallId);
        if (entry) entry.decision = decision;
        return { toolCallId: decision.toolCallId, approved: decision.approve };
      },
      {
        validator: (decision: ApprovalDecision) => {
          const shape = approvalDecisionShapeProblem(decision);
          if (shape) throw new Error(shape);
          const entry = this.waiting.get(decision.toolCallId);
          if (!entry) {
            const keys = [...this.waiting.keys()];
            throw new Error(
              `No approval request "${decision.toolCallId.slice(0, 100)}" waits in this workflow; ${
                keys.length ? `waiting: ${keys.join(', ')}` : 'none waits now'
              }`,
            );
          }
          if (entry.decision) throw new Error(`Approval request "${decision.toolCallId}" is already decided`);
        },
      },
    );
  }

  /** Asks and waits for the answer (or the timeout, which counts as no). */
  async request(req: ApprovalRequest): Promise<ApprovalOutcome> {
    const key = req.key ?? `approval-${++this.count}`;
    if (this.waiting.has(key)) {
      throw ApplicationFailure.create({
        type: 'InvalidApprovalRequest',
        message: `An approval request "${key}" already waits; give each request its own key`,
        nonRetryable: true,
      });
    }
    const entry: { decision?: ApprovalDecision } = {};
    this.waiting.set(key, entry);
    const workflowId = workflowInfo().workflowId;
    const notice = req.user
      ? await notifyInbox(req.user, {
          type: 'warning',
          priority: NotificationPriority.HIGH,
          title: req.title,
          message: `${req.message}\nAnswer with: durable-agent approve ${workflowId} ${key} (or reject ${workflowId} ${key})`,
          display_time: 30,
          group: 'approvals',
        })
      : undefined;
    try {
      const decided = await condition(() => entry.decision !== undefined, req.timeout ?? '1 hour');
      const outcome: ApprovalOutcome = decided
        ? {
            approved: entry.decision?.approve === true,
            ...(entry.decision?.reason ? { reason: entry.decision.reason } : {}),
            timedOut: false,
          }
        : { approved: false, timedOut: true };
      if (req.user && notice) {
        await notifyInbox(req.user, {
          id: notice,
          type: outcome.approved ? 'success' : 'info',
          title: req.title,
          message: outcome.timedOut
            ? 'Nobody answered in time: counted as no.'
            : outcome.approved
              ? 'Approved.'
              : `Rejected${outcome.reason ? `: ${outcome.reason}` : '.'}`,
          group: 'approvals',
        });
      }
      return outcome;
    } finally {
      this.waiting.delete(key);
    }
  }
}
