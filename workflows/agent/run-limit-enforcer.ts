import { ApplicationFailure, condition, log, sleep } from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common/lib/time';
import type { Duration } from '@temporalio/common';
import type { AgentEvent, ParsedAgentInput, RunDefaults, StopReason } from '../../shared/agent';
import type { CarriedBudget, CarriedState } from './carried-state';
import type { CallModelOutput } from '../../shared/model';
import { NotificationPriority } from '../../shared/notifications/schema';
import type { ValidNotificationInput } from '../../shared/notifications/schema';
import type { RunLimitName, RunLimitUse } from '../../shared/run-limits';
import {
  runLimitsToWarn,
  costOf,
  describeRunLimit,
  exhaustedRunLimit,
  priceFor,
} from '../../shared/run-limits';

/** What a run's budgets read of the run, and how they tell the user. */
export interface RunLimitHost {
  readonly input: ParsedAgentInput;
  /** The step the run is at. */
  step(): number;
  usage(): CarriedState['usage'];
  /** Cost of work the run's own cost does not hold yet (running sub-agents), in US dollars. */
  extraCostUsd?(): number;
  emit(e: Omit<AgentEvent, 'seq' | 'at' | 'step'>): void;
  /** A notification the run raises itself (also to the user's inbox). */
  raise(notification: ValidNotificationInput): Promise<void>;
  setLastError(message: string): void;
}

/**
 * A run's budgets (steps, tokens, cost, wall clock): what is used, which one stops the run, the
 * warnings at 80 % (once each, carried over continue-as-new) and the wall-clock timers. Runs
 * recorded before POLICIES_PATCH know only steps and tokens (`policies` false).
 */
export class RunLimitEnforcer {
  /** Cost, start time and the warnings given: carried over continue-as-new. */
  state: CarriedBudget;
  private wallClockOver = false;
  /** Since when the wall clock stands still (calls wait for answers it does not count), or null. */
  private pausedSince: number | null = null;
  /** Budget notifications go out one after another, in order, and before the run ends. */
  private notificationsSent: Promise<void> = Promise.resolve();

  constructor(
    private readonly host: RunLimitHost,
    private readonly policies: boolean,
    carried: CarriedBudget | undefined,
  ) {
    this.state = carried ?? { startedAt: Date.now(), costUsd: 0, warned: [] };
  }

  /** The budget that ends the run now, or null. */
  stop(): StopReason | null {
    const step = this.host.step();
    const usage = this.host.usage();
    if (!this.policies) {
      if (step >= this.host.input.policy.maxSteps) return 'max_steps';
      const max = this.host.input.policy.maxTokens;
      if (max !== undefined && usage.inputTokens + usage.outputTokens >= max) return 'max_tokens';
      return null;
    }
    return exhaustedRunLimit(this.use());
  }

  /** Every budget the run has, with its use (cost in USD, wall-clock time in ms). */
  use(): RunLimitUse {
    const p = this.host.input.policy;
    const u = this.host.usage();
    const use: RunLimitUse = { max_steps: { used: this.host.step(), max: p.maxSteps } };
    if (p.maxTokens !== undefined)
      use.max_tokens = { used: u.inputTokens + u.outputTokens, max: p.maxTokens };
    if (p.maxInputTokens !== undefined) use.max_input_tokens = { used: u.inputTokens, max: p.maxInputTokens };
    if (p.maxOutputTokens !== undefined)
      use.max_output_tokens = { used: u.outputTokens, max: p.maxOutputTokens };
    if (p.maxCostUsd !== undefined) use.max_cost = { used: this.costUsd(), max: p.maxCostUsd };
    if (p.maxWallClock !== undefined) {
      use.max_wall_clock = this.wallClockOver
        ? { ...this.wallClock(), used: this.wallClock().max }
        : this.wallClock();
    }
    return use;
  }

  /** Cost so far: the run's own and its finished sub-agents', and what running ones spent. */
  costUsd(): number {
    return this.state.costUsd + (this.host.extraCostUsd?.() ?? 0);
  }

  /** Adds cost spent elsewhere (a finished sub-agent's) to the run's. */
  addSpent(costUsd: number): void {
    if (costUsd > 0) this.state = { ...this.state, costUsd: this.state.costUsd + costUsd };
  }

  /** Wall-clock time left, in ms, when the run has that budget. */
  wallClockLeft(): number | undefined {
    if (this.host.input.policy.maxWallClock === undefined) return undefined;
    const { used, max } = this.wallClock();
    return this.wallClockOver ? 0 : Math.max(0, max - used);
  }

  /** The text approval waits end with once the wall clock ran out, else null. */
  stopping(): string | null {
    return this.wallClockOver ? describeRunLimit('max_wall_clock', this.wallClock()) : null;
  }

