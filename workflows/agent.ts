import {
  ApplicationFailure,
  ContinueAsNew,
  TemporalFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  patched,
  log,
  setHandler,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import {
  citationsQuery,
  eventsQuery,
  stateQuery,
  subAgentProgressSignal,
  transcriptQuery,
  userMessageSignal,
} from '../shared/agent';
import type {
  AgentEvent,
  AgentInput,
  AgentResult,
  AgentStateView,
  AgentStatus,
  ParsedAgentInput,
  RunDefaults,
  RunUsage,
  StopReason,
} from '../shared/agent';
import type { ReservableBudgets } from '../shared/agent/sub-agents';
import { isAgentRef } from '../shared/agent/sub-agents';
import type { CarriedState, CarriedTurn } from './agent/carried-state';
import { SIZE_BUDGETS, formatBytes } from '../shared/temporal-limits';
import { checkAgentInput } from '../shared/agent/check-input';
import type { ApprovalPolicy } from '../shared/approvals';
import { mergeApprovalPolicies, serverNamesOfToolsEnabledOneByOne } from '../shared/approvals';
import type { RunLimitName } from '../shared/run-limits';
import { describeRunLimit } from '../shared/run-limits';
import { addUsage } from '../shared/conversation';
import { inboxWorkflowId } from '../shared/notifications/messages';
import type { ValidNotificationInput } from '../shared/notifications/schema';
import { DEFAULT_SYSTEM_PROMPT } from '../prompts/system';
import { callModel, callModelLocally, deliverNotification, runDefaults } from './agent/activities';
import { RunLimitEnforcer } from './agent/run-limit-enforcer';
import { fitCarriedState } from './agent/carry';
import { RunCitations } from './agent/citations';
import { ConversationLog } from './agent/conversation';
import { EventLog } from './agent/events';
import { modelCallFailure } from './agent/model-call';
import type { RunAttributes } from './agent/search-attributes';
import { SearchAttributePublisher, runMemo } from './agent/search-attributes';
import { modelAttribute } from '../shared/search-attributes';
import { McpToolbox } from './agent/mcp';
import { OwnToolbox } from './agent/own-tools';
import { isMcpRef } from '../shared/tools/mcp';
import { startingPrompts } from './agent/mcp-prompts';
import { isOwnToolName } from '../shared/tools/own';
import { ToolRunner } from './agent/tools';
import { UserMessages } from './agent/user-messages';
import { StructuredOutput } from './agent/structured-output';
import { ParentReporter, SubAgents, summarisesBudgetStop } from './agent/sub-agents';
import { RunPatches } from './agent/patches';
import { NotificationBox } from './notifications';
import { RunMetrics } from './metrics';
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

/**
 * Marks runs whose own notifications (budget warnings, approval timeouts) take the route every
 * other notification takes: the `notify` update, to the run and to its user's inbox. Runs recorded
 * before added them to their state directly; only runs that raise one check the patch.
 */
export const ONE_NOTIFICATION_ROUTE_PATCH = 'one-notification-route';

/**
 * Marks runs whose continue-as-new leaves the closing execution as it was: runs recorded before
 * took the continue-as-new for a failure on its way out (status "failed", an error event, and
 * `AgentStatus=failed` in visibility on every execution a long run continued from).
 */
export const CONTINUE_AS_NEW_NOT_FAILED_PATCH = 'continue-as-new-not-failed';

/**
 * Marks runs whose policy may name a whole MCP server (`mcp:<server>`) whose tools the run enables
 * one by one. Runs recorded before failed at start on such a policy; only runs with one check it.
 */
export const MCP_SERVER_POLICY_NAMES_PATCH = 'mcp-server-policy-names';

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
  // The check every door that starts runs makes, in the same order and words.
  const checked = checkAgentInput(rawInput);
  if (!checked.ok) throw invalidInput(checked.message);
  const { policy, tools } = checked.parsed;
  const servers = serverNamesOfToolsEnabledOneByOne(policy.approvals, policy.requireApproval, tools);
  if (servers.length > 0 && !patched(MCP_SERVER_POLICY_NAMES_PATCH)) {
    throw invalidInput(`Invalid run: policy names ${servers.join(', ')}, not enabled for this run`);
  }
  const run = new AgentRun(checked.parsed, carried);
  run.registerHandlers();
  return run.execute(rawInput, carried?.turn);
}

