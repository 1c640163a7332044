import * as otel from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import type { ExportResult } from '@opentelemetry/core';
import { ExportResultCode, hrTimeToMilliseconds, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Context } from '@temporalio/activity';
import type { OpenTelemetryWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type {
  ActivityExecuteInput,
  ActivityInboundCallsInterceptor,
  ActivityInterceptorsFactory,
  InjectedSinks,
  Next,
} from '@temporalio/worker';
import type { CallModelInput, CallModelOutput } from '../shared/model';
import type { ToolActivityInput, ToolResult } from '../shared/tools/define';
import { findTool } from '../shared/tools/registry';
import type { TracingConfig, WorkerConfig } from './config';

/** The tracer name on every span this project creates. */
export const TRACER_NAME = 'durable-agent';

/** Span attribute keys. Model and tool spans follow OpenTelemetry's GenAI conventions where they exist. */
export const SPAN_ATTR = {
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  finishReasons: 'gen_ai.response.finish_reasons',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolCategory: 'durable_agent.tool.category',
  toolCalls: 'durable_agent.model.tool_calls',
  step: 'durable_agent.step',
  outcome: 'durable_agent.outcome',
  errorType: 'error.type',
  workflowId: 'temporal.workflow.id',
  runId: 'temporal.run.id',
  attempt: 'temporal.activity.attempt',
} as const;

/**
 * How an attempt ended: `ok`; `tool_error` (the tool answered with an error the model reads);
 * `failed` (the attempt threw: retried or failed per the activity's policy); `cancelled`.
 */
export type SpanOutcome = 'ok' | 'tool_error' | 'failed' | 'cancelled';

/**
 * Adds one span per model call (`chat <model>`) and per tool call (`execute_tool <tool>`) inside
 * the activity attempt, with step, token usage and outcome. Arguments, prompts and results are
 * never recorded: they may hold user data or secrets.
 */
export class AgentSpanInterceptor implements ActivityInboundCallsInterceptor {
  constructor(private readonly tracer: otel.Tracer) {}

  async execute(
    input: ActivityExecuteInput,
    next: Next<ActivityInboundCallsInterceptor, 'execute'>,
  ): Promise<unknown> {
    const info = Context.current().info;
    const type = info.activityType;
    const common: otel.Attributes = {
      [SPAN_ATTR.workflowId]: info.workflowExecution?.workflowId,
      [SPAN_ATTR.runId]: info.workflowExecution?.runId,
      [SPAN_ATTR.attempt]: info.attempt,
    };
    if (type === 'callModel') {
      const arg = input.args[0] as CallModelInput | undefined;
      const model = arg?.model;
      const modelName = !model ? 'unknown' : 'model' in model ? model.model : (model.script ?? 'inline');
      return this.span(`chat ${modelName}`, next, input, {
        ...common,
        [SPAN_ATTR.operation]: 'chat',
        [SPAN_ATTR.provider]: model?.provider,
        [SPAN_ATTR.requestModel]: modelName,
        [SPAN_ATTR.step]: arg?.step,
      });
    }
    const tool = findTool(type);
    if (!tool) return next(input);
    const arg = input.args[0] as ToolActivityInput<unknown> | undefined;
    return this.span(`execute_tool ${type}`, next, input, {
      ...common,
      [SPAN_ATTR.operation]: 'execute_tool',
      [SPAN_ATTR.toolName]: type,
      [SPAN_ATTR.toolCategory]: tool.category,
      [SPAN_ATTR.toolCallId]: arg?.toolCallId,
      [SPAN_ATTR.step]: arg?.step,
    });
  }

  private span(
    name: string,
    next: Next<ActivityInboundCallsInterceptor, 'execute'>,
    input: ActivityExecuteInput,
    attributes: otel.Attributes,
  ): Promise<unknown> {
    return this.tracer.startActiveSpan(name, { kind: otel.SpanKind.INTERNAL, attributes }, async (span) => {
      try {
        const result = await next(input);
        if (attributes[SPAN_ATTR.operation] === 'chat') {
          const out = result as CallModelOutput;
          span.setAttributes({
            [SPAN_ATTR.inputTokens]: out.usage.inputTokens,
            [SPAN_ATTR.outputTokens]: out.usage.outputTokens,
            [SPAN_ATTR.toolCalls]: out.toolCalls.length,
            ...(out.finishReason ? { [SPAN_ATTR.finishReasons]: [out.finishReason] } : {}),
          });
          span.setAttribute(SPAN_ATTR.outcome, 'ok' satisfies SpanOutcome);
        } else {
          const isError = (result as ToolResult | undefined)?.isError === true;
          span.setAttribute(SPAN_ATTR.outcome, (isError ? 'tool_error' : 'ok') satisfies SpanOutcome);
          if (isError) span.setAttribute(SPAN_ATTR.errorType, 'tool_error');
        }
        return result;
      } catch (err) {
        const cancelled = Context.current().cancellationSignal.aborted;
        span.setAttributes({
          [SPAN_ATTR.outcome]: (cancelled ? 'cancelled' : 'failed') satisfies SpanOutcome,
          [SPAN_ATTR.errorType]: (err as Error)?.name || 'Error',
        });
        span.setStatus({ code: otel.SpanStatusCode.ERROR, message: (err as Error)?.message });
        throw err;
      } finally {
        span.end();
      }
    });
  }
}

/** What a worker adds when tracing is on. */
export interface WorkerTracing {
  activityInterceptors: ActivityInterceptorsFactory[];
  workflowModules: string[];
  sinks: InjectedSinks<{ exporter: OpenTelemetryWorkflowExporter }>;
  /** Flushes and stops the exporter. */
  shutdown(): Promise<void>;
}

let contextManagerInstalled = false;

/**
 * Builds the worker's tracing from its configuration, or from a span processor (tests, embedders).
 * Returns undefined when tracing is off. Activity spans nest under Temporal's `RunActivity` span;
 * workflow spans (`RunWorkflow`, `StartActivity`, …) go out through a sink, never during replay.
 */
export function createWorkerTracing(
  config: Pick<WorkerConfig, 'tracing'>,
  spanProcessor?: SpanProcessor,
): WorkerTracing | undefined {
  if (!spanProcessor && config.tracing.exporter === 'off') return undefined;
  if (!contextManagerInstalled) {
    // W3C trace context carries the workflow's span to its activities through Temporal headers;
    // the context manager lets the agent's span see Temporal's activity span as its parent.
    otel.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    // Export problems (collector down, bad endpoint) are reported, not silent; runs are unaffected.
    otel.diag.setLogger(
      {
        error: (msg, ...args) => console.error(`tracing: ${msg}`, ...args.map(describe)),
        warn: (msg, ...args) => console.error(`tracing: ${msg}`, ...args.map(describe)),
        info: () => undefined,
        debug: () => undefined,
        verbose: () => undefined,
      },
      otel.DiagLogLevel.WARN,
    );
    otel.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    contextManagerInstalled = true;
  }
  const resource = new Resource({ 'service.name': config.tracing.serviceName });
  const processor = spanProcessor ?? new BatchSpanProcessor(exporterFor(config.tracing));
  const provider = new BasicTracerProvider({ resource });
  provider.addSpanProcessor(processor);
  const tracer = provider.getTracer(TRACER_NAME);
  return {
    activityInterceptors: [
      (ctx) => ({
        inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }),
        outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
      }),
      () => ({ inbound: new AgentSpanInterceptor(tracer) }),
    ],
    workflowModules: [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')],
    sinks: { exporter: makeWorkflowExporter(processor, resource) },
    async shutdown() {
      // Spans that cannot be flushed are reported; they never fail the worker's shutdown.
      await provider.shutdown().catch((err: unknown) => {
        console.error(`tracing: spans not exported at shutdown: ${describe(err)}`);
      });
    },
  };
}

