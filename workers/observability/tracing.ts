import * as otel from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import type { ExportResult } from '@opentelemetry/core';
import { ExportResultCode, hrTimeToMilliseconds, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ClientInterceptors } from '@temporalio/client';
import type { OpenTelemetryWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import { AgentSpanInterceptor, SPAN_ATTR, TRACER_NAME } from './agent-spans';
import { TracedClientCalls } from './client-spans';
import type { TracingConfig, WorkerConfig } from '../config';
import { PrivateTextSpanProcessor, workflowSpanSink } from './span-privacy';

export { SPAN_ATTR, TRACER_NAME } from './agent-spans';

/** What a worker, and a client that starts or signals runs, add when tracing is on. */
export interface Tracing {
  /** Client interceptors: starting a run begins its trace (`StartWorkflow:agentWorkflow`). */
  clientInterceptors: ClientInterceptors;
  activityInterceptors: ActivityInterceptorsFactory[];
  workflowModules: string[];
  sinks: InjectedSinks<{ exporter: OpenTelemetryWorkflowExporter }>;
  /** Ends the command's span (if any), then flushes and stops the exporter. */
  shutdown(): Promise<void>;
}

let contextManagerInstalled = false;

/**
 * Builds tracing from the configuration, or from a span processor (tests, embedders). Returns
 * undefined when tracing is off. Every span passes PrivateTextSpanProcessor before export.
 * Activity spans nest under Temporal's `RunActivity` span; workflow spans (`RunWorkflow`,
 * `StartActivity`, …) go out through a sink, never during replay. With `command` (a CLI command's
 * name) the client's spans are children of one `durable-agent <command>` span: one trace per command.
 */
export function createTracing(
  config: Pick<WorkerConfig, 'tracing'>,
  spanProcessor?: SpanProcessor,
  command?: string,
): Tracing | undefined {
  if (!spanProcessor && config.tracing.exporter === 'off') return undefined;
  installContext();
  const resource = new Resource({ 'service.name': config.tracing.serviceName });
  const processor = new PrivateTextSpanProcessor(
    spanProcessor ?? new BatchSpanProcessor(exporterFor(config.tracing)),
  );
  const provider = new BasicTracerProvider({ resource });
  provider.addSpanProcessor(processor);
  const tracer = provider.getTracer(TRACER_NAME);
  const commandSpan = command
    ? tracer.startSpan(`durable-agent ${command}`, { attributes: { [SPAN_ATTR.command]: command } })
    : undefined;
  return {
    clientInterceptors: { workflow: [new TracedClientCalls(tracer, commandSpan)] },
    activityInterceptors: [
      (ctx) => ({
        inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }),
        outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
      }),
      () => ({ inbound: new AgentSpanInterceptor(tracer) }),
    ],
    workflowModules: [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')],
    sinks: { exporter: workflowSpanSink(processor, resource) },
    async shutdown() {
      commandSpan?.end();
      // Spans that cannot be flushed are reported; they never fail a shutdown.
      await provider.shutdown().catch((err: unknown) => {
        console.error(`tracing: spans not exported at shutdown: ${describe(err)}`);
      });
    },
  };
}

/** Process-wide OpenTelemetry plumbing, installed once. */
function installContext(): void {
  if (contextManagerInstalled) return;
  contextManagerInstalled = true;
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
}

/** One line for an export problem: the error's code and message, never its stack or the spans. */
function describe(arg: unknown): string {
  if (typeof arg === 'string') return arg;
  const { code, message } = (arg ?? {}) as { code?: unknown; message?: unknown };
  if (typeof message === 'string') return typeof code === 'string' ? `${code}: ${message}` : message;
  return JSON.stringify(arg) ?? String(arg);
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
        ...(s.status.message ? { error: s.status.message } : {}),
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
