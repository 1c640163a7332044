import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  log,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Duration } from '@temporalio/common';
import type { ActivityOptions } from '@temporalio/workflow';
import type { ModelActivities, ToolActivity } from '../activities/types';
import {
  AgentInputSchema,
  approveToolCallUpdate,
  citationsQuery,
  eventsQuery,
  stateQuery,
  transcriptQuery,
  userMessageSignal,
} from '../shared/agent';
import type {
  AgentEvent,
  AgentInput,
  AgentResult,
  AgentStateView,
  AgentStatus,
  ApprovalDecision,
  CarriedState,
  ParsedAgentInput,
  PendingToolCall,
  StopReason,
  TranscriptEntry,
} from '../shared/agent';
import type { ChatMessage, ToolCall } from '../shared/conversation';
import { addUsage, contextWindow } from '../shared/conversation';
import { DEFAULT_SYSTEM_PROMPT } from '../prompts/system';
import type { ToolDefinition } from '../shared/tools/define';
import { AgentLastToolKey, AgentModelKey, AgentStatusKey, AgentStepKey } from '../shared/search-attributes';
import { formatZodIssues } from '../shared/tools/define';
import { TOOL_REGISTRY, findTool } from '../shared/tools/registry';
import { inboxWorkflowId } from '../shared/notifications/messages';
import { NotificationPriority } from '../shared/notifications/schema';
import type { NotificationActivities } from '../activities/types';
import { NotificationBox } from './notifications';
import type { CitationState } from '../shared/citations';
import { applyCitations, createCitationState, resolveCitations, searchRecordsOf } from '../shared/citations';

/** Model calls: one attempt may take a while; provider errors are classified by the activity. */
const MODEL_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '5 minutes',
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  heartbeatTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 8,
    nonRetryableErrorTypes: ['ModelAuthError', 'ModelBadRequest', 'ModelNotConfigured', 'ScriptError'],
  },
} as const satisfies ActivityOptions;

const { callModel } = proxyActivities<ModelActivities>(MODEL_ACTIVITY_OPTIONS);

/** Delivery of notifications the workflow raises itself to the user's inbox. */
const NOTIFICATION_ACTIVITY_OPTIONS = {
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 10, nonRetryableErrorTypes: ['NotificationsUnavailable'] },
} as const satisfies ActivityOptions;

const { deliverNotification } = proxyActivities<NotificationActivities>(NOTIFICATION_ACTIVITY_OPTIONS);

function toolActivityOptions(def: ToolDefinition): ActivityOptions {
  const a = def.activity;
  return {
    startToCloseTimeout: a.startToCloseTimeout,
    heartbeatTimeout: a.heartbeatTimeout,
    // Cancelling a run waits for running tools to stop and clean up, so nothing runs on unseen.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: {
      initialInterval: a.initialInterval ?? '1 second',
      backoffCoefficient: 2,
      maximumInterval: '1 minute',
      maximumAttempts: a.maximumAttempts ?? 5,
      nonRetryableErrorTypes: a.nonRetryableErrorTypes ?? [],
    },
  };
}

/** One activity function per tool, each with the options its tool declares. Immutable after load. */
const TOOL_ACTIVITIES: Readonly<Record<string, ToolActivity>> = Object.freeze(
  Object.fromEntries(
    Object.values(TOOL_REGISTRY).map((def) => [
      def.name,
      proxyActivities<Record<string, ToolActivity>>(toolActivityOptions(def))[def.name] as ToolActivity,
    ]),
  ),
);

/** Events kept in state (and carried over continue-as-new); older ones are dropped first. */
const MAX_EVENTS = 1000;
/** Longest tool result or text put in an event, so queries stay small. */
const EVENT_TEXT_LIMIT = 2000;

function clip(text: string, limit = EVENT_TEXT_LIMIT): string {
  return text.length > limit ? `${text.slice(0, limit)}… (${text.length - limit} more characters)` : text;
}

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

function invalidInput(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: 'InvalidAgentInput', message, nonRetryable: true });
}

/**
 * The agent loop: model turn → tool calls (each its own activity, run concurrently up to a bound)
 * → results back to the model, until the model answers, a budget stops it, or it is cancelled.
 * Continues as new when the server suggests it or after `policy.continueAsNewAfterSteps` steps,
 * carrying all state in the second argument.
 */
