import { condition, setHandler, workflowInfo } from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common/lib/time';
import type { Duration } from '@temporalio/common';
import { approvalDecisionShapeProblem, approveToolCallUpdate } from '../../shared/agent/messages';
import type {
  AgentEvent,
  ApprovalDecision,
  ParsedAgentInput,
  PendingApproval,
  PendingToolCall,
} from '../../shared/agent';
import type { CarriedCall } from './carried-state';
import type { ApprovalPolicy } from '../../shared/approvals';
import { summarizeArgs } from '../../shared/approvals';
import { APPROVAL_NOTICE_BOUNDS, approvalNoticeDetail, cut } from '../../shared/approval-notice';
import type { ParentLink } from '../../shared/agent/sub-agents';
import { NotificationPriority } from '../../shared/notifications/schema';
import type { ValidNotificationInput } from '../../shared/notifications/schema';
import type { ToolDefinition } from '../../shared/tools/define';
import { checkToolArgs } from '../../shared/tools/define';
import type { RunMetrics } from '../metrics';

/** What approvals need from the run: its input, events, notifications, policy and whether it stops. */
export interface ApprovalHost {
  readonly input: ParsedAgentInput;
  emit(e: Omit<AgentEvent, 'seq' | 'at' | 'step'>): void;
  setLastError(message: string): void;
  /** Called when calls start or stop waiting for approval (status, search attributes). */
  approvalsChanged(): void;
  /** A notification the run raises itself (also to the user's inbox). */
  raise(notification: ValidNotificationInput): Promise<void>;
  /**
   * The approval policy (run over worker defaults) when the run uses policies; null for runs
   * recorded before them, which ask only for the tools named in `requireApproval`.
   */
  approvalPolicy(): ApprovalPolicy | null;
  /** A budget ended the run while calls wait: waits end and the calls are refused with this text. */
  stopping(): string | null;
  /** The run's metrics: approval waits are counted and timed. */
  readonly metrics: RunMetrics;
}

/** What the gate needs from the tool runner: whether the run is about to continue as new. */
export interface DrainState {
  /** Checks the history budget; true (and from then on) once the run must continue as new. */
  shouldDrain(): boolean;
  /** Whether the run already decided to continue as new. */
  draining(): boolean;
}

interface ApprovalWait {
  decision: ApprovalDecision | null;
  tool: ToolDefinition;
  view: PendingApproval;
}

/** How an approval wait ended: refused (text for the model), or approved (maybe with edited arguments). */
export type ApprovalOutcome = { refused: string } | { approved: true; args?: unknown };

/** Marks a call that stopped because the run is about to continue as new. */
export const INTERRUPTED = Symbol('interrupted');

/**
 * Human in the loop for tool calls: the validated `approveToolCall` update, durable waits until
 * each call's deadline, and the notifications that ask the user and say, in place, how it ended.
 */
export class ApprovalGate {
  private readonly approvals = new Map<string, ApprovalWait>();

  constructor(
    private readonly host: ApprovalHost,
    private readonly drain: DrainState,
  ) {}

  /** The `approveToolCall` update, validated: unknown or decided ids never enter history. */
  registerHandlers(): void {
    setHandler(
      approveToolCallUpdate,
      (decision) => {
        const wait = this.approvals.get(decision.toolCallId);
        if (!wait) throw new Error('unreachable: the validator checks the tool call id');
        if (decision.args !== undefined) {
          const checked = checkToolArgs(wait.tool, decision.args);
          if (!checked.success) throw new Error('unreachable: the validator checks the arguments');
          wait.decision = { ...decision, args: checked.data };
          return { toolCallId: decision.toolCallId, approved: true, editedArgs: true };
        }
        wait.decision = decision;
        return { toolCallId: decision.toolCallId, approved: decision.approve };
      },
      {
        validator: (decision: ApprovalDecision) => {
          const shape = approvalDecisionShapeProblem(decision);
          if (shape) throw new Error(shape);
          const wait = this.approvals.get(decision.toolCallId);
          if (!wait) {
            const waiting = [...this.approvals.keys()];
            throw new Error(
              `No tool call ${decision.toolCallId} is waiting for approval` +
                (waiting.length ? `; waiting: ${waiting.join(', ')}` : '; none is waiting'),
            );
          }
          if (wait.decision) throw new Error(`Tool call ${decision.toolCallId} was already decided`);
          if (decision.args !== undefined) {
            if (!decision.approve) {
              throw new Error('Edited arguments go with an approval; a rejection takes only a reason');
            }
            const checked = checkToolArgs(wait.tool, decision.args);
            if (!checked.success) {
              throw new Error(
                `The edited arguments for ${wait.tool.name} are invalid: ${checked.error
                  .replace(/^Invalid arguments for [a-z0-9_]+: /, '')
                  .replace(/\. Fix them and call the tool again\.$/, '')}`,
              );
            }
          }
        },
      },
    );
  }