/** State and behaviour of one agent run; one instance per workflow execution (no module-level state). */
class AgentRun {
  /** Replaced once, before the first step, in a run that starts from MCP prompts. */
  private conversation: ConversationLog;
  /** Whether this execution starts the run (none before it carried state). */
  private readonly fresh: boolean;
  private readonly events: EventLog;
  private readonly tools: ToolRunner;
  private readonly mcp: McpToolbox;
  private readonly own: OwnToolbox;
  private readonly notifications: NotificationBox;
  private step: number;
  private usage: CarriedState['usage'];
  private continuations: number;
  private readonly userMessages: UserMessages;
  private lastError: string | null;
  private toolCallSeq: number;
  private readonly citations: RunCitations;
  private status: AgentStatus = 'running';
  private answer: string | null = null;
  /** The parsed answer of a run with an output schema, once it matched. */
  private outputValue: unknown = undefined;
  /** The run's output schema and its repairs (null without `output`; see STRUCTURED_OUTPUT_PATCH). */
  private readonly output: StructuredOutput | null;
  private stopReason: StopReason | null = null;
  private readonly stepsAtStart: number;
  /** Whether this run uses approval policies and budget warnings (see POLICIES_PATCH). */
  private readonly policies: boolean;
  private approvalPolicy: ApprovalPolicy | null = null;
  private defaults: RunDefaults | undefined;
  private untrusted: string | null;
  private readonly runLimits: RunLimitEnforcer;
  /** Asked before any other patch, so in the first activation (see PATCHES_AT_START_PATCH). */
  private readonly patches = new RunPatches();
  private readonly attributes = new SearchAttributePublisher((id) => this.patches.has(id));
  private readonly metrics = new RunMetrics();
  /** Which steps run as local activities ('never' for runs recorded before LOCAL_ACTIVITIES_PATCH). */
  private readonly localActivities: ParsedAgentInput['policy']['localActivities'];
  /** The built-in tools the model is offered: the run's tools less its `mcp:`/`agent:` references and own tools (the same list when it has none). */
  private readonly builtInTools: string[];
  /** The sub-agents the run offers (none without `agents`). */
  private readonly agents: SubAgents;
  /** A sub-agent's link to the run that started it (a no-op for top-level runs). */
  private readonly reporter: ParentReporter;