  private wallClock(): { used: number; max: number } {
    const max = msToNumber((this.host.input.policy.maxWallClock ?? 0) as Duration);
    const paused =
      (this.state.waitedMs ?? 0) + (this.pausedSince === null ? 0 : Date.now() - this.pausedSince);
    return { used: Math.max(0, Date.now() - this.state.startedAt - paused), max };
  }

  /**
   * Stops (true) or restarts (false) the wall clock: time calls spend waiting for answers does not
   * count against `maxWallClock` unless the policy says so (`wallClockCountsQuestions`). Carried
   * over continue-as-new as `waitedMs`.
   */
  pauseWallClock(paused: boolean): void {
    if (paused && this.pausedSince === null) this.pausedSince = Date.now();
    else if (!paused && this.pausedSince !== null) {
      this.state = { ...this.state, waitedMs: (this.state.waitedMs ?? 0) + Date.now() - this.pausedSince };
      this.pausedSince = null;
    }
  }

  /** The budget state to carry: a wait in progress counts as waited up to now. */
  carried(): CarriedBudget {
    if (this.pausedSince === null) return this.state;
    return { ...this.state, waitedMs: (this.state.waitedMs ?? 0) + Date.now() - this.pausedSince };
  }

  /**
   * Durable timers for the wall-clock budget (from the run's first start, so a continued run waits
   * only for what is left): a warning at 80 %, and at 100 % waits end and the loop stops. A timer
   * that fires while the clock stands still (or after it stood still) waits for it to run again and
   * sleeps for what is left; a run whose clock never stood still fires each timer once, as before.
   */
  startWallClock(): void {
    if (this.host.input.policy.maxWallClock === undefined) return;
    const { used, max } = this.wallClock();
    const warnIn = max * 0.8 - used;
    if (!this.state.warned.includes('max_wall_clock') && warnIn > 0) {
      this.atWallClock(0.8, warnIn, () => this.warn(['max_wall_clock']));
    }
    if (used >= max) {
      this.wallClockOver = true;
      return;
    }
    this.atWallClock(1, max - used, () => {
      this.wallClockOver = true;
      this.warn();
    });
  }

  /** Runs `fire` once the wall clock has used `fraction` of the budget, checking after `inMs`. */
  private atWallClock(fraction: number, inMs: number, fire: () => void): void {
    void sleep(inMs).then(async () => {
      // A run whose clock never stood still fires as runs always did (its history must replay as recorded).
      if (this.pausedSince === null && !this.state.waitedMs) return fire();
      if (this.pausedSince !== null) await condition(() => this.pausedSince === null);
      const { used, max } = this.wallClock();
      const left = max * fraction - used;
      // Under a millisecond left is the timer's own rounding: it fired on time.
      if (left >= 1) this.atWallClock(fraction, left, fire);
      else fire();
    });
  }

  /** Warns (once per budget) about every budget at or past 80 %, and about `due` ones (their timer fired). */
  warn(due: RunLimitName[] = []): void {
    const use = this.use();
    const names = new Set([...runLimitsToWarn(use, this.state.warned), ...due.filter((n) => use[n])]);
    for (const name of names) {
      if (this.state.warned.includes(name)) continue;
      this.state = { ...this.state, warned: [...this.state.warned, name] };
      const b = this.use()[name];
      if (!b) continue;
      const text = `Budget warning: ${describeRunLimit(name, b)} used; the run stops at 100 %.`;
      this.host.emit({ kind: 'budget_warning', text });
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

  /** Adds a model call's cost: the run's price for the model, else the one the worker's table gave. */
  addCost(out: CallModelOutput, defaults: RunDefaults | undefined): void {
    const m = this.host.input.model;
    const price = priceFor(
      { provider: m.provider, ...('model' in m && m.model ? { model: m.model } : {}) },
      this.host.input.policy.prices,
      defaults?.prices,
    );
    if (!price) {
      if (this.host.input.policy.maxCostUsd !== undefined) {
        throw ApplicationFailure.create({
          type: 'InvalidAgentInput',
          message: `policy.maxCostUsd is set but no price is known for ${m.provider}${'model' in m && m.model ? `:${m.model}` : ''}: add it to policy.prices or to runs.prices in the worker's config file`,
          nonRetryable: true,
        });
      }
      return;
    }
    this.state = { ...this.state, costUsd: this.state.costUsd + costOf(out.usage, price) };
  }

  /** Raises a budget notification after the ones before it; resolves once it went out (or failed). */
  raiseInOrder(n: ValidNotificationInput): Promise<void> {
    // A budget notice that cannot reach the inbox must not end the run: it stays in the run's own list.
    this.notificationsSent = this.notificationsSent
      .then(() => this.host.raise(n))
      .catch((err: unknown) => {
        const message = `Notification "${n.title}" not delivered to the inbox: ${(err as Error).message}`;
        this.host.setLastError(message);
        log.warn(message);
      });
    return this.notificationsSent;
  }

  /** Resolves once every budget notification raised so far went out. */
  sent(): Promise<void> {
    return this.notificationsSent;
  }
}