export async function agentWorkflow(rawInput: AgentInput, carried?: CarriedState): Promise<AgentResult> {
  const parsed = AgentInputSchema.safeParse(rawInput);
  if (!parsed.success) throw invalidInput(`Invalid agent input: ${formatZodIssues(parsed.error)}`);
  const run = new AgentRun(parsed.data, carried);
  run.registerHandlers();
  return run.execute(rawInput);
}

interface ApprovalWait {
  decision: ApprovalDecision | null;
}

/** State and behaviour of one agent run; one instance per workflow execution (no module-level state). */
class AgentRun {
  private messages: ChatMessage[];
  private step: number;
  private usage: CarriedState['usage'];
  private events: AgentEvent[];
  private eventSeq: number;
  private continuations: number;
  private pendingUserMessages: string[];
  private lastError: string | null;
  private toolCallSeq: number;
  private status: AgentStatus = 'running';
  private answer: string | null = null;
  private stopReason: StopReason | null = null;
  private readonly pending = new Map<string, PendingToolCall>();
  private readonly approvals = new Map<string, ApprovalWait>();
  private runningTools = 0;
  private readonly slotWaiters: (() => void)[] = [];
  private notificationTurn: Promise<void> = Promise.resolve();
  private readonly stepsAtStart: number;
  private readonly notifications: NotificationBox;
  private citations: CitationState;

  constructor(
    private readonly input: ParsedAgentInput,
    carried: CarriedState | undefined,
  ) {
    this.messages = carried?.messages ?? [
      { role: 'system', content: input.system ?? DEFAULT_SYSTEM_PROMPT },
      { role: 'user', content: input.task },
    ];
    this.step = carried?.step ?? 0;
    this.usage = carried?.usage ?? { inputTokens: 0, outputTokens: 0, modelCalls: 0, toolCalls: 0 };
    this.events = carried?.events ?? [];
    this.eventSeq = carried?.eventSeq ?? 0;
    this.continuations = carried?.continuations ?? 0;
    this.pendingUserMessages = carried?.pendingUserMessages ?? [];
    this.lastError = carried?.lastError ?? null;
    this.toolCallSeq = carried?.toolCallSeq ?? 0;
    this.stepsAtStart = this.step;
    this.notifications = new NotificationBox(carried?.notifications);
    this.citations = carried?.citations ?? createCitationState();
  }

