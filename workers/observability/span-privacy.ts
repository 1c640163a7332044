import type * as otel from '@opentelemetry/api';
import { createTraceState } from '@opentelemetry/api';
import type { IResource } from '@opentelemetry/resources';
import type { ReadableSpan, Span, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace-base';
import type { OpenTelemetryWorkflowExporter, SerializableSpan } from '@temporalio/interceptors-opentelemetry';
import type { InjectedSink } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import type { PrivateWords } from '../../shared/private-text';
import { privateWords, sanitizeMessage } from '../../shared/private-text';
import { SPAN_ATTR } from './agent-spans';
import { currentPrivateWords } from './private-values';

/** The identity part of the workflow info Temporal adds to workflow spans (see workflowSpanSink). */
const WORKFLOW_IDENTITY = ['workflowId', 'runId', 'workflowType', 'taskQueue', 'namespace'] as const;

/**
 * The only attributes a span keeps; everything else is dropped before export. Temporal's
 * interceptors would otherwise put the whole workflow info on workflow spans, memo (the task)
 * included.
 */
export const ALLOWED_SPAN_ATTRIBUTES: ReadonlySet<string> = new Set<string>([
  ...Object.values(SPAN_ATTR),
  // Set by Temporal's client and activity interceptors.
  'temporalWorkflowId',
  'run_id',
  'temporalActivityId',
  'temporalUpdateId',
  ...WORKFLOW_IDENTITY,
]);

const NO_WORDS: PrivateWords = new Set();

const EXCEPTION = { type: 'exception.type', message: 'exception.message', stack: 'exception.stacktrace' };

/**
 * Wraps the exporting span processor: each span leaves with allowed attributes only, exception
 * events reduced to type, sanitized message and stack frames, link attributes dropped, and its
 * status message as `Type: sanitized message`. Inside an activity attempt the words of its
 * arguments are redacted too (see PrivateValuesInterceptor).
 */
export class PrivateTextSpanProcessor implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}

  onStart(span: Span, parentContext: otel.Context): void {
    this.next.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    // Only a span with a message to sanitize needs the (possibly large) arguments' words.
    const hasText = span.status.message !== undefined || span.events.length > 0;
    this.next.onEnd(redactSpan(span, hasText ? currentPrivateWords() : NO_WORDS));
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}

/** A copy of `span` with only what may leave the process (see PrivateTextSpanProcessor). */
export function redactSpan(span: ReadableSpan, words: PrivateWords): ReadableSpan {
  const attributes: otel.Attributes = {};
  for (const [k, v] of Object.entries(span.attributes)) if (ALLOWED_SPAN_ATTRIBUTES.has(k)) attributes[k] = v;
  const events = span.events.filter((e) => e.name === 'exception').map((e) => redactException(e, words));
  const type = attributes[SPAN_ATTR.errorType] ?? events[0]?.attributes?.[EXCEPTION.type];
  const status: otel.SpanStatus =
    span.status.message === undefined
      ? { code: span.status.code }
      : {
          code: span.status.code,
          message: typed(String(type ?? ''), sanitizeMessage(span.status.message, words)),
        };
  const context = span.spanContext();
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => context,
    parentSpanId: span.parentSpanId,
    startTime: span.startTime,
    endTime: span.endTime,
    status,
    attributes,
    links: span.links.map((l) => ({ context: l.context })),
    events,
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationLibrary: span.instrumentationLibrary,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}

function typed(type: string, message: string): string {
  if (!type || message.startsWith(`${type}:`)) return message;
  return message ? `${type}: ${message}` : type;
}

function redactException(e: TimedEvent, words: PrivateWords): TimedEvent {
  const a = e.attributes ?? {};
  const attributes: otel.Attributes = {};
  const type = a[EXCEPTION.type];
  const message = a[EXCEPTION.message];
  if (typeof type === 'string') attributes[EXCEPTION.type] = type;
  if (typeof message === 'string') attributes[EXCEPTION.message] = sanitizeMessage(message, words);
  const stack = a[EXCEPTION.stack];
  if (typeof stack === 'string') {
    // Frames name functions and files; the stack's first line repeats the message, so it goes.
    const frames = stack.split('\n').filter((l) => /^\s+at\s/.test(l));
    if (frames.length) attributes[EXCEPTION.stack] = frames.join('\n');
  }
  return { name: e.name, time: e.time, attributes };
}

/**
 * The workflow span sink: Temporal's workflow interceptors hand their spans over with the whole
 * workflow info; only the run's identity is kept on them, and the memo's words (the task) are
 * redacted from their messages. Called only for new workflow tasks, never during replay.
 */
export function workflowSpanSink(
  processor: SpanProcessor,
  resource: IResource,
): InjectedSink<OpenTelemetryWorkflowExporter> {
  return {
    export: {
      fn: (info: WorkflowInfo, spans: SerializableSpan[]) => {
        const words = privateWords(info.memo ?? {});
        const identity = Object.fromEntries(WORKFLOW_IDENTITY.map((k) => [k, info[k]]));
        for (const s of spans) {
          if (isUntracedQuery(s)) continue;
          processor.onEnd(redactSpan(fromSerialized(s, identity, resource), words));
        }
      },
    },
  };
}

/**
 * A query answered for a caller that traces nothing (the CLI's progress polls, UIs, `temporal`):
 * without a parent it would open a trace of its own at every poll, so it is not exported.
 */
function isUntracedQuery(s: SerializableSpan): boolean {
  return s.name.startsWith('HandleQuery:') && !s.parentSpanId;
}

function fromSerialized(s: SerializableSpan, identity: otel.Attributes, resource: IResource): ReadableSpan {
  const { traceState, ...rest } = s.spanContext;
  // The trace state crosses the workflow sandbox as a string.
  const context: otel.SpanContext = {
    ...rest,
    ...(traceState ? { traceState: createTraceState(traceState) } : {}),
  };
  return { ...s, attributes: { ...s.attributes, ...identity }, spanContext: () => context, resource };
}
