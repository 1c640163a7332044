import { ActivityFailure, isCancellation } from '@temporalio/workflow';
import type { ToolActivity } from '../../activities/types';
import type { PendingApproval, PendingQuestion, PendingToolCall } from '../../shared/agent';
import type { CarriedCall, CarriedTurn } from './carried-state';
import type { ApprovalPolicy } from '../../shared/approvals';
import { approvalReason, isUntrustedSource } from '../../shared/approvals';
import type { ConversationMessage, ToolMessageContent } from '../../shared/conversation';
import type { ToolDefinition, ToolResult } from '../../shared/tools/define';
import { checkToolArgs } from '../../shared/tools/define';
import { findTool } from '../../shared/tools/registry';
import { toolActivity } from './activities';
import type { ApprovalHost } from './approvals';
import { ApprovalGate, INTERRUPTED } from './approvals';
import type { QuestionHost } from './questions';
import { QuestionGate } from './questions';
import type { ModelToolSpec } from '../../shared/model';
import type { McpToolbox } from './mcp';
import type { OwnToolbox } from './own-tools';
import type { OwnToolSpec } from '../../shared/tools/own';
import type { McpToolSpec } from '../../shared/tools/mcp';
import { mcpToolId } from '../../shared/tools/mcp';
import { clip } from './events';
import type { SubAgents } from './sub-agents';

/** A tool message of the conversation. */
export type ToolMessage = Extract<ConversationMessage, { role: 'tool' }>;

/** What the tool runner needs from the run it belongs to. */
export interface ToolHost extends ApprovalHost, QuestionHost {
  /** Counts a finished tool call in the run's usage. */
  countToolCall(): void;
  /** Whether the run takes a patch's behaviour (RunPatches.has). */
  patched(id: string): boolean;
  /** Search tools: numbers the results for citation and returns what the model reads. */
  cite(def: ToolDefinition, args: unknown, result: ToolResult): ToolMessageContent | undefined;
  /** True when the run's history is past its budget and it should continue as new. */
  historyOverBudget(): boolean;
  /** Where untrusted content entered the conversation, or null. */
  untrusted(): string | null;
  /** Records that untrusted content entered the conversation. */
  markUntrusted(source: string): void;
  /** Whether tools declared pure and quick run as local activities (see LOCAL_ACTIVITIES_PATCH). */
  readonly localTools: boolean;
  /** The run's MCP tools. */
  readonly mcp: McpToolbox;
  /** The worker's own tools the run names. */
  readonly own: OwnToolbox;
  /** The run's sub-agents. */
  readonly agents: SubAgents;
}

/**
 * Search results are numbered for citation in the order their calls started, not the order they
 * finished, so a turn's parallel searches number the same way on every run. Runs recorded before
 * this numbered by finish order and keep doing so on replay.
 */
export const CITATION_ORDER_PATCH = 'citations-in-start-order';

/**
 * A call approved with edited arguments is told to the model in a message of its own after the
 * turn's results ({@link CarriedCall.note}), so the result holds only the tool's value and a model
 * quoting it quotes the value. Runs recorded before this prefixed the note to the result and keep
 * doing so on replay.
 */
export const EDIT_NOTE_APART_PATCH = 'approval-edit-note-apart';

/**
 * Runs the tool calls of a model turn: validation, approvals (durable waits), a FIFO bound on
 * concurrent tool activities, notifications in the model's order. A turn can stop part-way when
 * the run must continue as new while calls wait for approval; what finished and what was decided
 * is kept in the turn, and the next run finishes it.
 */
export class ToolRunner {
  private readonly pending = new Map<string, PendingToolCall>();
  private readonly gate: ApprovalGate;
  /** Questions (ask_user) and client-side tools: calls that wait for input from outside. */
  private readonly questions: QuestionGate;
  private runningTools = 0;
  private readonly slotWaiters: (() => void)[] = [];
  private notificationTurn: Promise<void> = Promise.resolve();
  /** The previous search call's citation, which this one numbers after (see CITATION_ORDER_PATCH). */
  private citationTurn: Promise<void> = Promise.resolve();
  private citesInStartOrder: boolean | undefined;
  private editNoteApart: boolean | undefined;
  /** Set once the run must continue as new: nothing new starts, approval waits end. */
  private draining = false;