  constructor(
    private readonly input: ParsedAgentInput,
    carried: CarriedState | undefined,
  ) {
    const system = input.system ?? DEFAULT_SYSTEM_PROMPT;
    this.fresh = carried === undefined;
    this.conversation = carried
      ? ConversationLog.carried(carried, system, input.task)
      : ConversationLog.start(system, input.task);
    this.events = new EventLog(carried?.events, carried?.eventSeq);
    this.step = carried?.step ?? 0;
    this.usage = carried?.usage ?? { inputTokens: 0, outputTokens: 0, modelCalls: 0, toolCalls: 0 };
    this.continuations = carried?.continuations ?? 0;
    this.userMessages = new UserMessages(carried?.pendingUserMessages ?? [], (e) => this.emit(e));
    this.lastError = carried?.lastError ?? null;
    this.toolCallSeq = carried?.toolCallSeq ?? 0;
    this.stepsAtStart = this.step;
    if (!carried) this.metrics.started();
    this.notifications = new NotificationBox(carried?.notifications);
    this.citations = new RunCitations(carried?.citations);
    this.policies = patched(POLICIES_PATCH);
    this.defaults = carried?.defaults;
    this.untrusted = carried?.untrusted ?? null;
    this.runLimits = new RunLimitEnforcer(
      {
        input,
        // Sub-agents' steps, usage and cost count against the run's budgets (none without `agents`).
        step: () => this.step + this.agents.steps(),
        usage: () => this.totalUsage(),
        extraCostUsd: () => this.agents.liveCostUsd(),
        emit: (e) => this.emit(e),
        raise: (n) => this.raise(n),
        setLastError: (message) => {
          this.lastError = message;
        },
      },
      this.policies,
      carried?.budget,
    );
    const notBuiltIn = (t: string) => isMcpRef(t) || isAgentRef(t) || isOwnToolName(t);
    this.builtInTools = input.tools.some(notBuiltIn)
      ? input.tools.filter((t) => !notBuiltIn(t))
      : input.tools;
    this.output = StructuredOutput.of(input.output, input.policy.outputRepairs, carried?.outputRepairs);
    this.mcp = new McpToolbox(
      { input, emit: (e) => this.emit(e), patched: (id) => this.patches.has(id) },
      carried?.mcp,
    );
    this.own = new OwnToolbox(input, carried?.own);
    this.agents = new SubAgents(
      {
        input,
        left: () => this.budgetLeft(),
        fold: (usage, costUsd) => {
          this.usage = addRunUsage(this.usage, usage);
          this.runLimits.addSpent(costUsd);
        },
        emit: (e) => this.emit(e),
      },
      carried?.agents,
    );
    this.reporter = new ParentReporter(input.parent);
    const local = input.policy.localActivities;
    this.localActivities = local !== 'never' && patched(LOCAL_ACTIVITIES_PATCH) ? local : 'never';
    this.tools = new ToolRunner({
      input,
      patched: (id) => this.patches.has(id),
      mcp: this.mcp,
      own: this.own,
      agents: this.agents,
      localTools: this.localActivities !== 'never',
      emit: (e) => this.emit(e),
      countToolCall: () => {
        this.usage = { ...this.usage, toolCalls: this.usage.toolCalls + 1 };
      },
      setLastError: (message) => {
        this.lastError = message;
      },
      approvalsChanged: () => this.waitsChanged(),
      questionsChanged: () => {
        this.runLimits.pauseWallClock(
          this.tools.waitingForInput() && this.input.policy.wallClockCountsQuestions !== true,
        );
        this.waitsChanged();
      },
      metrics: this.metrics,
      raise: (n) => this.raise(n),
      cite: (def, args, result) => this.citations.cite(def, args, result),
      historyOverBudget: () => historyOverBudget(),
      approvalPolicy: () => this.approvalPolicy,
      untrusted: () => this.untrusted,
      markUntrusted: (source) => {
        this.untrusted = source;
      },
      stopping: () => this.runLimits.stopping(),
    });
  }

