import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  log,
  patched,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common/lib/time';
import type { Duration } from '@temporalio/common';
import {
  AgentInputSchema,
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
  CarriedBudget,
  CarriedState,
  CarriedTurn,
  ParsedAgentInput,
  RunDefaults,
  StopReason,
} from '../shared/agent';
import {
  BUDGETS,
  formatBytes,
  jsonBytes,
  overBudgetMessage,
  truncateUtf8,
  utf8Bytes,
} from '../shared/budgets';
import type { CitationState } from '../shared/citations';
import {
  DEFAULT_MAX_TEXT_CHARS,
  applyCitations,
  boundCitationState,
  createCitationState,
  resolveCitations,
  searchRecordsOf,
} from '../shared/citations';
import { previewOf } from '../shared/content';
import type { ApprovalPolicy } from '../shared/approvals';
import { mergeApprovalPolicies } from '../shared/approvals';
import type { BudgetName, BudgetUse } from '../shared/run-budgets';
import { budgetsToWarn, costOf, describeBudget, exhaustedBudget, priceFor } from '../shared/run-budgets';
import type { ToolMessageContent } from '../shared/conversation';
import type { CallModelOutput } from '../shared/model';
import { addUsage } from '../shared/conversation';
import { inboxWorkflowId } from '../shared/notifications/messages';
import type { ValidNotificationInput } from '../shared/notifications/schema';
import { DEFAULT_SYSTEM_PROMPT } from '../prompts/system';
import { AgentLastToolKey, AgentModelKey, AgentStatusKey, AgentStepKey } from '../shared/search-attributes';
import type { ToolDefinition, ToolResult } from '../shared/tools/define';
import { formatZodIssues } from '../shared/tools/define';
import { callModel, callModelLocally, deliverNotification, runDefaults } from './agent/activities';
import { ConversationLog } from './agent/conversation';
import { EventLog } from './agent/events';
import { ToolRunner } from './agent/tools';
import { NotificationBox } from './notifications';
import { NotificationPriority } from '../shared/notifications/schema';

/**
 * Marks runs with approval policies (safe defaults, untrusted content, notifications that ask) and
 * budgets that warn and end with a summary turn; runs recorded before them replay the old way.
 */
export const POLICIES_PATCH = 'approval-policies-and-budgets';

/**
 * Marks runs that take the fast path of `policy.localActivities` (quick steps as local activities).
 * Only runs that ask for it check the patch, so every other run issues the same commands as before.
 */
export const LOCAL_ACTIVITIES_PATCH = 'local-activities';

function invalidInput(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: 'InvalidAgentInput', message, nonRetryable: true });
}

/**
 * The agent loop: model turn → tool calls (each its own activity, run concurrently up to a bound)
 * → results back to the model, until the model answers, a budget stops it, or it is cancelled.
 * Continues as new when the server suggests it, when its history passes its budget, or after
 * `policy.continueAsNewAfterSteps` steps, carrying all state (large content by reference) in the
 * second argument.
 */
export async function agentWorkflow(rawInput: AgentInput, carried?: CarriedState): Promise<AgentResult> {
  const parsed = AgentInputSchema.safeParse(rawInput);
  if (!parsed.success) throw invalidInput(`Invalid agent input: ${formatZodIssues(parsed.error)}`);
  const bytes = jsonBytes(rawInput);
  if (bytes > BUDGETS.agentInputBytes) {
    throw invalidInput(
      `Invalid agent input: ${overBudgetMessage('the input', bytes, BUDGETS.agentInputBytes)}`,
    );
  }
  const run = new AgentRun(parsed.data, carried);
  run.registerHandlers();
  return run.execute(rawInput, carried?.turn);
}