  constructor(private readonly host: ToolHost) {
    const drain = { shouldDrain: () => this.shouldDrain(), draining: () => this.draining };
    this.gate = new ApprovalGate(host, drain);
    this.questions = new QuestionGate(host, drain);
  }

  /** The `approveToolCall` update (see ApprovalGate) and the `answerQuestion` update (QuestionGate). */
  registerHandlers(): void {
    this.gate.registerHandlers();
    this.questions.registerHandlers();
  }

  /** Calls waiting for an answer or a client's result, for the `state` query. */
  pendingQuestions(): PendingQuestion[] {
    return this.questions.pendingQuestions();
  }

  /** Whether any call waits for an answer or a client's result. */
  waitingForInput(): boolean {
    return this.questions.waiting();
  }

  /** The run's client-side tools as the model sees them (empty without any). */
  clientToolSpecs(): ModelToolSpec[] {
    return this.questions.modelTools();
  }

  /** Calls that were requested and have not finished, for the `state` query. */
  pendingCalls(): PendingToolCall[] {
    return [...this.pending.values()].map((p) => ({ ...p }));
  }

  /** Calls waiting for approval, for the `state` query. */
  pendingApprovals(): PendingApproval[] {
    return this.gate.pendingApprovals();
  }

  /** Whether any call waits for approval. */
  waitingForApproval(): boolean {
    return this.gate.waitingForApproval();
  }