  registerHandlers(): void {
    this.notifications.registerHandlers();
    this.tools.registerHandlers();
    setHandler(userMessageSignal, (msg) => this.userMessages.receive(msg));
    setHandler(subAgentProgressSignal, (p) => this.agents.progress(p));
    setHandler(stateQuery, () => this.view());
    setHandler(transcriptQuery, (args) => this.conversation.page(args));
    setHandler(citationsQuery, () => this.citations.resolved());
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
        this.runLimits.startWallClock();
        // Sub-agents of the worker's config that the run names (`agent:<name>`); none for other runs.
        if (this.agents.needsWorkerAgents) this.agents.useWorkerAgents(this.defaults.agents);
      }
      // A run started by someone else's code (a plain client, a child of their workflow) lists like any.
      this.attributes.describeSelf(
        this.attributeValues(),
        runMemo(this.input),
        this.defaults?.searchAttributes === true,
      );
      // Only runs that start from MCP prompts await here, so every other run issues the commands it always did.
      if (this.fresh && (this.input.prompts?.system || this.input.prompts?.task)) {
        const { system, task } = await startingPrompts(this.input);
        this.conversation = ConversationLog.start(system ?? DEFAULT_SYSTEM_PROMPT, task);
      }
      if (this.mcp.needsDiscovery()) await this.mcp.discover();
      // Only runs that name own tools ask the worker about them: other runs issue the commands they always did.
      if (this.own.needsDiscovery()) await this.own.discover();
      if (carriedTurn && !(await this.finishTurn(carriedTurn)))
        return await this.continueAsNew(rawInput, carriedTurn);
      for (;;) {
        const stop = this.runLimits.stop();
        if (stop) return this.policies ? await this.stopForBudget(stop) : this.finish(null, stop);

        this.drainUserMessages();
        // Only runs with MCP tools await here, so every other run issues the commands it always did.
        if (this.mcp.needsDiscovery()) await this.mcp.discover();
        this.step += 1;
        const { content, turn } = await this.modelTurn();
        if (turn.calls.length === 0) {
          // A message that arrived while the model was answering deserves a reply of its own.
          if (this.userMessages.waiting()) continue;
          if (this.output) {
            const verdict = this.output.judge(content);
            if (verdict.kind === 'failed') throw verdict.failure;
            if (verdict.kind === 'repair') {
              this.conversation.add({ role: 'user', content: verdict.message });
              this.emit({
                kind: 'error',
                text: `the answer does not match the output schema (repair ${this.output.repairs} of ${this.input.policy.outputRepairs}): ${verdict.issues}`,
                isError: true,
              });
              continue;
            }
            this.outputValue = verdict.value;
          }
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
      // Continuing as new ends this execution, not the run: the next execution carries it on.
      if (err instanceof ContinueAsNew && this.patches.has(CONTINUE_AS_NEW_NOT_FAILED_PATCH)) throw err;
      if (isCancellation(err)) {
        this.status = 'cancelled';
        this.stopReason = 'cancelled';
        this.emit({ kind: 'stopped', text: 'cancelled' });
        this.publishSearchAttributes();
        this.metrics.finished('cancelled', 'cancelled');
        throw err;
      }
      // Only a Temporal failure fails the run; anything else (continue-as-new of old runs) does not end it.
      if (err instanceof TemporalFailure) this.metrics.finished('failed');
      this.status = 'failed';
      this.lastError = err instanceof Error ? err.message : String(err);
      this.emit({ kind: 'error', text: this.lastError, isError: true });
      this.publishSearchAttributes();
      throw err;
    }
  }

  /**
   * Runs the turn's calls; when all finished, their results join the conversation in call order,
   * then what the model is told about them apart from their results (edited arguments).
   */
  private async finishTurn(turn: CarriedTurn): Promise<boolean> {
    if (!(await this.tools.runTurn(turn))) return false;
    for (const c of turn.calls) if (c.result) this.conversation.add(c.result);
    const notes = turn.calls.flatMap((c) => (c.note ? [c.note] : []));
    if (notes.length) this.conversation.add({ role: 'user', content: notes.join('\n') });
    return true;
  }

  private async continueAsNew(rawInput: AgentInput, turn?: CarriedTurn): Promise<never> {
    await condition(allHandlersFinished);
    this.continuations += 1;
    this.metrics.continuedAsNew();
    this.emit({
      kind: 'continued_as_new',
      text: `continuation ${this.continuations}${turn ? ` (mid-turn at step ${turn.step}: history ${formatBytes(workflowInfo().historySize)})` : ''}`,
    });
    return continueAsNew<typeof agentWorkflow>(rawInput, this.carry(rawInput, turn));
  }

