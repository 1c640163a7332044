import {
  ActivityFailure,
  condition,
  isCancellation,
  patched,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common/lib/time';
import type { Duration } from '@temporalio/common';
import type { ToolActivity } from '../../activities/types';
import { approveToolCallUpdate } from '../../shared/agent';
import type {
  AgentEvent,
  ApprovalDecision,
  CarriedCall,
  CarriedTurn,
  ParsedAgentInput,
  PendingApproval,
  PendingToolCall,
} from '../../shared/agent';
import type { ApprovalPolicy } from '../../shared/approvals';
import { approvalReason, isUntrustedSource, summarizeArgs } from '../../shared/approvals';
import type { ConversationMessage, ToolMessageContent } from '../../shared/conversation';
import { NotificationPriority } from '../../shared/notifications/schema';
import type { ValidNotificationInput } from '../../shared/notifications/schema';
import type { ToolDefinition, ToolResult } from '../../shared/tools/define';
import { formatZodIssues } from '../../shared/tools/define';
import { findTool } from '../../shared/tools/registry';
import { LOCAL_TOOL_ACTIVITIES, TOOL_ACTIVITIES } from './activities';
import { clip } from './events';

/** A tool message of the conversation. */
export type ToolMessage = Extract<ConversationMessage, { role: 'tool' }>;

/** What the tool runner needs from the run it belongs to. */
export interface ToolHost {
  readonly input: ParsedAgentInput;
  emit(e: Omit<AgentEvent, 'seq' | 'at' | 'step'>): void;
  /** Counts a finished tool call in the run's usage. */
  countToolCall(): void;
  setLastError(message: string): void;
  /** Called when calls start or stop waiting for approval (status, search attributes). */
  approvalsChanged(): void;
  /** A notification the run raises itself (also to the user's inbox). */
  raise(notification: ValidNotificationInput): Promise<void>;
  /** Search tools: numbers the results for citation and returns what the model reads. */
  cite(def: ToolDefinition, args: unknown, result: ToolResult): ToolMessageContent | undefined;
  /** True when the run's history is past its budget and it should continue as new. */
  historyOverBudget(): boolean;
  /**
   * The approval policy (run over worker defaults) when the run uses policies; null for runs
   * recorded before them, which ask only for the tools named in `requireApproval`.
   */
  approvalPolicy(): ApprovalPolicy | null;
  /** Where untrusted content entered the conversation, or null. */
  untrusted(): string | null;
  /** Records that untrusted content entered the conversation. */
  markUntrusted(source: string): void;
  /** A budget ended the run while calls wait: waits end and the calls are refused with this text. */
  stopping(): string | null;
  /** Whether tools declared pure and quick run as local activities (see LOCAL_ACTIVITIES_PATCH). */
  readonly localTools: boolean;
}

interface ApprovalWait {
  decision: ApprovalDecision | null;
  tool: ToolDefinition;
  view: PendingApproval;
}

/** How an approval wait ended: refused (text for the model), or approved (maybe with edited arguments). */
type ApprovalOutcome = { refused: string } | { approved: true; args?: unknown };

/**
 * Search results are numbered for citation in the order their calls started, not the order they
 * finished, so a turn's parallel searches number the same way on every run. Runs recorded before
 * this numbered by finish order and keep doing so on replay.
 */
export const CITATION_ORDER_PATCH = 'citations-in-start-order';

/** Marks a call that stopped because the run is about to continue as new. */
const INTERRUPTED = Symbol('interrupted');

/** Validates tool arguments with the tool's own check or its zod schema; errors are for the model. */
function checkToolArgs(
  def: ToolDefinition,
  raw: unknown,
): { success: true; data: unknown } | { success: false; error: string } {
  if (def.checkArgs) {
    const r = def.checkArgs(raw);
    return r.ok ? { success: true, data: raw } : { success: false, error: r.error };
  }
  const parsed = def.inputs.safeParse(raw);
  return parsed.success
    ? { success: true, data: parsed.data }
    : {
        success: false,
        error: `Invalid arguments for ${def.name}: ${formatZodIssues(parsed.error)}. Fix them and call the tool again.`,
      };
}

/**
 * Runs the tool calls of a model turn: validation, approvals (durable waits), a FIFO bound on
 * concurrent tool activities, notifications in the model's order. A turn can stop part-way when
 * the run must continue as new while calls wait for approval; what finished and what was decided
 * is kept in the turn, and the next run finishes it.
 */
export class ToolRunner {
  private readonly pending = new Map<string, PendingToolCall>();
  private readonly approvals = new Map<string, ApprovalWait>();
  private runningTools = 0;
  private readonly slotWaiters: (() => void)[] = [];
  private notificationTurn: Promise<void> = Promise.resolve();
  /** The previous search call's citation, which this one numbers after (see CITATION_ORDER_PATCH). */
  private citationTurn: Promise<void> = Promise.resolve();
  private citesInStartOrder: boolean | undefined;
  /** Set once the run must continue as new: nothing new starts, approval waits end. */
  private draining = false;

  constructor(private readonly host: ToolHost) {}

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
          if (typeof decision?.toolCallId !== 'string' || typeof decision.approve !== 'boolean') {
            throw new Error('Give { toolCallId: string, approve: boolean, reason?: string }');
          }
          if (
            decision.reason !== undefined &&
            (typeof decision.reason !== 'string' || decision.reason.length > 2000)
          ) {
            throw new Error('reason must be a string of at most 2,000 characters');
          }
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

  /** Calls that were requested and have not finished, for the `state` query. */
  pendingCalls(): PendingToolCall[] {
    return [...this.pending.values()].map((p) => ({ ...p }));
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
   * Runs every call of the turn that has no result yet. Returns true when all have one; false when
   * the run must continue as new first (the turn then holds what is done and decided).
   */
  async runTurn(turn: CarriedTurn): Promise<boolean> {
    await Promise.all(turn.calls.filter((c) => !c.result).map((c) => this.runCall(turn.step, c)));
    return turn.calls.every((c) => c.result);
  }

  private shouldDrain(): boolean {
    if (!this.draining && this.host.historyOverBudget()) this.draining = true;
    return this.draining;
  }

  private async runCall(step: number, c: CarriedCall): Promise<void> {
    const { call } = c;
    const reply = (content: ToolMessageContent, isError = false): ToolMessage => ({
      role: 'tool',
      toolCallId: call.id,
      name: call.name,
      content,
      step,
      ...(isError ? { isError } : {}),
    });
    const reject = (text: string): void => {
      this.host.emit({
        kind: 'tool_rejected',
        toolCallId: call.id,
        tool: call.name,
        args: call.arguments,
        text,
      });
      c.result = reply(text, true);
    };

    const enabled = this.host.input.tools;
    const def = findTool(call.name);
    if (!def) {
      reject(`No such tool "${call.name}". Available tools: ${enabled.join(', ') || '(none)'}.`);
      return;
    }
    if (!enabled.includes(call.name)) {
      reject(
        `Tool "${call.name}" is not enabled for this run. Enabled tools: ${enabled.join(', ') || '(none)'}.`,
      );
      return;
    }
    if (typeof call.arguments === 'string') {
      reject(
        `Arguments for ${call.name} are not valid JSON: ${clip(call.arguments, 200)}. Send a JSON object.`,
      );
      return;
    }
    const args = checkToolArgs(def, call.arguments ?? {});
    if (!args.success) {
      reject(args.error);
      return;
    }

    const pending: PendingToolCall = {
      toolCallId: call.id,
      name: call.name,
      args: args.data,
      step,
      state: 'queued',
    };
    this.pending.set(call.id, pending);
    let releaseTurn: (() => void) | undefined;
    try {
      // Notifications go out one at a time, in the order the model sent them, so every target
      // (the run, the inbox) lists them in the same order.
      if (def.category === 'notification') releaseTurn = await this.takeNotificationTurn();
      const why = c.approval ? (c.approval.reason ?? '') : this.approvalNeeded(call.name, args.data);
      let edited = false;
      if (why !== null) {
        const outcome = await this.awaitApproval(c, pending, def, why);
        if (outcome === INTERRUPTED) return;
        if ('refused' in outcome) {
          c.result = reply(outcome.refused, true);
          return;
        }
        if (outcome.args !== undefined) {
          pending.args = outcome.args;
          edited = true;
        }
      }
      if (this.draining) return;
      await this.acquireToolSlot();
      if (this.draining) {
        this.releaseToolSlot();
        return;
      }
      // Taken as the activity starts (synchronously, so in start order): a search that finishes
      // first still numbers its results after the searches started before it.
      let releaseCitation: (() => void) | undefined;
      let citationTurn: Promise<void> | undefined;
      if (def.category === 'search' && (this.citesInStartOrder ??= patched(CITATION_ORDER_PATCH))) {
        citationTurn = this.citationTurn;
        this.citationTurn = new Promise<void>((resolve) => {
          releaseCitation = resolve;
        });
      }
      try {
        const [content, isError] = await this.execute(def, step, pending, citationTurn);
        c.result = reply(edited ? withEditNote(content, pending.args) : content, isError);
      } finally {
        releaseCitation?.();
        this.releaseToolSlot();
      }
    } finally {
      this.pending.delete(call.id);
      releaseTurn?.();
    }
  }

  /** Runs the tool's activity; returns what the model reads and whether it is an error. */
  private async execute(
    def: ToolDefinition,
    step: number,
    pending: PendingToolCall,
    citationTurn?: Promise<void>,
  ): Promise<[ToolMessageContent, boolean]> {
    const { toolCallId, name, args } = pending;
    pending.state = 'running';
    // The framework emits "tool started" for every call, with its id and arguments.
    this.host.emit({ kind: 'tool_started', toolCallId, tool: name, args });
    const started = Date.now();
    try {
      const notifyUser = this.host.input.notify?.user;
      const activity =
        (this.host.localTools ? LOCAL_TOOL_ACTIVITIES[name] : undefined) ?? TOOL_ACTIVITIES[name];
      const result = await (activity as ToolActivity)({
        toolCallId,
        args,
        step,
        ...(notifyUser ? { context: { notifyUser } } : {}),
      });
      const durationMs = Date.now() - started;
      this.host.countToolCall();
      // Searches started earlier are running, not waiting for approval, so this wait is short.
      if (citationTurn) await citationTurn;
      if (
        this.host.approvalPolicy() !== null &&
        isUntrustedSource(this.host.approvalPolicy() as ApprovalPolicy, name) &&
        !this.host.untrusted()
      )
        this.host.markUntrusted(`${name} result at step ${step}`);
      const content =
        this.host.cite(def, args, result) ??
        (result.contentRef
          ? { ref: result.contentRef, bytes: result.contentBytes ?? 0, preview: result.content }
          : result.content);
      this.host.emit({
        kind: 'tool_finished',
        toolCallId,
        tool: name,
        text: typeof content === 'string' ? content : content.preview,
        isError: result.isError,
        durationMs,
      });
      return [content, result.isError ?? false];
    } catch (err) {
      if (isCancellation(err)) throw err;
      const cause = err instanceof ActivityFailure && err.cause ? err.cause.message : (err as Error).message;
      const msg = `Tool ${name} failed: ${cause}`;
      this.host.setLastError(msg);
      this.host.countToolCall();
      this.host.emit({
        kind: 'tool_finished',
        toolCallId,
        tool: name,
        text: msg,
        isError: true,
        durationMs: Date.now() - started,
      });
      return [`${msg}. Try different arguments or another approach.`, true];
    }
  }

  /** Waits for the previous notification of the run to be delivered; returns the release for this one. */
  private async takeNotificationTurn(): Promise<() => void> {
    const previous = this.notificationTurn;
    let release: () => void = () => undefined;
    this.notificationTurn = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    return release;
  }

  /** FIFO semaphore bounding concurrent tool activities (plain promises, so replay is deterministic). */
  private async acquireToolSlot(): Promise<void> {
    if (this.runningTools < this.host.input.policy.maxParallelTools) {
      this.runningTools += 1;
      return;
    }
    await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
  }

  /** Hands the slot to the next waiter, or frees it. */
  private releaseToolSlot(): void {
    const next = this.slotWaiters.shift();
    if (next) next();
    else this.runningTools -= 1;
  }

  /** Why a call must wait for approval, or null when it may run. */
  private approvalNeeded(tool: string, args: unknown): string | null {
    const policy = this.host.approvalPolicy();
    if (!policy) {
      return this.host.input.policy.requireApproval.includes(tool) ? 'the policy names this tool' : null;
    }
    return approvalReason(policy, tool, args, { untrusted: this.host.untrusted() });
  }

  /**
   * Waits for an approve/reject update until the call's deadline (kept in the turn, so a continued
   * run waits only for what is left), telling the user what is asked and, in place, how it ended.
   * Returns the outcome, or INTERRUPTED when the run must continue as new first.
   */
  private async awaitApproval(
    c: CarriedCall,
    pending: PendingToolCall,
    def: ToolDefinition,
    reason: string,
  ): Promise<ApprovalOutcome | typeof INTERRUPTED> {
    const policy = this.host.input.policy;
    const asks = this.host.approvalPolicy() !== null;
    const first = c.approval === undefined;
    const decidedEarlier = c.approval?.decision !== undefined;
    const approval = (c.approval ??= {
      deadline: Date.now() + msToNumber(policy.approvalTimeout as Duration),
      ...(asks ? { reason } : {}),
    });
    const view: PendingApproval = {
      toolCallId: pending.toolCallId,
      tool: pending.name,
      args: pending.args,
      summary: summarizeArgs(pending.args),
      reason,
      step: pending.step,
      deadline: new Date(approval.deadline).toISOString(),
    };
    const wait: ApprovalWait = { decision: approval.decision ?? null, tool: def, view };
    pending.state = 'awaiting_approval';
    this.approvals.set(pending.toolCallId, wait);
    this.host.approvalsChanged();
    if (first) {
      this.host.emit({
        kind: 'approval_requested',
        toolCallId: pending.toolCallId,
        tool: pending.name,
        args: pending.args,
        ...(asks ? { text: reason } : {}),
      });
      if (asks) await this.host.raise(requestNotification(view));
    }
    try {
      const remaining = approval.deadline - Date.now();
      if (wait.decision === null && remaining > 0) {
        await condition(
          () => wait.decision !== null || this.shouldDrain() || (asks && this.host.stopping() !== null),
          remaining,
        );
      }
      if (wait.decision) approval.decision = wait.decision;
      const stopped = asks && wait.decision === null ? this.host.stopping() : null;
      if (wait.decision === null && this.draining && stopped === null) return INTERRUPTED;
      if (wait.decision === null) {
        const msg = stopped
          ? `The run stopped (${stopped}) while ${pending.name} waited for approval; the call was not made.`
          : `Approval for ${pending.name} timed out after ${String(policy.approvalTimeout)}; the call was not made.`;
        this.host.setLastError(msg);
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
                ...requestNotification(view),
                title: `${stopped ? 'Not asked any more' : 'Approval timed out'}: ${pending.name}`,
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
        this.host.emit({
          kind: 'approval_decided',
          toolCallId: pending.toolCallId,
          tool: pending.name,
          text: said,
          ...(edited ? { args: d.args } : {}),
        });
        if (asks) {
          await this.host.raise({
            ...requestNotification(view),
            type: d.approve ? 'info' : 'warning',
            priority: NotificationPriority.NORMAL,
            title: `${d.approve ? 'Approved' : 'Rejected'}: ${pending.name}`,
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

/** The id of a call's approval notification: one item, updated in place as the request ends. */
function approvalNotificationId(toolCallId: string): string {
  return `approval:${workflowInfo().workflowId}:${toolCallId}`.slice(0, 200);
}

/** The HIGH warning that asks the user: what, why, until when, and how to answer. */
function requestNotification(view: PendingApproval): ValidNotificationInput {
  const run = escapeHtml(workflowInfo().workflowId);
  const id = escapeHtml(view.toolCallId);
  return {
    id: approvalNotificationId(view.toolCallId),
    type: 'warning',
    priority: NotificationPriority.HIGH,
    title: `Approval needed: ${view.tool}`,
    message: `${view.tool} waits for your decision until ${view.deadline} (${view.reason}). Asked: ${view.summary}`,
    detail:
      `<p>Approve: <code>durable-agent approve ${run} ${id} [--args edited.json]</code></p>` +
      `<p>Reject: <code>durable-agent reject ${run} ${id} --reason "…"</code></p>` +
      `<p>HTTP: <code>POST /api/approvals/${run}/${id}</code> with {"approve": true} or {"approve": false, "reason": "…"}</p>`,
    display_time: 30,
    group: 'approvals',
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** Tells the model the user changed the arguments before approving, so it does not assume its own ran. */
function withEditNote(content: ToolMessageContent, args: unknown): ToolMessageContent {
  const note = `(The user approved this call with edited arguments: ${JSON.stringify(args)})\n`;
  return typeof content === 'string' ? note + content : { ...content, preview: note + content.preview };
}
