import type { MetricCounter, MetricGauge, MetricHistogram, MetricMeter } from '@temporalio/common';
import { DEFAULT_CONTEXT_TOKENS } from '../../shared/model';
import { METRIC, OTHER_LABEL } from '../../shared/metrics';
import type { ModelPrice } from '../../shared/run-limits';
import { costOf } from '../../shared/run-limits';
import { TOOL_NAMES } from '../../shared/tools/names';
import type { AgentCall, CallEnd } from './agent-calls';

/**
 * Distinct values each label keeps per worker process; names past the bound count as
 * {@link OTHER_LABEL}. Model names come from run inputs and MCP tool names from MCP servers, so
 * neither is trusted to stay few. Built-in tool names are always kept.
 */
export const LABEL_BOUNDS = { model: 20, tool: 50, errorType: 30 } as const;

/** What a label value may look like: a name, never free text. */
const LABEL_VALUE = /^[A-Za-z0-9_.:/@+-]{1,200}$/;

const PROVIDERS: ReadonlySet<string> = new Set(Object.keys(DEFAULT_CONTEXT_TOKENS));

/**
 * One label's values, bounded: the first `max` distinct names seen (and the `always` ones) are
 * kept, anything after them, or anything that is not name-shaped, becomes {@link OTHER_LABEL}.
 */
export class BoundedLabel {
  private readonly seen = new Set<string>();

  constructor(
    private readonly max: number,
    private readonly always: ReadonlySet<string> = new Set(),
  ) {}

  /** The value to record for `name`. */
  value(name: string | undefined): string {
    if (name === undefined || name === '') return 'unknown';
    if (this.always.has(name) || this.seen.has(name)) return name;
    if (!LABEL_VALUE.test(name) || this.seen.size >= this.max) return OTHER_LABEL;
    this.seen.add(name);
    return name;
  }
}

/**
 * The worker side of the agent's metrics: every model and tool call attempt (count, duration,
 * outcome; tokens and cost for model calls), content store use, and the runs waiting for approval.
 * Recorded on Temporal's runtime meter, so they are served with the SDK's metrics; the meter is
 * given tagged with the worker's `namespace` and `taskQueue`, as the SDK tags workflow metrics.
 */
export class AgentMetrics {
  private readonly models = new BoundedLabel(LABEL_BOUNDS.model);
  private readonly tools = new BoundedLabel(LABEL_BOUNDS.tool, new Set(TOOL_NAMES));
  private readonly errorTypes = new BoundedLabel(LABEL_BOUNDS.errorType);
  private readonly modelCalls: MetricCounter;
  private readonly modelCallDuration: MetricHistogram;
  private readonly modelTokens: MetricCounter;
  private readonly modelCost: MetricHistogram;
  private readonly toolCalls: MetricCounter;
  private readonly toolCallDuration: MetricHistogram;
  private readonly toolErrors: MetricCounter;
  private readonly storeOperations: MetricCounter;
  private readonly storePutBytes: MetricCounter;
  private readonly storeBytes: MetricGauge;
  private readonly storeRemovedBytes: MetricCounter;
  private readonly waiting: MetricGauge;
  private readonly oldestWait: MetricGauge;