  /**
   * Runs every call of the turn that has no result yet. Returns true when all have one; false when
   * the run must continue as new first (the turn then holds what is done and decided).
   */
  async runTurn(turn: CarriedTurn): Promise<boolean> {
    if (this.host.agents.enabled) {
      this.host.agents.expect(
        turn.calls.filter((c) => !c.result && this.host.agents.has(c.call.name)).length,
      );
    }
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

    const mcp = this.host.mcp.find(call.name);
    const own = mcp ? undefined : this.host.own.find(call.name);
    const agents = this.host.agents;
    const agent = !mcp && !own && agents.has(call.name);
    const client = !mcp && !own && !agent && this.questions.hasClientTool(call.name);
    let enabled = this.host.mcp.enabled
      ? [
          ...this.host.input.tools.filter((t) => findTool(t) || this.host.own.find(t)),
          ...this.host.mcp.names(),
        ]
      : this.host.input.tools;
    if (agents.enabled) enabled = [...enabled, ...agents.names()];
    if (this.host.input.clientTools) enabled = [...enabled, ...this.questions.clientToolNames()];
    const def = mcp
      ? this.host.mcp.definition(mcp)
      : own
        ? this.host.own.definition(own)
        : agent
          ? agents.definition(call.name)
          : client
            ? this.questions.definition(call.name)
            : findTool(call.name);
    if (!def) {
      reject(`No such tool "${call.name}". Available tools: ${enabled.join(', ') || '(none)'}.`);
      return;
    }
    if (!mcp && !agent && !client && !enabled.includes(call.name)) {
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
      const why = c.approval
        ? (c.approval.reason ?? '')
        : this.approvalNeeded(call.name, args.data, mcp, own);
      let edited = false;
      if (why !== null) {
        const outcome = await this.gate.wait(c, pending, def, why);
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
      // Questions and client tools wait for input in the workflow: no activity, no tool slot.
      if (def.category === 'human' || def.category === 'client') {
        const outcome = await this.questions.ask(c, pending, def);
        if (outcome === INTERRUPTED) return;
        this.host.countToolCall();
        c.result = reply(outcome.content, outcome.isError);
        return;
      }
      await this.acquireToolSlot();
      if (this.draining) {
        this.releaseToolSlot();
        return;
      }
      // Taken as the activity starts (synchronously, so in start order): a search that finishes
      // first still numbers its results after the searches started before it.
      let releaseCitation: (() => void) | undefined;
      let citationTurn: Promise<void> | undefined;
      if (def.category === 'search' && (this.citesInStartOrder ??= this.host.patched(CITATION_ORDER_PATCH))) {
        citationTurn = this.citationTurn;
        this.citationTurn = new Promise<void>((resolve) => {
          releaseCitation = resolve;
        });
      }
      try {
        const [content, isError] = await this.execute(def, step, pending, citationTurn, mcp, own);
        if (edited && (this.editNoteApart ??= this.host.patched(EDIT_NOTE_APART_PATCH))) {
          c.note = editNote(call, pending.args);
          c.result = reply(content, isError);
        } else {
          c.result = reply(edited ? withEditNote(content, pending.args) : content, isError);
        }
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
    mcp?: McpToolSpec,
    own?: OwnToolSpec,
  ): Promise<[ToolMessageContent, boolean]> {
    const { toolCallId, name, args } = pending;
    pending.state = 'running';
    // The framework emits "tool started" for every call, with its id and arguments.
    this.host.emit({ kind: 'tool_started', toolCallId, tool: name, args });
    const started = Date.now();
    if (def.category === 'agent') return this.runSubAgent(step, pending, started);
    try {
      const notifyUser = this.host.input.notify?.user;
      const activity = mcp
        ? this.host.mcp.activity(mcp, this.host.localTools)
        : own
          ? this.host.own.activity(own, this.host.localTools)
          : toolActivity(def, this.host.localTools, this.host.input.policy.toolTimeouts?.[name]);
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
      const source = mcp ? mcpToolId(mcp.server, mcp.tool) : name;
      if (mcp) this.host.mcp.noteDigest(mcp.server, result.toolsDigest);
      if (
        this.host.approvalPolicy() !== null &&
        isUntrustedSource(this.host.approvalPolicy() as ApprovalPolicy, source, own?.untrusted === true) &&
        !this.host.untrusted()
      )
        this.host.markUntrusted(`${source} result at step ${step}`);
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

  /** Runs a sub-agent call as a child workflow (SubAgents); its answer or failure is the call's result. */
  private async runSubAgent(
    step: number,
    pending: PendingToolCall,
    started: number,
  ): Promise<[ToolMessageContent, boolean]> {
    const { toolCallId, name, args } = pending;
    const outcome = await this.host.agents.run(name, toolCallId, args);
    this.host.countToolCall();
    if (outcome.isError) this.host.setLastError(outcome.content);
    if (outcome.untrusted && this.host.approvalPolicy() !== null && !this.host.untrusted())
      this.host.markUntrusted(`${name} sub-agent at step ${step} (${outcome.untrusted})`);
    this.host.emit({
      kind: 'tool_finished',
      toolCallId,
      tool: name,
      text: outcome.content,
      isError: outcome.isError,
      durationMs: Date.now() - started,
    });
    return [outcome.content, outcome.isError];
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
  private approvalNeeded(tool: string, args: unknown, mcp?: McpToolSpec, own?: OwnToolSpec): string | null {
    // Policies name an MCP tool mcp:<server>/<tool>, whatever the model calls it.
    const named = mcp ? mcpToolId(mcp.server, mcp.tool) : tool;
    const policy = this.host.approvalPolicy();
    if (!policy) {
      return this.host.input.policy.requireApproval.includes(named) ? 'the policy names this tool' : null;
    }
    return approvalReason(policy, named, args, {
      untrusted: this.host.untrusted(),
      ...(mcp?.readOnly ? { readOnly: true } : {}),
      ...(own?.approval === 'always' ? { declaredAlways: true } : {}),
    });
  }
}

/**
 * Tells the model the user changed the arguments before approving, so it does not assume its own
 * ran: a message of its own, after the turn's results.
 */
function editNote(call: { id: string; name: string }, args: unknown): string {
  return `(The user approved the ${call.name} call ${call.id} with edited arguments: ${JSON.stringify(args)}. Its result comes from these arguments, not the ones you sent.)`;
}

/** The note as runs recorded before EDIT_NOTE_APART_PATCH gave it: inside the result. */
function withEditNote(content: ToolMessageContent, args: unknown): ToolMessageContent {
  const note = `(The user approved this call with edited arguments: ${JSON.stringify(args)})\n`;
  return typeof content === 'string' ? note + content : { ...content, preview: note + content.preview };
}