/** State and behaviour of one agent run; one instance per workflow execution (no module-level state). */
class AgentRun {
  private readonly conversation: ConversationLog;
  private readonly events: EventLog;
  private readonly tools: ToolRunner;
  private readonly notifications: NotificationBox;
  private step: number;
  private usage: CarriedState['usage'];
  private continuations: number;
  private pendingUserMessages: string[];
  private lastError: string | null;
  private toolCallSeq: number;
  private citations: CitationState;
  private status: AgentStatus = 'running';
  private answer: string | null = null;
  private stopReason: StopReason | null = null;
  private readonly stepsAtStart: number;
  /** Whether this run uses approval policies and budget warnings (see POLICIES_PATCH). */
  private readonly policies: boolean;
  private approvalPolicy: ApprovalPolicy | null = null;
  private defaults: RunDefaults | undefined;
  private untrusted: string | null;
  private budget: CarriedBudget;
  private wallClockOver = false;
  /** Which steps run as local activities ('never' for runs recorded before LOCAL_ACTIVITIES_PATCH). */
  private readonly localActivities: ParsedAgentInput['policy']['localActivities'];

  constructor(
    private readonly input: ParsedAgentInput,
    carried: CarriedState | undefined,
  ) {
    const system = input.system ?? DEFAULT_SYSTEM_PROMPT;
    this.conversation = carried
      ? ConversationLog.carried(carried, system, input.task)
      : ConversationLog.start(system, input.task);
    this.events = new EventLog(carried?.events, carried?.eventSeq);
    this.step = carried?.step ?? 0;
    this.usage = carried?.usage ?? { inputTokens: 0, outputTokens: 0, modelCalls: 0, toolCalls: 0 };
    this.continuations = carried?.continuations ?? 0;
    this.pendingUserMessages = carried?.pendingUserMessages ?? [];
    this.lastError = carried?.lastError ?? null;
    this.toolCallSeq = carried?.toolCallSeq ?? 0;
    this.stepsAtStart = this.step;
    this.notifications = new NotificationBox(carried?.notifications);
    this.citations = carried?.citations ?? createCitationState();
    this.policies = patched(POLICIES_PATCH);
    this.defaults = carried?.defaults;
    this.untrusted = carried?.untrusted ?? null;
    this.budget = carried?.budget ?? { startedAt: Date.now(), costUsd: 0, warned: [] };
    const local = input.policy.localActivities;
    this.localActivities = local !== 'never' && patched(LOCAL_ACTIVITIES_PATCH) ? local : 'never';
    this.tools = new ToolRunner({
      input,
      localTools: this.localActivities !== 'never',
      emit: (e) => this.emit(e),
      countToolCall: () => {
        this.usage = { ...this.usage, toolCalls: this.usage.toolCalls + 1 };
      },
      setLastError: (message) => {
        this.lastError = message;
      },
      approvalsChanged: () => this.approvalsChanged(),
      raise: (n) => this.raise(n),
      cite: (def, args, result) => this.cite(def, args, result),
      historyOverBudget: () => historyOverBudget(),
      approvalPolicy: () => this.approvalPolicy,
      untrusted: () => this.untrusted,
      markUntrusted: (source) => {
        this.untrusted = source;
      },
      stopping: () => (this.wallClockOver ? describeBudget('max_wall_clock', this.wallClock()) : null),
    });
  }

  registerHandlers(): void {
    this.notifications.registerHandlers();
    this.tools.registerHandlers();
    setHandler(userMessageSignal, (msg) => this.receiveUserMessage(msg));
    setHandler(stateQuery, () => this.view());
    setHandler(transcriptQuery, (args) => this.conversation.page(args));
    setHandler(citationsQuery, () => resolveCitations(this.citations));
    setHandler(eventsQuery, (opts) => this.events.since(opts?.since ?? 0));
  }