  constructor(meter: MetricMeter) {
    this.modelCalls = meter.createCounter(METRIC.modelCalls, undefined, 'Model call attempts, by outcome');
    this.modelCallDuration = meter.createHistogram(
      METRIC.modelCallDuration,
      'float',
      's',
      'Duration of model call attempts',
    );
    this.modelTokens = meter.createCounter(
      METRIC.modelTokens,
      undefined,
      'Tokens of model calls, by direction',
    );
    this.modelCost = meter.createHistogram(
      METRIC.modelCost,
      'float',
      'USD',
      "Cost of model calls at the worker's prices (runs.prices of its config file)",
    );
    this.toolCalls = meter.createCounter(METRIC.toolCalls, undefined, 'Tool call attempts, by outcome');
    this.toolCallDuration = meter.createHistogram(
      METRIC.toolCallDuration,
      'float',
      's',
      'Duration of tool call attempts',
    );
    this.toolErrors = meter.createCounter(
      METRIC.toolErrors,
      undefined,
      'Tool call attempts that failed, by error type',
    );
    this.storeOperations = meter.createCounter(
      METRIC.contentStoreOperations,
      undefined,
      'Content store reads and writes, by outcome',
    );
    this.storePutBytes = meter.createCounter(
      METRIC.contentStorePutBytes,
      'By',
      'JSON bytes handed to the content store (a value already stored is counted again)',
    );
    this.storeBytes = meter.createGauge(
      METRIC.contentStoreBytes,
      'int',
      'By',
      'Bytes the content store holds, as the last garbage collection on this worker left it',
    );
    this.storeRemovedBytes = meter.createCounter(
      METRIC.contentStoreRemovedBytes,
      'By',
      'Bytes garbage collections on this worker removed from the content store',
    );
    this.waiting = meter.createGauge(
      METRIC.runsWaitingForApproval,
      'int',
      undefined,
      "Running agent runs of the worker's task queue waiting for approval (from Temporal's visibility)",
    );
    this.oldestWait = meter.createGauge(
      METRIC.oldestApprovalWait,
      'float',
      's',
      "How long the oldest call of the worker's task queue has waited for approval (0 when none waits)",
    );
  }

  /** A model or tool call attempt ended after `seconds`; `price` prices a model call's tokens. */
  callEnded(call: AgentCall, end: CallEnd, seconds: number, price?: ModelPrice): void {
    if (call.operation === 'chat') {
      const tags = {
        provider: call.provider && PROVIDERS.has(call.provider) ? call.provider : OTHER_LABEL,
        model: this.models.value(call.name),
      };
      this.modelCalls.add(1, { ...tags, outcome: end.outcome });
      this.modelCallDuration.record(seconds, { ...tags, outcome: end.outcome });
      if (end.inputTokens) this.modelTokens.add(end.inputTokens, { ...tags, direction: 'input' });
      if (end.outputTokens) this.modelTokens.add(end.outputTokens, { ...tags, direction: 'output' });
      if (price && end.outcome === 'ok') {
        const usage = { inputTokens: end.inputTokens ?? 0, outputTokens: end.outputTokens ?? 0 };
        this.modelCost.record(costOf(usage, price), tags);
      }
      return;
    }
    const tags = { tool: this.tools.value(call.name), category: call.category ?? 'unknown' };
    this.toolCalls.add(1, { ...tags, outcome: end.outcome });
    this.toolCallDuration.record(seconds, { ...tags, outcome: end.outcome });
    if (end.outcome !== 'ok' && end.outcome !== 'cancelled') {
      this.toolErrors.add(1, { ...tags, error_type: this.errorTypes.value(end.errorType) });
    }
  }

  /** A content store read or write ended; a write counts the JSON bytes it was given. */
  contentStore(operation: 'put' | 'get', outcome: 'ok' | 'error', bytes?: number): void {
    this.storeOperations.add(1, { operation, outcome });
    if (bytes) this.storePutBytes.add(bytes);
  }

  /** A garbage collection finished: what it removed and what the store holds now (a dry run removes nothing). */
  contentCollected(removedBytes: number, storeBytes: number): void {
    if (removedBytes > 0) this.storeRemovedBytes.add(removedBytes);
    this.storeBytes.set(storeBytes);
  }

  /** How many runs of the worker's task queue wait for approval now. */
  runsWaitingForApproval(count: number): void {
    this.waiting.set(count);
  }

  /** How long the oldest waiting call has waited, in seconds (0 when none waits). */
  oldestApprovalWait(seconds: number): void {
    this.oldestWait.set(seconds);
  }
}