  /** Calls waiting for approval, for the `state` query. */
  pendingApprovals(): PendingApproval[] {
    return [...this.approvals.values()].filter((w) => !w.decision).map((w) => ({ ...w.view }));
  }

  /** Whether any call waits for approval. */
  waitingForApproval(): boolean {
    return this.approvals.size > 0;
  }

  /**
   * Waits for an approve/reject update until the call's deadline (kept in the turn, so a continued
   * run waits only for what is left), telling the user what is asked and, in place, how it ended.
   * Returns the outcome, or INTERRUPTED when the run must continue as new first.
   */
  async wait(
    c: CarriedCall,
    pending: PendingToolCall,
    def: ToolDefinition,
    reason: string,
  ): Promise<ApprovalOutcome | typeof INTERRUPTED> {
    const policy = this.host.input.policy;
    const asks = this.host.approvalPolicy() !== null;
    const first = c.approval === undefined;
    const decidedEarlier = c.approval?.decision !== undefined;
    const timeoutMs = msToNumber(policy.approvalTimeout as Duration);
    const approval = (c.approval ??= {
      deadline: Date.now() + timeoutMs,
      ...(asks ? { reason } : {}),
    });
    // From the request (its deadline less the timeout), so a wait carried over continue-as-new counts whole.
    const waited = () => Date.now() - (approval.deadline - timeoutMs);
    const view: PendingApproval = {
      toolCallId: pending.toolCallId,
      tool: pending.name,
      args: pending.args,
      summary: summarizeArgs(pending.args),
      reason,
      step: pending.step,
      deadline: new Date(approval.deadline).toISOString(),
      requestedAt: new Date(approval.deadline - timeoutMs).toISOString(),
    };
    const wait: ApprovalWait = { decision: approval.decision ?? null, tool: def, view };
    pending.state = 'awaiting_approval';
    this.approvals.set(pending.toolCallId, wait);
    this.host.approvalsChanged();
    if (first) {
      this.host.metrics.approvalRequested(def);
      this.host.emit({
        kind: 'approval_requested',
        toolCallId: pending.toolCallId,
        tool: pending.name,
        args: pending.args,
        ...(asks ? { text: reason } : {}),
      });
      if (asks) await this.host.raise(requestNotification(view, true, this.host.input.parent));
    }
    try {
      const remaining = approval.deadline - Date.now();
      if (wait.decision === null && remaining > 0) {
        await condition(
          () => wait.decision !== null || this.drain.shouldDrain() || (asks && this.host.stopping() !== null),
          remaining,
          { summary: approvalTimerSummary(pending) },
        );
      }
      if (wait.decision) approval.decision = wait.decision;
      const stopped = asks && wait.decision === null ? this.host.stopping() : null;
      if (wait.decision === null && this.drain.draining() && stopped === null) return INTERRUPTED;
      if (wait.decision === null) {
        const msg = stopped
          ? `The run stopped (${stopped}) while ${pending.name} waited for approval; the call was not made.`
          : `Approval for ${pending.name} timed out after ${String(policy.approvalTimeout)}; the call was not made.`;
        this.host.setLastError(msg);
        this.host.metrics.approvalResolved(def, stopped ? 'stopped' : 'timed_out', waited());
        this.host.emit({
          kind: 'approval_decided',
          toolCallId: pending.toolCallId,
          tool: pending.name,
          text: msg,
          isError: true,
        });
        await this.host.raise(
          asks
            ? {
                ...requestNotification(view, false, this.host.input.parent),
                title: `${stopped ? 'Not asked any more' : 'Approval timed out'}: ${cut(pending.name, APPROVAL_NOTICE_BOUNDS.toolChars)}`,
                message: `${msg} Asked: ${view.summary}`,
              }
            : {
                type: 'warning',
                priority: NotificationPriority.HIGH,
                title: 'Approval timed out',
                message: msg,
                detail: '',
                display_time: 30,
                group: 'approvals',
              },
        );
        return { refused: `${msg} Ask the user before trying again.` };
      }
      const d = wait.decision;
      const edited = d.approve && d.args !== undefined;
      const said = d.approve
        ? edited
          ? `approved with edited arguments: ${summarizeArgs(d.args)}`
          : 'approved'
        : `rejected${d.reason ? `: ${d.reason}` : ''}`;
      if (!decidedEarlier) {
        this.host.metrics.approvalResolved(def, d.approve ? 'approved' : 'rejected', waited());
        this.host.emit({
          kind: 'approval_decided',
          toolCallId: pending.toolCallId,
          tool: pending.name,
          text: said,
          ...(edited ? { args: d.args } : {}),
        });
        if (asks) {
          await this.host.raise({
            ...requestNotification(view, false, this.host.input.parent),
            type: d.approve ? 'info' : 'warning',
            priority: NotificationPriority.NORMAL,
            title: `${d.approve ? 'Approved' : 'Rejected'}: ${cut(pending.name, APPROVAL_NOTICE_BOUNDS.toolChars)}`,
            message: `${pending.name} ${said}. Asked: ${view.summary}`,
          });
        }
      }
      return d.approve
        ? { approved: true, ...(edited ? { args: d.args } : {}) }
        : {
            refused: `The user rejected this call${d.reason ? `: ${d.reason}` : ''}. Do not retry it as is.`,
          };
    } finally {
      this.approvals.delete(pending.toolCallId);
      pending.state = 'queued';
      this.host.approvalsChanged();
    }
  }
}