  /**
   * Ends the run for a budget: the model gets one last turn without tools to summarise what was
   * done (its answer is the result; a sub-agent past a token or cost budget gets none), and an
   * `error` notification says which budget ended it.
   */
  private async stopForBudget(reason: StopReason): Promise<AgentResult> {
    const name = reason as RunLimitName;
    const b = this.runLimits.use()[name];
    const said = b ? describeRunLimit(name, b) : name;
    let summary: string | null = null;
    if (summarisesBudgetStop(this.input, name, (id) => this.patches.has(id))) {
      this.drainUserMessages();
      this.conversation.add({
        role: 'user',
        content: `The run's budget is used up (${said}). Do not call tools. Summarise for the user what was done, what was found, and what is left to do.`,
      });
      this.step += 1;
      try {
        const { content } = await this.modelTurn(true);
        summary = content;
      } catch (err) {
        if (isCancellation(err)) throw err;
        // The run still stops; the result says why there is no summary.
        this.lastError = `The summary turn failed: ${(err as Error).message}`;
        this.emit({ kind: 'error', text: this.lastError, isError: true });
      }
    }
    await this.runLimits.raiseInOrder({
      type: 'error',
      priority: NotificationPriority.HIGH,
      title: `Run stopped: ${name} budget reached`,
      message: `The run stopped at step ${this.step}: ${said}.${summary ? ` Summary: ${summary.slice(0, 2000)}` : ''}`,
      detail: '',
      display_time: 30,
      group: 'budgets',
    });
    await this.runLimits.sent();
    return { ...this.finish(summary, reason), budget: said };
  }

  private drainUserMessages(): void {
    for (const text of this.userMessages.take()) this.conversation.add({ role: 'user', content: text });
  }

  private async modelTurn(summaryOnly = false): Promise<{ content: string | null; turn: CarriedTurn }> {
    this.emit({ kind: 'model_started' });
    const started = Date.now();
    let out;
    try {
      const policy = this.input.policy;
      // Awaited here, not in a helper: an extra await would move this run's commands in a workflow
      // task where a timer fires too, and recorded runs would no longer replay.
      out = await (this.localActivities === 'auto' ? callModelLocally : callModel)({
        model: this.input.model,
        tools: summaryOnly ? [] : this.builtInTools,
        ...(summaryOnly ? {} : this.mcp.modelTools()),
        ...(summaryOnly ? {} : this.own.modelTools()),
        ...(summaryOnly || !this.agents.enabled ? {} : { agentTools: this.agents.modelTools() }),
        ...(summaryOnly || !this.input.clientTools ? {} : { clientTools: this.tools.clientToolSpecs() }),
        step: this.step,
        ...this.conversation.modelInput(),
        window: {
          maxMessages: policy.maxContextMessages,
          ...(policy.contextTokens ? { contextTokens: policy.contextTokens } : {}),
        },
        // A summary turn answers in words: the budget stopped the run before an output was due.
        ...(this.output && !summaryOnly ? { output: this.output.schema } : {}),
      });
    } catch (err) {
      throw modelCallFailure(err, this.step);
    }
    this.conversation.sent(out);
    this.metrics.step();
    this.usage = { ...this.usage, ...addUsage(this.usage, out.usage), modelCalls: this.usage.modelCalls + 1 };
    if (this.policies) this.runLimits.addCost(out, this.defaults);
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
    if (this.policies) this.runLimits.warn();
    // A final answer ends the run: its result tells the parent the rest, not a signal.
    if (toolCalls.length) this.reportToParent();
    return { content: out.content, turn: { step: this.step, calls: toolCalls.map((call) => ({ call })) } };
  }

  /** Calls started or stopped waiting for a person (approvals, questions) or a client's result. */
  private waitsChanged(): void {
    if (this.tools.waitingForApproval()) this.status = 'waiting_for_approval';
    else if (this.tools.waitingForInput()) this.status = 'waiting_for_input';
    else if (this.status === 'waiting_for_approval' || this.status === 'waiting_for_input')
      this.status = 'running';
    this.publishSearchAttributes();
    this.reportToParent();
  }