function describe(arg: unknown): string {
  if (arg instanceof Error) return arg.message;
  return typeof arg === 'string' ? arg : JSON.stringify(arg);
}

/**
 * The `console` exporter: one JSON line per span on stderr, so stdout stays JSON log lines and
 * either stream can be piped to a tool.
 */
export class JsonLinesSpanExporter implements SpanExporter {
  constructor(private readonly write: (line: string) => void = (l) => process.stderr.write(l)) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    for (const s of spans) {
      const ctx = s.spanContext();
      const line = {
        span: s.name,
        traceId: ctx.traceId,
        spanId: ctx.spanId,
        parentSpanId: s.parentSpanId,
        start: new Date(hrTimeToMilliseconds(s.startTime)).toISOString(),
        durationMs: Math.round(hrTimeToMilliseconds(s.duration) * 100) / 100,
        status: s.status.code === otel.SpanStatusCode.ERROR ? 'error' : 'ok',
        attributes: s.attributes,
      };
      this.write(`${JSON.stringify(line)}\n`);
    }
    done({ code: ExportResultCode.SUCCESS });
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

function exporterFor(cfg: TracingConfig): SpanExporter {
  if (cfg.exporter === 'console') return new JsonLinesSpanExporter();
  return new OTLPTraceExporter(cfg.endpoint ? { url: cfg.endpoint } : {});
}