  async execute(rawInput: AgentInput, carriedTurn: CarriedTurn | undefined): Promise<AgentResult> {
    this.publishSearchAttributes();
    try {
      if (this.policies) {
        this.defaults ??= await runDefaults();
        this.approvalPolicy = mergeApprovalPolicies(
          this.defaults.approvals,
          this.input.policy.approvals,
          this.input.policy.requireApproval,
        );
        this.startWallClock();
      }
      if (carriedTurn && !(await this.finishTurn(carriedTurn)))
        return await this.continueAsNew(rawInput, carriedTurn);
      for (;;) {
        const stop = this.budgetStop();
        if (stop) return this.policies ? await this.stopForBudget(stop) : this.finish(null, stop);

        this.drainUserMessages();
        this.step += 1;
        const { content, turn } = await this.modelTurn();
        if (turn.calls.length === 0) {
          // A message that arrived while the model was answering deserves a reply of its own.
          if (this.pendingUserMessages.length > 0) continue;
          return this.finish(content ?? '', 'final_answer');
        }
        if (!(await this.finishTurn(turn))) return await this.continueAsNew(rawInput, turn);
        this.publishSearchAttributes();

        const stepsThisRun = this.step - this.stepsAtStart;
        if (historyOverBudget() || stepsThisRun >= this.input.policy.continueAsNewAfterSteps) {
          return await this.continueAsNew(rawInput);
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
      this.emit({ kind: 'error', text: this.lastError, isError: true });
      this.publishSearchAttributes();
      throw err;
    }
  }

  /** Runs the turn's calls; when all finished, their results join the conversation in call order. */
  private async finishTurn(turn: CarriedTurn): Promise<boolean> {
    if (!(await this.tools.runTurn(turn))) return false;
    for (const c of turn.calls) if (c.result) this.conversation.add(c.result);
    return true;
  }

  private async continueAsNew(rawInput: AgentInput, turn?: CarriedTurn): Promise<never> {
    await condition(allHandlersFinished);
    this.continuations += 1;
    this.emit({
      kind: 'continued_as_new',
      text: `continuation ${this.continuations}${turn ? ` (mid-turn at step ${turn.step}: history ${formatBytes(workflowInfo().historySize)})` : ''}`,
    });
    return continueAsNew<typeof agentWorkflow>(rawInput, this.carry(rawInput, turn));
  }

  private budgetStop(): StopReason | null {
    if (!this.policies) {
      if (this.step >= this.input.policy.maxSteps) return 'max_steps';
      const max = this.input.policy.maxTokens;
      if (max !== undefined && this.usage.inputTokens + this.usage.outputTokens >= max) return 'max_tokens';
      return null;
    }
    return exhaustedBudget(this.budgetUse());
  }

  /** Every budget the run has, with its use (cost in USD, wall-clock time in ms). */
  private budgetUse(): BudgetUse {
    const p = this.input.policy;
    const u = this.usage;
    const use: BudgetUse = { max_steps: { used: this.step, max: p.maxSteps } };
    if (p.maxTokens !== undefined)
      use.max_tokens = { used: u.inputTokens + u.outputTokens, max: p.maxTokens };
    if (p.maxInputTokens !== undefined) use.max_input_tokens = { used: u.inputTokens, max: p.maxInputTokens };
    if (p.maxOutputTokens !== undefined)
      use.max_output_tokens = { used: u.outputTokens, max: p.maxOutputTokens };
    if (p.maxCostUsd !== undefined) use.max_cost = { used: this.budget.costUsd, max: p.maxCostUsd };
    if (p.maxWallClock !== undefined) {
      use.max_wall_clock = this.wallClockOver
        ? { ...this.wallClock(), used: this.wallClock().max }
        : this.wallClock();
    }
    return use;
  }

  private wallClock(): { used: number; max: number } {
    const max = msToNumber((this.input.policy.maxWallClock ?? 0) as Duration);
    return { used: Math.max(0, Date.now() - this.budget.startedAt), max };
  }

  /**
   * Durable timers for the wall-clock budget (from the run's first start, so a continued run waits
   * only for what is left): a warning at 80 %, and at 100 % waits end and the loop stops.
   */
  private startWallClock(): void {
    if (this.input.policy.maxWallClock === undefined) return;
    const { used, max } = this.wallClock();
    const warnIn = max * 0.8 - used;
    if (!this.budget.warned.includes('max_wall_clock') && warnIn > 0) {
      void sleep(warnIn).then(() => this.warnBudgets(['max_wall_clock']));
    }
    if (used >= max) {
      this.wallClockOver = true;
      return;
    }
    void sleep(max - used).then(() => {
      this.wallClockOver = true;
      this.warnBudgets();
    });
  }

  /** Warns (once per budget) about every budget at or past 80 %, and about `due` ones (their timer fired). */
  private warnBudgets(due: BudgetName[] = []): void {
    const use = this.budgetUse();
    const names = new Set([...budgetsToWarn(use, this.budget.warned), ...due.filter((n) => use[n])]);
    for (const name of names) {
      if (this.budget.warned.includes(name)) continue;
      this.budget = { ...this.budget, warned: [...this.budget.warned, name] };
      const b = this.budgetUse()[name];
      if (!b) continue;
      const text = `Budget warning: ${describeBudget(name, b)} used; the run stops at 100 %.`;
      this.emit({ kind: 'budget_warning', text });
      void this.raiseInOrder({
        type: 'warning',
        priority: NotificationPriority.HIGH,
        title: `Budget at ${Math.floor((b.used / b.max) * 100)} %: ${name}`,
        message: text,
        detail: '',
        display_time: 30,
        group: 'budgets',
      });
    }
  }

  /**
   * Ends the run for a budget: the model gets one last turn without tools to summarise what was
   * done (its answer is the result), and an `error` notification says which budget ended it.
   */
  private async stopForBudget(reason: StopReason): Promise<AgentResult> {
    const name = reason as BudgetName;
    const b = this.budgetUse()[name];
    const said = b ? describeBudget(name, b) : name;
    this.drainUserMessages();
    this.conversation.add({
      role: 'user',
      content: `The run's budget is used up (${said}). Do not call tools. Summarise for the user what was done, what was found, and what is left to do.`,
    });
    this.step += 1;
    let summary: string | null = null;
    try {
      const { content } = await this.modelTurn(true);
      summary = content;
    } catch (err) {
      if (isCancellation(err)) throw err;
      // The run still stops; the result says why there is no summary.
      this.lastError = `The summary turn failed: ${(err as Error).message}`;
      this.emit({ kind: 'error', text: this.lastError, isError: true });
    }
    await this.raiseInOrder({
      type: 'error',
      priority: NotificationPriority.HIGH,
      title: `Run stopped: ${name} budget reached`,
      message: `The run stopped at step ${this.step}: ${said}.${summary ? ` Summary: ${summary.slice(0, 2000)}` : ''}`,
      detail: '',
      display_time: 30,
      group: 'budgets',
    });
    await this.notificationsSent;
    return { ...this.finish(summary, reason), budget: said };
  }

  /** Budget notifications go out one after another, in order, and before the run ends. */
  private notificationsSent: Promise<void> = Promise.resolve();

  private raiseInOrder(n: ValidNotificationInput): Promise<void> {
    // A budget notice that cannot reach the inbox must not end the run: it stays in the run's own list.
    this.notificationsSent = this.notificationsSent
      .then(() => this.raise(n))
      .catch((err: unknown) => {
        this.lastError = `Notification "${n.title}" not delivered to the inbox: ${(err as Error).message}`;
        log.warn(this.lastError);
      });
    return this.notificationsSent;
  }

  /** A user message for the next turn, cut to its budget; refused (with an event) past the waiting budget. */
  private receiveUserMessage(msg: { text?: unknown } | undefined): void {
    // A bad signal payload must not fail the workflow task: record and ignore it.
    const raw = typeof msg?.text === 'string' ? msg.text.trim() : '';
    if (!raw) {
      log.warn('Ignored userMessage signal without text');
      return;
    }
    const text = truncateUtf8(raw, BUDGETS.userMessageBytes, 'message').text;
    const waiting = this.pendingUserMessages.reduce((n, t) => n + utf8Bytes(t), 0);
    if (waiting + utf8Bytes(text) > BUDGETS.pendingUserMessagesBytes) {
      this.emit({
        kind: 'error',
        text: `User message dropped: messages waiting for the next turn would exceed ${formatBytes(BUDGETS.pendingUserMessagesBytes)}. Send it again after the agent's next turn.`,
        isError: true,
      });
      return;
    }
    this.pendingUserMessages.push(text);
    this.emit({ kind: 'user_message', text });
  }

  private drainUserMessages(): void {
    for (const text of this.pendingUserMessages.splice(0))
      this.conversation.add({ role: 'user', content: text });
  }

  private async modelTurn(summaryOnly = false): Promise<{ content: string | null; turn: CarriedTurn }> {
    this.emit({ kind: 'model_started' });
    const started = Date.now();
    let out;
    try {
      const policy = this.input.policy;
      out = await (this.localActivities === 'auto' ? callModelLocally : callModel)({
        model: this.input.model,
        tools: summaryOnly ? [] : this.input.tools,
        step: this.step,
        ...this.conversation.modelInput(),
        window: {
          maxMessages: policy.maxContextMessages,
          ...(policy.contextTokens ? { contextTokens: policy.contextTokens } : {}),
        },
      });
    } catch (err) {
      if (isCancellation(err)) throw err;
      // A regular activity's failure wraps the activity's error; a local one's may arrive as itself.
      const cause =
        err instanceof ActivityFailure
          ? err.cause instanceof ApplicationFailure
            ? err.cause
            : undefined
          : err instanceof ApplicationFailure
            ? err
            : undefined;
      throw ApplicationFailure.create({
        type: cause?.type ?? 'ModelCallFailed',
        message: `Model call failed at step ${this.step}: ${cause?.message ?? (err as Error).message}`,
        nonRetryable: true,
        cause: err as Error,
      });
    }
    this.conversation.sent(out);
    this.usage = { ...this.usage, ...addUsage(this.usage, out.usage), modelCalls: this.usage.modelCalls + 1 };
    if (this.policies) this.addCost(out);
    // A summary turn runs no tools, whatever the model asked for.
    const toolCalls = (summaryOnly ? [] : out.toolCalls).map((call) => {
      this.toolCallSeq += 1;
      return { ...call, id: this.conversation.uniqueCallId(call.id, this.step, this.toolCallSeq) };
    });
    this.conversation.add({
      role: 'assistant',
      content: out.content,
      ...(toolCalls.length ? { toolCalls } : {}),
    });
    this.emit({ kind: 'model_finished', text: out.content ?? '', durationMs: Date.now() - started });
    if (this.policies) this.warnBudgets();
    return { content: out.content, turn: { step: this.step, calls: toolCalls.map((call) => ({ call })) } };
  }

  /** Adds a model call's cost: the run's price for the model, else the one the worker's table gave. */
  private addCost(out: CallModelOutput): void {
    const m = this.input.model;
    const price = priceFor(
      { provider: m.provider, ...('model' in m && m.model ? { model: m.model } : {}) },
      this.input.policy.prices,
      this.defaults?.prices,
    );
    if (!price) {
      if (this.input.policy.maxCostUsd !== undefined) {
        throw ApplicationFailure.create({
          type: 'InvalidAgentInput',
          message: `policy.maxCostUsd is set but no price is known for ${m.provider}${'model' in m && m.model ? `:${m.model}` : ''}: add it to policy.prices or to runs.prices in the worker's config file`,
          nonRetryable: true,
        });
      }
      return;
    }
    this.budget = { ...this.budget, costUsd: this.budget.costUsd + costOf(out.usage, price) };
  }

  /**
   * Numbers the records of a search tool's result for citation (`[[a1]]`), counting on across every
   * search of the run, and returns what the model reads: rendered now for small results, or by the
   * model activity from the stored records for large ones. Undefined for other tools.
   */
  private cite(def: ToolDefinition, args: unknown, result: ToolResult): ToolMessageContent | undefined {
    if (def.category !== 'search') return undefined;
    const records = searchRecordsOf(result.data);
    if (!records) return undefined;
    const query = (args as { query?: unknown } | undefined)?.query;
    const applied = applyCitations(this.citations, records, typeof query === 'string' ? { query } : {});
    this.citations = boundCitationState(applied.state, BUDGETS.citationsBytes);
    if (!result.dataRef || applied.picks.length === 0) return applied.content;
    return {
      search: result.dataRef,
      picks: applied.picks,
      maxTextChars: DEFAULT_MAX_TEXT_CHARS,
      preview: previewOf(
        applied.records.map((r) => `[${r.sign}${r.cite_index}] ${r.title}`).join('; '),
        BUDGETS.toolResultPreviewBytes,
      ),
      bytes: result.dataBytes ?? 0,
    };
  }

  private approvalsChanged(): void {
    if (this.tools.waitingForApproval()) this.status = 'waiting_for_approval';
    else if (this.status === 'waiting_for_approval') this.status = 'running';
    this.publishSearchAttributes();
  }

  /** Adds a notification the run raises itself, and delivers it to the user's inbox when configured. */
  private async raise(notification: ValidNotificationInput): Promise<void> {
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
        ? { kind: 'final_answer', text: answer ?? '' }
        : { kind: 'stopped', text: `budget reached: ${reason}` },
    );
    this.publishSearchAttributes();
    return {
      answer,
      stopReason: reason,
      steps: this.step,
      usage: this.usage,
      ...(this.policies && this.budget.costUsd > 0 ? { costUsd: this.budget.costUsd } : {}),
    };
  }

  private emit(e: Omit<AgentEvent, 'seq' | 'at' | 'step'>): void {
    this.events.emit(this.step, e);
  }

  /**
   * Keeps the run's search attributes current, but only when the starter set them: upserting an
   * attribute the namespace has not registered would fail every workflow task.
   */
  private publishSearchAttributes(): void {
    if (workflowInfo().typedSearchAttributes.get(AgentStatusKey) === undefined) return;
    const lastTool = this.events.latest('tool_started')?.tool;
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

  /**
   * What continue-as-new carries: the newest events and transcript entries (within their carried
   * budgets) and everything else the run knows. It must fit one payload with the input: when it
   * would not, the transcript, then events, then citation snippets shrink further (the whole
   * conversation stays in the content store and history either way).
   */
  private carry(rawInput: AgentInput, turn: CarriedTurn | undefined): CarriedState {
    this.conversation.trimTranscript(BUDGETS.carriedTranscriptBytes);
    this.events.trim(BUDGETS.carriedEventsBytes);
    const build = (): CarriedState => ({
      ...this.conversation.snapshot(),
      ...(turn ? { turn } : {}),
      step: this.step,
      usage: this.usage,
      events: this.events.snapshot(),
      eventSeq: this.events.seq,
      continuations: this.continuations,
      pendingUserMessages: this.pendingUserMessages,
      lastError: this.lastError,
      toolCallSeq: this.toolCallSeq,
      notifications: this.notifications.snapshot(),
      citations: this.citations,
      ...(this.policies
        ? {
            budget: this.budget,
            untrusted: this.untrusted,
            ...(this.defaults ? { defaults: this.defaults } : {}),
          }
        : {}),
    });
    const shrinks = [
      () => this.conversation.trimTranscript(BUDGETS.carriedTranscriptBytes / 8),
      () => this.events.trim(BUDGETS.carriedEventsBytes / 8),
      () => {
        this.citations = boundCitationState(this.citations, BUDGETS.citationsBytes / 4);
      },
    ];
    let carried = build();
    for (const shrink of shrinks) {
      if (jsonBytes([rawInput, carried]) <= BUDGETS.continueAsNewInputBytes) return carried;
      shrink();
      carried = build();
    }
    const bytes = jsonBytes([rawInput, carried]);
    if (bytes > BUDGETS.continueAsNewInputBytes) {
      throw ApplicationFailure.create({
        type: 'CarriedStateTooLarge',
        message: overBudgetMessage('The state to continue with', bytes, BUDGETS.continueAsNewInputBytes),
        nonRetryable: true,
      });
    }
    return carried;
  }

  private view(): AgentStateView {
    return {
      status: this.status,
      step: this.step,
      maxSteps: this.input.policy.maxSteps,
      usage: this.usage,
      pendingToolCalls: this.tools.pendingCalls(),
      ...(this.policies
        ? {
            approvals: this.tools.pendingApprovals(),
            budgets: this.budgetUse(),
            costUsd: this.budget.costUsd,
            untrusted: this.untrusted,
          }
        : {}),
      lastError: this.lastError,
      continuations: this.continuations,
      answer: this.answer,
      stopReason: this.stopReason,
    };
  }
}

/** Whether the run's history is past its budget (or the server suggests continuing as new). */
function historyOverBudget(): boolean {
  const info = workflowInfo();
  return (
    info.continueAsNewSuggested ||
    info.historySize >= BUDGETS.continueAsNewHistoryBytes ||
    info.historyLength >= BUDGETS.continueAsNewHistoryEvents
  );
}