/**
 * What an approval wait's timer is named in history (its summary), so transcripts and the Temporal
 * UI say which call's timeout it is, e.g. `approval timeout for calculator (call_1)`. Tool names are
 * cut and call ids are at most 64 characters, well within the summary's 400-byte limit.
 */
function approvalTimerSummary(call: { name: string; toolCallId: string }): string {
  return `approval timeout for ${call.name.slice(0, 64)} (${call.toolCallId.slice(0, 64)})`;
}

/** The id of a call's approval notification: one item, updated in place as the request ends. */
function approvalNotificationId(toolCallId: string): string {
  return `approval:${workflowInfo().workflowId}:${toolCallId}`.slice(0, 200);
}

/**
 * The HIGH warning that asks the user: what (tool, arguments), why, until when, in which run, and
 * how to answer (shared/approval-notice.ts). The notices that say how it ended reuse it with
 * `waiting` false, so the item keeps its run and arguments but no longer offers to answer.
 */
function requestNotification(
  view: PendingApproval,
  waiting: boolean,
  parent: ParentLink | undefined,
): ValidNotificationInput {
  const tool = cut(view.tool, APPROVAL_NOTICE_BOUNDS.toolChars);
  // A sub-agent's request names the run that started it, so the user knows which job asks.
  const of = parent ? ` (sub-agent ${cut(parent.agent, 64)} of run ${cut(parent.workflowId, 256)})` : '';
  return {
    id: approvalNotificationId(view.toolCallId),
    type: 'warning',
    priority: NotificationPriority.HIGH,
    title: `Approval needed: ${tool}`,
    message: `${tool} waits for your decision until ${view.deadline}${of} (${cut(view.reason, APPROVAL_NOTICE_BOUNDS.reasonChars)}). Asked: ${view.summary}`,
    detail: approvalNoticeDetail({
      run: workflowInfo().workflowId,
      toolCallId: view.toolCallId,
      tool: view.tool,
      args: view.args,
      deadline: view.deadline,
      waiting,
      ...(parent ? { parent: { run: parent.workflowId, agent: parent.agent } } : {}),
    }),
    display_time: 30,
    group: 'approvals',
  };
}
