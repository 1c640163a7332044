import { metricMeter } from '@temporalio/workflow';
import type { StopReason } from '../shared/agent';
import type { ApprovalResolution, FinishedStatus } from '../shared/metrics';
import { METRIC, OTHER_LABEL } from '../shared/metrics';
import type { RunLimitName } from '../shared/run-limits';
import { RUN_LIMIT_LABELS } from '../shared/run-limits';
import type { ToolDefinition } from '../shared/tools/define';
import { findTool } from '../shared/tools/registry';

/**
 * A tool as workflow metrics name it: a built-in tool by its name, every MCP tool as `mcp` (their
 * names come from outside and workflow code keeps no per-worker count to bound them with).
 */
export function toolLabel(def: Pick<ToolDefinition, 'name' | 'category' | 'own'>): string {
  if (def.category === 'mcp') return 'mcp';
  // An app's own tools are a set it declares, as bounded as the built-in ones.
  return findTool(def.name) || def.own ? def.name : OTHER_LABEL;
}

function isRunLimit(reason: StopReason): reason is RunLimitName {
  return Object.prototype.hasOwnProperty.call(RUN_LIMIT_LABELS, reason);
}

/**
 * What a run records about itself: starts, steps, how it ended, budget stops, continue-as-new and
 * approval waits. Through the workflow's `metricMeter`, which records nothing while a run is
 * replayed and adds no command to its history. Labels are closed sets (plus the tool label of
 * {@link toolLabel}); the SDK adds `namespace`, `taskQueue` and `workflowType`. Created per run:
 * workflow code keeps no module-level state.
 */
export class RunMetrics {
  private readonly meter = metricMeter;
  private readonly counters = {
    started: this.meter.createCounter(
      METRIC.runsStarted,
      undefined,
      'Agent runs started (not continuations)',
    ),
    finished: this.meter.createCounter(METRIC.runsFinished, undefined, 'Agent runs that ended, by status'),
    steps: this.meter.createCounter(METRIC.steps, undefined, 'Model turns of agent runs'),
    budgetStops: this.meter.createCounter(METRIC.budgetStops, undefined, 'Runs a budget stopped, by budget'),
    continued: this.meter.createCounter(METRIC.continueAsNew, undefined, 'Agent runs that continued as new'),
    requested: this.meter.createCounter(
      METRIC.approvalsRequested,
      undefined,
      'Tool calls that started waiting for approval',
    ),
    resolved: this.meter.createCounter(
      METRIC.approvalsResolved,
      undefined,
      'Approval waits that ended, by outcome',
    ),
  };
  private readonly approvalWait = this.meter.createHistogram(
    METRIC.approvalWait,
    'float',
    's',
    'How long tool calls waited for approval, by outcome',
  );

  /** A run started (its first execution; a continuation is not a new run). */
  started(): void {
    this.counters.started.add(1);
  }

  /** The model answered one turn. */
  step(): void {
    this.counters.steps.add(1);
  }

  /** The run continues as new. */
  continuedAsNew(): void {
    this.counters.continued.add(1);
  }

  /** The run ended; a stop for a budget is also counted by budget. */
  finished(status: FinishedStatus, reason?: StopReason): void {
    this.counters.finished.add(1, { status });
    if (reason && isRunLimit(reason)) this.counters.budgetStops.add(1, { limit: reason });
  }

  /** A tool call started waiting for approval. */
  approvalRequested(def: Pick<ToolDefinition, 'name' | 'category'>): void {
    this.counters.requested.add(1, { tool: toolLabel(def) });
  }

  /** A tool call's approval wait ended after `waitedMs` (0 or more). */
  approvalResolved(
    def: Pick<ToolDefinition, 'name' | 'category'>,
    outcome: ApprovalResolution,
    waitedMs: number,
  ): void {
    const tags = { tool: toolLabel(def), outcome };
    this.counters.resolved.add(1, tags);
    this.approvalWait.record(Math.max(0, waitedMs) / 1000, tags);
  }
}

/**
 * What an inbox records on each change: how many notifications it holds and how many are unread
 * (histograms: many inboxes share one worker, so a gauge would show whichever changed last).
 */
export class InboxMetrics {
  private readonly held = metricMeter.createHistogram(
    METRIC.inboxNotifications,
    'int',
    undefined,
    'Notifications an inbox holds, after each change',
  );
  private readonly unread = metricMeter.createHistogram(
    METRIC.inboxUnread,
    'int',
    undefined,
    'Unread notifications of an inbox, after each change',
  );

  /** The inbox changed: it now holds `held` notifications, `unread` of them unread. */
  changed(held: number, unread: number): void {
    this.held.record(held);
    this.unread.record(unread);
  }
}
