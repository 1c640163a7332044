import {
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  ParentClosePolicy,
  ApplicationFailure,
  getExternalWorkflowHandle,
  isCancellation,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { z } from 'zod';
import { msToNumber } from '@temporalio/common/lib/time';
import type { Duration } from '@temporalio/common';
import type { AgentEvent, AgentInput, AgentResult, AgentStatus, ParsedAgentInput } from '../../shared/agent';
import { DEFAULT_TOOLS, subAgentProgressSignal } from '../../shared/agent';
import type { SubAgentSpec } from '../../shared/agent/input';
import type { ChildAgentView, SubAgentProgress } from '../../shared/agent/views';
import type { RunUsage } from '../../shared/agent/views';
import type { ReservableBudgets } from '../../shared/agent/sub-agents';
import {
  DEFAULT_SUB_AGENT_INPUT,
  SUB_AGENT_LIMITS,
  agentRefName,
  childAnswerText,
  childTask,
  childWorkflowId,
  emptyReservation,
  isAgentRef,
  reserveBudgets,
  subAgentArgsProblem,
} from '../../shared/agent/sub-agents';
import type { ModelToolSpec } from '../../shared/model';
import { AgentModelKey, AgentStatusKey, AgentStepKey, modelAttribute } from '../../shared/search-attributes';
import type { ToolDefinition } from '../../shared/tools/define';
import type { RunLimitName } from '../../shared/run-limits';

/**
 * Marks sub-agents that a token or cost budget stopped and that ended without a summary turn. Only
 * such a stop checks the patch, so every other run issues the same commands as before.
 */
export const CHILD_BUDGET_STOP_PATCH = 'sub-agent-budget-stop-without-summary';

/** The budgets a run finds spent only after the model call that went past them. */
const SPENT_BY_A_CALL: readonly RunLimitName[] = [
  'max_tokens',
  'max_input_tokens',
  'max_output_tokens',
  'max_cost',
];

/**
 * Whether a run that `limit` stopped gets its summary turn. A sub-agent past a token or cost budget
 * has already overspent its reservation by the call that went past it; a summary turn would
 * overspend it, and so its parent, by a second call. It ends with no answer instead (its parent's
 * model is told it stopped), and the parent stays within one model call of its own limit.
 */
export function summarisesBudgetStop(
  input: ParsedAgentInput,
  limit: RunLimitName,
  patched: (id: string) => boolean,
): boolean {
  if (!input.parent || !SPENT_BY_A_CALL.includes(limit)) return true;
  return !patched(CHILD_BUDGET_STOP_PATCH);
}

/** What the sub-agents of a run carry across continue-as-new. */
export interface CarriedSubAgents {
  /** Steps finished children took, counted against the run's step budget. */
  childSteps: number;
  /** The newest finished children (at most SUB_AGENT_LIMITS.childrenKept). */
  children: ChildAgentView[];
}

/** What the sub-agents need of their run. */
export interface SubAgentHost {
  readonly input: ParsedAgentInput;
  /** What the run has left of each budget it has, before what running children reserved. */
  left(): ReservableBudgets;
  /** Adds a finished child's usage and cost to the run's own. */
  fold(usage: RunUsage, costUsd: number): void;
  emit(e: Omit<AgentEvent, 'seq' | 'at' | 'step'>): void;
}

/** What a sub-agent call gives the model: the child's answer or why it failed. */
export interface SubAgentOutcome {
  content: string;
  isError: boolean;
  /** Where untrusted content entered the child's conversation, when it did. */
  untrusted?: string;
}

/** Least time between two progress signals of a child to its parent (workflow time). */
const PROGRESS_INTERVAL_MS = 2_000;
/** Progress signals one child execution sends at most; status changes and its end still tell. */
const PROGRESS_SIGNALS = 500;

/**
 * The sub-agents a run offers (its input's `agents`): each one a tool whose call starts a child
 * agent workflow with budgets reserved from what the run has left, the same user's inbox, and the
 * run's depth plus one. Keeps what each child used (live, from its progress signals) for the
 * run's budgets and `state` query.
 */
export class SubAgents {
  private readonly specs: Map<string, SubAgentSpec>;
  /** The `agent:<name>` references of the run's tools (sub-agents of the worker's config). */
  private readonly refs: string[];
  private readonly definitions = new Map<string, ToolDefinition>();
  private readonly running = new Map<string, ChildAgentView>();
  /** The newest progress signal read of each running child. */
  private readonly lastProgress = new Map<string, { at: number; n: number }>();
  private finished: ChildAgentView[];
  private childSteps: number;
  /** Agent calls of the current turn that have not started a child yet (for fair shares). */
  private toStart = 0;

  constructor(
    private readonly host: SubAgentHost,
    carried: CarriedSubAgents | undefined,
  ) {
    this.specs = new Map(Object.entries(host.input.agents ?? {}));
    this.refs = host.input.tools.filter(isAgentRef).map(agentRefName);
    this.finished = carried?.children ?? [];
    this.childSteps = carried?.childSteps ?? 0;
  }

  /** Whether the run names sub-agents of the worker's config (`agent:<name>` in its tools). */
  get needsWorkerAgents(): boolean {
    return this.refs.length > 0;
  }

  /**
   * Adds the worker's sub-agents the run names (`agent:<name>`), from the run defaults the worker
   * gave; a name the worker does not know fails the run, saying which it knows.
   */
  useWorkerAgents(known: Record<string, SubAgentSpec> | undefined): void {
    const missing = this.refs.filter((name) => !known?.[name]);
    if (missing.length) {
      const names = Object.keys(known ?? {});
      throw ApplicationFailure.create({
        type: 'InvalidAgentInput',
        message: `Invalid run: the worker's config has no sub-agent ${missing.map((m) => `"${m}"`).join(', ')}; it has ${names.length ? names.join(', ') : 'none (add them under "agents" in its config file)'}`,
        nonRetryable: true,
      });
    }
    for (const name of this.refs) this.specs.set(name, known?.[name] as SubAgentSpec);
  }

  /** Whether the run offers sub-agents. */
  get enabled(): boolean {
    return this.specs.size > 0;
  }

  /** Whether the model calls a sub-agent by this name. */
  has(name: string): boolean {
    return this.specs.has(name);
  }

  /** The sub-agents' names, for error messages. */
  names(): string[] {
    return [...this.specs.keys()];
  }

  /** The sub-agents as the model sees them: name, description, input schema. */
  modelTools(): ModelToolSpec[] {
    return [...this.specs].map(([name, spec]) => ({
      name,
      description: `${spec.description} (a sub-agent: it works on its own and answers${spec.output ? ' with JSON matching its output schema' : ''})`,
      parameters: spec.input ?? DEFAULT_SUB_AGENT_INPUT,
    }));
  }

  /** The sub-agent as the tool runner handles every tool; its arguments are checked against its input schema. */
  definition(name: string): ToolDefinition | undefined {
    const spec = this.specs.get(name);
    if (!spec) return undefined;
    let def = this.definitions.get(name);
    if (!def) {
      def = {
        name,
        description: spec.description,
        description_zh: spec.description,
        category: 'agent',
        sign: 'a',
        inputs: z.unknown(),
        output: 'the sub-agent’s answer',
        activity: { startToCloseTimeout: '1 day' },
        checkArgs: (args) => {
          const problem = subAgentArgsProblem(name, spec.input, args);
          return problem ? { ok: false, error: problem } : { ok: true, value: args };
        },
      };
      this.definitions.set(name, def);
    }
    return def;
  }

  /** Notes how many agent calls a turn is about to run, so they share what is left equally. */
  expect(calls: number): void {
    this.toStart = calls;
  }

  /** Steps every child took (finished and running), counted against the run's step budget. */
  steps(): number {
    let steps = this.childSteps;
    for (const c of this.running.values()) steps += c.steps;
    return steps;
  }

  /** What running children used so far (finished ones are in the run's own usage). */
  liveUsage(): RunUsage {
    const u: RunUsage = { inputTokens: 0, outputTokens: 0, modelCalls: 0, toolCalls: 0 };
    for (const c of this.running.values()) {
      u.inputTokens += c.usage.inputTokens;
      u.outputTokens += c.usage.outputTokens;
      u.modelCalls += c.usage.modelCalls;
      u.toolCalls += c.usage.toolCalls;
    }
    return u;
  }

  /** What running children spent so far, in US dollars. */
  liveCostUsd(): number {
    let cost = 0;
    for (const c of this.running.values()) cost += c.costUsd;
    return cost;
  }

  /** Every child, running first, for the `state` query. */
  view(): ChildAgentView[] {
    return [...[...this.running.values()].map((c) => ({ ...c })), ...this.finished];
  }

  /** A child's progress signal: what it used so far and its status. */
  progress(p: SubAgentProgress): void {
    const child = this.running.get(p.toolCallId);
    if (!child) return;
    // Signals sent in one workflow task can arrive in any order: the newest (time, then count) wins.
    const last = this.lastProgress.get(p.toolCallId);
    if (last && (p.at < last.at || (p.at === last.at && p.n <= last.n))) return;
    this.lastProgress.set(p.toolCallId, { at: p.at, n: p.n });
    child.steps = p.steps;
    child.usage = p.usage;
    child.costUsd = p.costUsd;
    child.status = p.status;
  }

  /**
   * Runs one sub-agent call as a child workflow and returns what the model reads. A limit that
   * stops the call (depth, children in flight, no budget left) comes back as a tool error.
   */
  async run(name: string, toolCallId: string, args: unknown): Promise<SubAgentOutcome> {
    const spec = this.specs.get(name) as SubAgentSpec;
    this.toStart = Math.max(0, this.toStart - 1);
    const policy = this.host.input.policy;
    const depth = (this.host.input.parent?.depth ?? 0) + 1;
    if (depth > policy.maxAgentDepth) {
      return error(
        `Sub-agent ${name} was not started: it would run at depth ${depth}, and policy.maxAgentDepth is ${policy.maxAgentDepth}. Do this part yourself.`,
      );
    }
    if (this.running.size >= policy.maxChildAgents) {
      return error(
        `Sub-agent ${name} was not started: ${this.running.size} sub-agents are running, and policy.maxChildAgents is ${policy.maxChildAgents}. Call it again once one has answered.`,
      );
    }
    const reserved = reserveBudgets(this.available(), asked(spec), this.toStart + 1);
    const empty = emptyReservation(reserved);
    if (empty) {
      return error(
        `Sub-agent ${name} was not started: the run has ${empty} left for it. Finish with what you have.`,
      );
    }
    const parentId = workflowInfo().workflowId;
    const workflowId = childWorkflowId(parentId, toolCallId);
    const child: ChildAgentView = {
      toolCallId,
      agent: name,
      workflowId,
      status: 'running',
      steps: 0,
      usage: { inputTokens: 0, outputTokens: 0, modelCalls: 0, toolCalls: 0 },
      costUsd: 0,
      reserved,
    };
    this.running.set(toolCallId, child);
    this.host.emit({ kind: 'agent_started', toolCallId, tool: name, text: workflowId });
    try {
      const input = this.childInput(name, spec, toolCallId, args, reserved, depth);
      const handle = await startChild<(input: AgentInput) => Promise<AgentResult>>('agentWorkflow', {
        workflowId,
        args: [input],
        // What a run started by a client has: `approvals --user` finds it by `notifyUser`.
        memo: {
          task: input.task.slice(0, 200),
          parent: parentId,
          ...(input.notify?.user ? { notifyUser: input.notify.user } : {}),
        },
        // The agent search attributes where the namespace has them (the parent then has them too),
        // so the child's status and step are kept current and `runs` lists it like any run.
        ...(workflowInfo().typedSearchAttributes.get(AgentStatusKey) !== undefined
          ? {
              typedSearchAttributes: [
                { key: AgentStatusKey, value: 'running' },
                { key: AgentStepKey, value: 0 },
                { key: AgentModelKey, value: modelAttribute(input.model) },
              ],
            }
          : {}),
        // Cancelling the run cancels its children and waits for them; a run that closes another
        // way (terminated, timed out) asks them to cancel.
        cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      });
      const result = await handle.result();
      this.end(child, result.stopReason === 'final_answer' ? 'completed' : 'stopped', result);
      return {
        content: childAnswerText(result),
        isError: false,
        ...(result.untrusted ? { untrusted: result.untrusted } : {}),
      };
    } catch (err) {
      if (isCancellation(err)) {
        this.end(child, 'cancelled');
        throw err;
      }
      const cause = err instanceof ChildWorkflowFailure && err.cause ? err.cause : err;
      const type = cause instanceof ApplicationFailure ? (cause.type ?? '') : '';
      const message = cause instanceof Error ? cause.message : String(cause);
      child.error = `${type ? `${type}: ` : ''}${message}`.slice(0, 2_000);
      this.end(child, 'failed');
      return error(`Sub-agent ${name} failed: ${child.error}`);
    }
  }

  /** What continue-as-new carries. */
  carry(): CarriedSubAgents | undefined {
    if (!this.enabled && this.childSteps === 0) return undefined;
    return { childSteps: this.childSteps, children: this.finished };
  }

  /** What the run has left for a new child: what it has left less what running children reserved. */
  private available(): ReservableBudgets {
    const left = { ...this.host.left() };
    for (const c of this.running.values()) {
      const r = c.reserved;
      // Running children's use is in `left` already; what they may still use is reserved too.
      left.steps -= r.steps - c.steps;
      const tokens = c.usage.inputTokens + c.usage.outputTokens;
      if (left.tokens !== undefined && r.tokens !== undefined) left.tokens -= r.tokens - tokens;
      if (left.inputTokens !== undefined && r.inputTokens !== undefined)
        left.inputTokens -= r.inputTokens - c.usage.inputTokens;
      if (left.outputTokens !== undefined && r.outputTokens !== undefined)
        left.outputTokens -= r.outputTokens - c.usage.outputTokens;
      if (left.costUsd !== undefined && r.costUsd !== undefined) left.costUsd -= r.costUsd - c.costUsd;
    }
    return left;
  }

  private childInput(
    name: string,
    spec: SubAgentSpec,
    toolCallId: string,
    args: unknown,
    r: ReservableBudgets,
    depth: number,
  ): AgentInput {
    const parent = this.host.input;
    const own = spec.policy ?? {};
    const prices = { ...(parent.policy.prices ?? {}), ...((own.prices as object | undefined) ?? {}) };
    // Tool by tool, as prices: the child's own entry for a tool replaces the parent's.
    const toolTimeouts = {
      ...(parent.policy.toolTimeouts ?? {}),
      ...((own.toolTimeouts as object | undefined) ?? {}),
    };
    const ownDepth = typeof own.maxAgentDepth === 'number' ? own.maxAgentDepth : parent.policy.maxAgentDepth;
    return {
      task: childTask(args, spec.input),
      ...(spec.system !== undefined ? { system: spec.system } : {}),
      model: spec.model ?? parent.model,
      tools: spec.tools ?? [...DEFAULT_TOOLS],
      ...(spec.output ? { output: spec.output } : {}),
      ...(spec.agents ? { agents: spec.agents } : {}),
      policy: {
        ...own,
        maxSteps: r.steps,
        ...(r.tokens !== undefined ? { maxTokens: r.tokens } : {}),
        ...(r.inputTokens !== undefined ? { maxInputTokens: r.inputTokens } : {}),
        ...(r.outputTokens !== undefined ? { maxOutputTokens: r.outputTokens } : {}),
        ...(r.costUsd !== undefined ? { maxCostUsd: r.costUsd } : {}),
        ...(r.wallClockMs !== undefined ? { maxWallClock: r.wallClockMs } : {}),
        ...(Object.keys(prices).length ? { prices } : {}),
        ...(Object.keys(toolTimeouts).length ? { toolTimeouts } : {}),
        maxAgentDepth: Math.min(ownDepth, parent.policy.maxAgentDepth),
      },
      ...(parent.notify ? { notify: parent.notify } : {}),
      parent: { workflowId: workflowInfo().workflowId, toolCallId, agent: name, depth },
    };
  }

  private end(child: ChildAgentView, status: AgentStatus, result?: AgentResult): void {
    this.running.delete(child.toolCallId);
    this.lastProgress.delete(child.toolCallId);
    if (result) {
      child.steps = result.steps + (result.agentSteps ?? 0);
      child.usage = result.usage;
      child.costUsd = result.costUsd ?? 0;
    }
    child.status = status;
    this.childSteps += child.steps;
    this.host.fold(child.usage, child.costUsd);
    this.finished = [child, ...this.finished].slice(0, SUB_AGENT_LIMITS.childrenKept);
    this.host.emit({
      kind: 'agent_finished',
      toolCallId: child.toolCallId,
      tool: child.agent,
      text: `${child.agent} ${status} after ${child.steps} step${child.steps === 1 ? '' : 's'}${child.costUsd ? `, $${child.costUsd.toFixed(4)}` : ''}${child.error ? `: ${child.error}` : ''}`,
      isError: status === 'failed',
    });
  }
}

/** A child run's link to its parent: tells the parent what it used, at most every few seconds. */
export class ParentReporter {
  private lastAt = -Infinity;
  private sent = 0;
  private lastStatus: AgentStatus | undefined;

  constructor(private readonly parent: ParsedAgentInput['parent']) {}

  /** Sends progress when the status changed or enough time passed; never fails the run. */
  report(p: Omit<SubAgentProgress, 'toolCallId' | 'at' | 'n'>): void {
    const parent = this.parent;
    if (!parent) return;
    const now = Date.now();
    const changed = p.status !== this.lastStatus;
    if (!changed && (now - this.lastAt < PROGRESS_INTERVAL_MS || this.sent >= PROGRESS_SIGNALS)) return;
    this.lastAt = now;
    this.lastStatus = p.status;
    this.sent += 1;
    // The parent may have ended (it then no longer needs to know): the signal's failure is dropped.
    void getExternalWorkflowHandle(parent.workflowId)
      .signal(subAgentProgressSignal, { ...p, toolCallId: parent.toolCallId, at: now, n: this.sent })
      .catch(() => undefined);
  }
}

function error(content: string): SubAgentOutcome {
  return { content, isError: true };
}

/** The budgets a sub-agent's own policy asks for. */
function asked(spec: SubAgentSpec): Partial<ReservableBudgets> {
  const p = spec.policy ?? {};
  const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
  const out: Partial<ReservableBudgets> = {};
  const steps = num(p.maxSteps);
  if (steps !== undefined) out.steps = steps;
  const tokens = num(p.maxTokens);
  if (tokens !== undefined) out.tokens = tokens;
  const inputTokens = num(p.maxInputTokens);
  if (inputTokens !== undefined) out.inputTokens = inputTokens;
  const outputTokens = num(p.maxOutputTokens);
  if (outputTokens !== undefined) out.outputTokens = outputTokens;
  const cost = num(p.maxCostUsd);
  if (cost !== undefined) out.costUsd = cost;
  if (p.maxWallClock !== undefined) out.wallClockMs = msToNumber(p.maxWallClock as Duration);
  return out;
}
