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
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { ClientInterceptors } from '@temporalio/client';
import type {
  ActivityExecuteInput,
  ActivityInboundCallsInterceptor,
  ActivityInterceptorsFactory,
  InjectedSinks,
  Next,
} from '@temporalio/worker';
import type { CallEnd } from './agent-calls';
import { agentCallOf, callEnded, callFailed } from './agent-calls';
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
    const ctx = Context.current();
    const call = agentCallOf(ctx.info.activityType, input.args);
    if (!call) return next(input);
    const attributes = defined({
      [SPAN_ATTR.workflowId]: ctx.info.workflowExecution?.workflowId,
      [SPAN_ATTR.runId]: ctx.info.workflowExecution?.runId,
      [SPAN_ATTR.attempt]: ctx.info.attempt,
      [SPAN_ATTR.operation]: call.operation,
      [SPAN_ATTR.step]: call.step,
      ...(call.operation === 'chat'
        ? { [SPAN_ATTR.provider]: call.provider, [SPAN_ATTR.requestModel]: call.name }
        : {
            [SPAN_ATTR.toolName]: call.name,
            [SPAN_ATTR.toolCategory]: call.category,
            [SPAN_ATTR.toolCallId]: call.toolCallId,
          }),
    });
    const name = `${call.operation} ${call.name}`;
    return this.tracer.startActiveSpan(name, { kind: otel.SpanKind.INTERNAL, attributes }, async (span) => {
      try {
        const result = await next(input);
        span.setAttributes(endAttributes(callEnded(call, result)));
        return result;
      } catch (err) {
        span.setAttributes(endAttributes(callFailed(err, ctx.cancellationSignal.aborted)));
        span.setStatus({ code: otel.SpanStatusCode.ERROR, message: (err as Error)?.message });
        throw err;
      } finally {
        span.end();
      }
    });
  }
}

/** Attributes without the unset ones (OpenTelemetry would keep them as empty values). */
function defined(attrs: Record<string, otel.AttributeValue | undefined>): otel.Attributes {
  return Object.fromEntries(Object.entries(attrs).filter(([, v]) => v !== undefined));
}

function endAttributes(end: CallEnd): otel.Attributes {
  return defined({
    [SPAN_ATTR.outcome]: end.outcome,
    [SPAN_ATTR.inputTokens]: end.inputTokens,
    [SPAN_ATTR.outputTokens]: end.outputTokens,
    [SPAN_ATTR.toolCalls]: end.toolCalls,
    [SPAN_ATTR.finishReasons]: end.finishReason ? [end.finishReason] : undefined,
    [SPAN_ATTR.errorType]: end.errorType,
  });
}

/** What a worker, and a client that starts or signals runs, add when tracing is on. */
export interface Tracing {
  /** Client interceptors: starting a run begins its trace (`StartWorkflow:agentWorkflow`). */
  clientInterceptors: ClientInterceptors;
  activityInterceptors: ActivityInterceptorsFactory[];
  workflowModules: string[];
  sinks: InjectedSinks<{ exporter: OpenTelemetryWorkflowExporter }>;
  /** Flushes and stops the exporter. */
  shutdown(): Promise<void>;
}

let contextManagerInstalled = false;

/**
 * Builds tracing from the configuration, or from a span processor (tests, embedders). Returns
 * undefined when tracing is off. Activity spans nest under Temporal's `RunActivity` span;
 * workflow spans (`RunWorkflow`, `StartActivity`, …) go out through a sink, never during replay.
 */
export function createTracing(
  config: Pick<WorkerConfig, 'tracing'>,
  spanProcessor?: SpanProcessor,
): Tracing | undefined {
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
    clientInterceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor({ tracer })] },
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
      // Spans that cannot be flushed are reported; they never fail a shutdown.
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