  /** A sub-agent tells the run that started it what it used so far (nothing for top-level runs). */
  private reportToParent(): void {
    this.reporter.report({
      status: this.status,
      // Its own sub-agents' steps too: the whole subtree counts against the parent's budget.
      steps: this.step + this.agents.steps(),
      usage: this.totalUsage(),
      costUsd: this.runLimits.costUsd(),
    });
  }

  /** The run's usage with what its running sub-agents used so far. */
  private totalUsage(): RunUsage {
    return this.agents.enabled ? addRunUsage(this.usage, this.agents.liveUsage()) : this.usage;
  }

  /**
   * What the run has left for its sub-agents: each budget it has, less what it and its children
   * used, and one step kept for the run to read their answers.
   */
  private budgetLeft(): ReservableBudgets {
    const p = this.input.policy;
    const u = this.totalUsage();
    const left: ReservableBudgets = { steps: p.maxSteps - this.step - this.agents.steps() - 1 };
    if (p.maxTokens !== undefined) left.tokens = p.maxTokens - u.inputTokens - u.outputTokens;
    if (p.maxInputTokens !== undefined) left.inputTokens = p.maxInputTokens - u.inputTokens;
    if (p.maxOutputTokens !== undefined) left.outputTokens = p.maxOutputTokens - u.outputTokens;
    if (p.maxCostUsd !== undefined) left.costUsd = p.maxCostUsd - this.runLimits.costUsd();
    const wall = this.runLimits.wallClockLeft();
    if (wall !== undefined) left.wallClockMs = wall;
    return left;
  }

  /**
   * Delivers a notification the run raises itself the way every notification travels: the `notify`
   * update, to this run and to the user's inbox when configured. Should delivery fail for good, the
   * run keeps the notification in its own list, so nothing is lost.
   */
  private async raise(notification: ValidNotificationInput): Promise<void> {
    const user = this.input.notify?.user;
    const inbox = user ? [inboxWorkflowId(user)] : [];
    if (!this.patches.has(ONE_NOTIFICATION_ROUTE_PATCH)) {
      this.notifications.add(notification);
      if (inbox.length > 0) await deliverNotification({ targets: inbox, notification });
      return;
    }
    // The id is fixed before delivery, so a retried activity updates the item instead of adding one.
    const withId = { ...notification, id: notification.id ?? uuid4() };
    try {
      await deliverNotification({ targets: [workflowInfo().workflowId, ...inbox], notification: withId });
    } catch (err) {
      if (isCancellation(err)) {
        this.notifications.add(withId);
        throw err;
      }
      log.warn('a notification the run raised could not be delivered; kept in the run only', {
        id: withId.id,
        error: err instanceof Error ? err.message : String(err),
      });
      this.notifications.add(withId);
    }
  }