  registerHandlers(): void {
    this.notifications.registerHandlers();
    setHandler(userMessageSignal, (msg) => {
      // A bad signal payload must not fail the workflow task: record and ignore it.
      const text = typeof msg?.text === 'string' ? msg.text.trim() : '';
      if (!text) {
        log.warn('Ignored userMessage signal without text');
        return;
      }
      this.pendingUserMessages.push(text);
      this.emit({ kind: 'user_message', text: clip(text) });
    });
    setHandler(stateQuery, () => this.view());
    setHandler(transcriptQuery, () => this.transcript());
    setHandler(citationsQuery, () => resolveCitations(this.citations));
    setHandler(eventsQuery, (opts) => {
      const since = opts?.since ?? 0;
      return this.events.filter((e) => e.seq > since);
    });
    setHandler(
      approveToolCallUpdate,
      (decision) => {
        const wait = this.approvals.get(decision.toolCallId);
        if (!wait) throw new Error('unreachable: the validator checks the tool call id');
        wait.decision = decision;
        return { toolCallId: decision.toolCallId, approved: decision.approve };
      },
      {
        validator: (decision: ApprovalDecision) => {
          if (typeof decision?.toolCallId !== 'string' || typeof decision.approve !== 'boolean') {
            throw new Error('Give { toolCallId: string, approve: boolean, reason?: string }');
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
        },
      },
    );
  }

  async execute(rawInput: AgentInput): Promise<AgentResult> {
    this.publishSearchAttributes();
    try {
      for (;;) {
        const stop = this.budgetStop();
        if (stop) return this.finish(null, stop);

        this.drainUserMessages();
        this.step += 1;
        const turn = await this.modelTurn();
        if (turn.toolCalls.length === 0) {
          // A message that arrived while the model was answering deserves a reply of its own.
          if (this.pendingUserMessages.length > 0) continue;
          return this.finish(turn.content ?? '', 'final_answer');
        }
        await this.runToolCalls(turn.toolCalls);
        this.publishSearchAttributes();

        const stepsThisRun = this.step - this.stepsAtStart;
        if (
          workflowInfo().continueAsNewSuggested ||
          stepsThisRun >= this.input.policy.continueAsNewAfterSteps
        ) {
          await condition(allHandlersFinished);
          this.continuations += 1;
          this.emit({ kind: 'continued_as_new', text: `continuation ${this.continuations}` });
          return await continueAsNew<typeof agentWorkflow>(rawInput, this.carry());
        }
      }
    } catch (err) {
      if (isCancellation(err)) {
        this.status = 'cancelled';
        this.stopReason = 'cancelled';
        this.emit({ kind: 'stopped', text: 'cancelled' });
        this.publishSearchAttributes();
        throw err;
      }
      this.status = 'failed';
      this.lastError = err instanceof Error ? err.message : String(err);
      this.emit({ kind: 'error', text: clip(this.lastError), isError: true });
      this.publishSearchAttributes();
      throw err;
    }
  }

  private budgetStop(): StopReason | null {
    if (this.step >= this.input.policy.maxSteps) return 'max_steps';
    const max = this.input.policy.maxTokens;
    if (max !== undefined && this.usage.inputTokens + this.usage.outputTokens >= max) return 'max_tokens';
    return null;
  }

  private drainUserMessages(): void {
    for (const text of this.pendingUserMessages.splice(0))
      this.messages.push({ role: 'user', content: text });
  }

  private async modelTurn(): Promise<{ content: string | null; toolCalls: ToolCall[] }> {
    this.emit({ kind: 'model_started' });
    const started = Date.now();
    let out;
    try {
      out = await callModel({
        model: this.input.model,
        messages: contextWindow(this.messages, this.input.policy.maxContextMessages),
        tools: this.input.tools,
        step: this.step,
      });
    } catch (err) {
      if (isCancellation(err)) throw err;
      const cause =
        err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause : undefined;
      throw ApplicationFailure.create({
        type: cause?.type ?? 'ModelCallFailed',
        message: `Model call failed at step ${this.step}: ${cause?.message ?? (err as Error).message}`,
        nonRetryable: true,
        cause: err as Error,
      });
    }
    this.usage = { ...this.usage, ...addUsage(this.usage, out.usage), modelCalls: this.usage.modelCalls + 1 };
    const toolCalls = out.toolCalls.map((call) => ({ ...call, id: this.uniqueCallId(call.id) }));
    this.messages.push({
      role: 'assistant',
      content: out.content,
      ...(toolCalls.length ? { toolCalls } : {}),
    });
    this.emit({
      kind: 'model_finished',
      text: clip(out.content ?? ''),
      durationMs: Date.now() - started,
    });
    return { content: out.content, toolCalls };
  }

  /** Provider ids are kept when usable; missing or repeated ids get a run-unique one. */
  private uniqueCallId(id: string): string {
    this.toolCallSeq += 1;
    const seen = this.messages.some((m) => m.role === 'assistant' && m.toolCalls?.some((c) => c.id === id));
    return id && !seen ? id : `call_${this.step}_${this.toolCallSeq}`;
  }

  private async runToolCalls(calls: ToolCall[]): Promise<void> {
    const results = await Promise.all(calls.map((call) => this.runToolCall(call)));
    for (const msg of results) this.messages.push(msg);
  }

  private async runToolCall(call: ToolCall): Promise<Extract<ChatMessage, { role: 'tool' }>> {
    const reply = (content: string, isError = false) =>
      ({
        role: 'tool',
        toolCallId: call.id,
        name: call.name,
        content,
        ...(isError ? { isError } : {}),
      }) as const;

    const def = this.input.tools.includes(call.name) ? findTool(call.name) : undefined;
    if (!def) {
      const msg = `Unknown tool "${call.name}". Available tools: ${this.input.tools.join(', ') || '(none)'}.`;
      this.emit({
        kind: 'tool_rejected',
        toolCallId: call.id,
        tool: call.name,
        args: call.arguments,
        text: msg,
      });
      return reply(msg, true);
    }
    if (typeof call.arguments === 'string') {
      const msg = `Arguments for ${call.name} are not valid JSON: ${clip(call.arguments, 200)}. Send a JSON object.`;
      this.emit({
        kind: 'tool_rejected',
        toolCallId: call.id,
        tool: call.name,
        args: call.arguments,
        text: msg,
      });
      return reply(msg, true);
    }
    const args = checkToolArgs(def, call.arguments ?? {});
    if (!args.success) {
      this.emit({
        kind: 'tool_rejected',
        toolCallId: call.id,
        tool: call.name,
        args: call.arguments,
        text: args.error,
      });
      return reply(args.error, true);
    }

    const pending: PendingToolCall = {
      toolCallId: call.id,
      name: call.name,
      args: args.data,
      step: this.step,
      state: 'queued',
    };
    this.pending.set(call.id, pending);
    let releaseTurn: (() => void) | undefined;
    try {
      // Notifications go out one at a time, in the order the model sent them, so every target
      // (the run, the inbox) lists them in the same order.
      if (def.category === 'notification') releaseTurn = await this.takeNotificationTurn();
      if (this.input.policy.requireApproval.includes(call.name)) {
        const refusal = await this.awaitApproval(pending);
        if (refusal) return reply(refusal, true);
      }
      await this.acquireToolSlot();
      pending.state = 'running';
      // The framework emits "tool started" for every call, with its id and arguments.
      this.emit({ kind: 'tool_started', toolCallId: call.id, tool: call.name, args: args.data });
      const started = Date.now();
      try {
        const notifyUser = this.input.notify?.user;
        const result = await (TOOL_ACTIVITIES[call.name] as ToolActivity)({
          toolCallId: call.id,
          args: args.data,
          step: pending.step,
          ...(notifyUser ? { context: { notifyUser } } : {}),
        });
        this.usage = { ...this.usage, toolCalls: this.usage.toolCalls + 1 };
        const content = this.cite(def, args.data, result.data) ?? result.content;
        this.emit({
          kind: 'tool_finished',
          toolCallId: call.id,
          tool: call.name,
          text: clip(content),
          isError: result.isError,
          durationMs: Date.now() - started,
        });
        return reply(content, result.isError ?? false);
      } catch (err) {
        if (isCancellation(err)) throw err;
        const cause =
          err instanceof ActivityFailure && err.cause ? err.cause.message : (err as Error).message;
        const msg = `Tool ${call.name} failed: ${cause}`;
        this.lastError = msg;
        this.usage = { ...this.usage, toolCalls: this.usage.toolCalls + 1 };
        this.emit({
          kind: 'tool_finished',
          toolCallId: call.id,
          tool: call.name,
          text: clip(msg),
          isError: true,
          durationMs: Date.now() - started,
        });
        return reply(`${msg}. Try different arguments or another approach.`, true);
      } finally {
        this.releaseToolSlot();
      }
    } finally {
      this.pending.delete(call.id);
      releaseTurn?.();
    }
  }

  /**
   * Numbers the records of a search tool's result for citation (`[[a1]]`), counting on across every
   * search of the run, and returns what the model reads; undefined for other tools.
   */
  private cite(def: ToolDefinition, args: unknown, data: unknown): string | undefined {
    if (def.category !== 'search') return undefined;
    const records = searchRecordsOf(data);
    if (!records) return undefined;
    const query = (args as { query?: unknown } | undefined)?.query;
    const applied = applyCitations(this.citations, records, typeof query === 'string' ? { query } : {});
    this.citations = applied.state;
    return applied.content;
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
    if (this.runningTools < this.input.policy.maxParallelTools) {
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

  /** Waits for an approve/reject update; returns a refusal message for the model, or null when approved. */
  private async awaitApproval(pending: PendingToolCall): Promise<string | null> {
    pending.state = 'awaiting_approval';
    const wait: ApprovalWait = { decision: null };
    this.approvals.set(pending.toolCallId, wait);
    this.status = 'waiting_for_approval';
    this.emit({
      kind: 'approval_requested',
      toolCallId: pending.toolCallId,
      tool: pending.name,
      args: pending.args,
    });
    this.publishSearchAttributes();
    try {
      const decided = await condition(
        () => wait.decision !== null,
        this.input.policy.approvalTimeout as Duration,
      );
      if (!decided) {
        const msg = `Approval for ${pending.name} timed out after ${String(this.input.policy.approvalTimeout)}; the call was not made.`;
        this.lastError = msg;
        this.emit({
          kind: 'approval_decided',
          toolCallId: pending.toolCallId,
          tool: pending.name,
          text: msg,
          isError: true,
        });
        await this.raise({
          type: 'warning',
          priority: NotificationPriority.HIGH,
          title: 'Approval timed out',
          message: msg,
          detail: '',
          display_time: 30,
          group: 'approvals',
        });
        return `${msg} Ask the user before trying again.`;
      }
      const d = wait.decision as ApprovalDecision;
      this.emit({
        kind: 'approval_decided',
        toolCallId: pending.toolCallId,
        tool: pending.name,
        text: d.approve ? 'approved' : `rejected${d.reason ? `: ${d.reason}` : ''}`,
      });
      return d.approve
        ? null
        : `The user rejected this call${d.reason ? `: ${d.reason}` : ''}. Do not retry it as is.`;
    } finally {
      this.approvals.delete(pending.toolCallId);
      pending.state = 'queued';
      if (this.approvals.size === 0 && this.status === 'waiting_for_approval') this.status = 'running';
    }
  }

  /** Adds a notification the run raises itself, and delivers it to the user's inbox when configured. */
  private async raise(notification: Parameters<NotificationBox['add']>[0]): Promise<void> {
    this.notifications.add(notification);
    const user = this.input.notify?.user;
    if (user) await deliverNotification({ targets: [inboxWorkflowId(user)], notification });
  }

  private finish(answer: string | null, reason: StopReason): AgentResult {
    this.answer = answer;
    this.stopReason = reason;
    this.status = reason === 'final_answer' ? 'completed' : 'stopped';
    this.emit(
      reason === 'final_answer'
        ? { kind: 'final_answer', text: clip(answer ?? '') }
        : { kind: 'stopped', text: `budget reached: ${reason}` },
    );
    this.publishSearchAttributes();
    return { answer, stopReason: reason, steps: this.step, usage: this.usage };
  }

  private emit(e: Omit<AgentEvent, 'seq' | 'at' | 'step'>): void {
    this.eventSeq += 1;
    this.events.push({ seq: this.eventSeq, at: new Date().toISOString(), step: this.step, ...e });
    if (this.events.length > MAX_EVENTS) this.events.splice(0, this.events.length - MAX_EVENTS);
  }

  /**
   * Keeps the run's search attributes current, but only when the starter set them: upserting an
   * attribute the namespace has not registered would fail every workflow task.
   */
  private publishSearchAttributes(): void {
    if (workflowInfo().typedSearchAttributes.get(AgentStatusKey) === undefined) return;
    const lastTool = [...this.events].reverse().find((e) => e.kind === 'tool_started')?.tool;
    const model = this.input.model;
    upsertSearchAttributes([
      { key: AgentStatusKey, value: this.status },
      { key: AgentStepKey, value: this.step },
      {
        key: AgentModelKey,
        value: model.provider === 'scripted' ? 'scripted' : `${model.provider}:${model.model}`,
      },
      ...(lastTool ? [{ key: AgentLastToolKey, value: lastTool }] : []),
    ]);
  }

  private carry(): CarriedState {
    return {
      messages: this.messages,
      step: this.step,
      usage: this.usage,
      events: this.events,
      eventSeq: this.eventSeq,
      continuations: this.continuations,
      pendingUserMessages: this.pendingUserMessages,
      lastError: this.lastError,
      toolCallSeq: this.toolCallSeq,
      notifications: this.notifications.snapshot(),
      citations: this.citations,
    };
  }

  private view(): AgentStateView {
    return {
      status: this.status,
      step: this.step,
      maxSteps: this.input.policy.maxSteps,
      usage: this.usage,
      pendingToolCalls: [...this.pending.values()].map((p) => ({ ...p })),
      lastError: this.lastError,
      continuations: this.continuations,
      answer: this.answer,
      stopReason: this.stopReason,
    };
  }

  private transcript(): TranscriptEntry[] {
    return this.messages.map((m): TranscriptEntry => {
      switch (m.role) {
        case 'assistant':
          return {
            role: m.role,
            text: m.content ?? '',
            ...(m.toolCalls
              ? { toolCalls: m.toolCalls.map((c) => ({ id: c.id, name: c.name, args: c.arguments })) }
              : {}),
          };
        case 'tool':
          return {
            role: m.role,
            text: m.content,
            toolCallId: m.toolCallId,
            name: m.name,
            isError: m.isError ?? false,
          };
        default:
          return { role: m.role, text: m.content };
      }
    });
  }
}