  private finish(answer: string | null, reason: StopReason): AgentResult {
    this.answer = answer;
    this.stopReason = reason;
    this.status = reason === 'final_answer' ? 'completed' : 'stopped';
    this.metrics.finished(this.status, reason);
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
      usage: this.totalUsage(),
      ...(this.policies && this.runLimits.state.costUsd > 0 ? { costUsd: this.runLimits.state.costUsd } : {}),
      ...(this.output
        ? {
            ...(this.outputValue === undefined ? {} : { output: this.outputValue }),
            outputRepairs: this.output.repairs,
          }
        : {}),
      ...(this.agents.enabled && this.agents.steps() ? { agentSteps: this.agents.steps() } : {}),
      // A parent treats a child's answer as untrusted when the child read untrusted content.
      ...(this.input.parent && this.untrusted ? { untrusted: this.untrusted } : {}),
    };
  }

  private emit(e: Omit<AgentEvent, 'seq' | 'at' | 'step'>): void {
    this.events.emit(this.step, e);
  }

  private publishSearchAttributes(): void {
    this.attributes.publish(this.attributeValues());
  }

  private attributeValues(): RunAttributes {
    return {
      status: this.status,
      step: this.step,
      model: modelAttribute(this.input.model, this.defaults?.localModel),
      lastTool: this.events.latest('tool_started')?.tool,
    };
  }

  /**
   * What continue-as-new carries: the newest events and transcript entries (within their carried
   * budgets) and everything else the run knows. It must fit one payload with the input: when it
   * would not, the transcript, then events, then citation snippets shrink further (the whole
   * conversation stays in the content store and history either way).
   */
  private carry(rawInput: AgentInput, turn: CarriedTurn | undefined): CarriedState {
    this.conversation.trimTranscript(SIZE_BUDGETS.carriedTranscriptBytes);
    this.events.trim(SIZE_BUDGETS.carriedEventsBytes);
    const build = (): CarriedState => ({
      ...this.conversation.snapshot(),
      ...(turn ? { turn } : {}),
      step: this.step,
      usage: this.usage,
      events: this.events.snapshot(),
      eventSeq: this.events.seq,
      continuations: this.continuations,
      pendingUserMessages: this.userMessages.pending,
      lastError: this.lastError,
      toolCallSeq: this.toolCallSeq,
      notifications: this.notifications.snapshot(),
      citations: this.citations.state,
      ...(this.policies
        ? {
            budget: this.runLimits.carried(),
            untrusted: this.untrusted,
            ...(this.defaults ? { defaults: this.defaults } : {}),
          }
        : {}),
      ...(this.mcp.carry() ? { mcp: this.mcp.carry() } : {}),
      ...(this.own.carry() ? { own: this.own.carry() } : {}),
      ...(this.output ? { outputRepairs: this.output.repairs } : {}),
      ...(this.agents.carry() ? { agents: this.agents.carry() } : {}),
    });
    const shrinks = [
      () => this.conversation.trimTranscript(SIZE_BUDGETS.carriedTranscriptBytes / 8),
      () => this.events.trim(SIZE_BUDGETS.carriedEventsBytes / 8),
      () => this.citations.shrink(SIZE_BUDGETS.citationsBytes / 4),
      () => this.mcp.forget(),
      () => this.own.forget(),
    ];
    return fitCarriedState(rawInput, build, shrinks);
  }

  private view(): AgentStateView {
    return {
      status: this.status,
      step: this.step,
      maxSteps: this.input.policy.maxSteps,
      usage: this.totalUsage(),
      pendingToolCalls: this.tools.pendingCalls(),
      ...(this.policies
        ? {
            approvals: this.tools.pendingApprovals(),
            ...(this.tools.waitingForInput() ? { questions: this.tools.pendingQuestions() } : {}),
            budgets: this.runLimits.use(),
            costUsd: this.runLimits.costUsd(),
            untrusted: this.untrusted,
          }
        : {}),
      lastError: this.lastError,
      continuations: this.continuations,
      answer: this.answer,
      ...(this.outputValue === undefined ? {} : { output: this.outputValue }),
      stopReason: this.stopReason,
      ...(this.agents.enabled ? { agents: this.agents.view() } : {}),
      ...(this.input.parent ? { parent: this.input.parent } : {}),
    };
  }
}

/** Two usages added up. */
function addRunUsage(a: RunUsage, b: RunUsage): RunUsage {
  return {
    ...addUsage(a, b),
    modelCalls: a.modelCalls + b.modelCalls,
    toolCalls: a.toolCalls + b.toolCalls,
  };
}

/** Whether the run's history is past its budget (or the server suggests continuing as new). */
function historyOverBudget(): boolean {
  const info = workflowInfo();
  return (
    info.continueAsNewSuggested ||
    info.historySize >= SIZE_BUDGETS.continueAsNewHistoryBytes ||
    info.historyLength >= SIZE_BUDGETS.continueAsNewHistoryEvents
  );
}
