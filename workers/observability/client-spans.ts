import * as otel from '@opentelemetry/api';
import type {
  DescribeWorkflowExecutionResponse,
  Next,
  RequestCancelWorkflowExecutionResponse,
  TerminateWorkflowExecutionResponse,
  WorkflowCancelInput,
  WorkflowClientInterceptor,
  WorkflowDescribeInput,
  WorkflowQueryInput,
  WorkflowSignalInput,
  WorkflowSignalWithStartInput,
  WorkflowStartInput,
  WorkflowStartOutput,
  WorkflowStartUpdateInput,
  WorkflowStartUpdateOutput,
  WorkflowStartUpdateWithStartInput,
  WorkflowStartUpdateWithStartOutput,
  WorkflowTerminateInput,
} from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';

/**
 * Temporal's client tracing, for the calls that change a run (start, signal, update, cancel,
 * terminate). Queries and describes get no span: `durable-agent run` polls its run's progress
 * every 250 ms, and a span per poll would bury the run's trace. With `parent` (a command's own
 * span) every span is its child, so one command is one trace.
 */
export class TracedClientCalls extends OpenTelemetryWorkflowClientInterceptor {
  constructor(
    tracer: otel.Tracer,
    private readonly parent?: otel.Span,
  ) {
    super({ tracer });
  }

  private within<T>(fn: () => Promise<T>): Promise<T> {
    if (!this.parent) return fn();
    return otel.context.with(otel.trace.setSpan(otel.context.active(), this.parent), fn);
  }

  override start(input: WorkflowStartInput, next: Next<WorkflowClientInterceptor, 'start'>): Promise<string> {
    return this.within(() => super.start(input, next));
  }

  override startWithDetails(
    input: WorkflowStartInput,
    next: Next<WorkflowClientInterceptor, 'startWithDetails'>,
  ): Promise<WorkflowStartOutput> {
    return this.within(() => super.startWithDetails(input, next));
  }

  override signal(
    input: WorkflowSignalInput,
    next: Next<WorkflowClientInterceptor, 'signal'>,
  ): Promise<void> {
    return this.within(() => super.signal(input, next));
  }

  override signalWithStart(
    input: WorkflowSignalWithStartInput,
    next: Next<WorkflowClientInterceptor, 'signalWithStart'>,
  ): Promise<string> {
    return this.within(() => super.signalWithStart(input, next));
  }

  override startUpdate(
    input: WorkflowStartUpdateInput,
    next: Next<WorkflowClientInterceptor, 'startUpdate'>,
  ): Promise<WorkflowStartUpdateOutput> {
    return this.within(() => super.startUpdate(input, next));
  }

  override startUpdateWithStart(
    input: WorkflowStartUpdateWithStartInput,
    next: Next<WorkflowClientInterceptor, 'startUpdateWithStart'>,
  ): Promise<WorkflowStartUpdateWithStartOutput> {
    return this.within(() => super.startUpdateWithStart(input, next));
  }

  override cancel(
    input: WorkflowCancelInput,
    next: Next<WorkflowClientInterceptor, 'cancel'>,
  ): Promise<RequestCancelWorkflowExecutionResponse> {
    return this.within(() => super.cancel(input, next));
  }

  override terminate(
    input: WorkflowTerminateInput,
    next: Next<WorkflowClientInterceptor, 'terminate'>,
  ): Promise<TerminateWorkflowExecutionResponse> {
    return this.within(() => super.terminate(input, next));
  }

  override query(
    input: WorkflowQueryInput,
    next: Next<WorkflowClientInterceptor, 'query'>,
  ): Promise<unknown> {
    return next(input);
  }

  override describe(
    input: WorkflowDescribeInput,
    next: Next<WorkflowClientInterceptor, 'describe'>,
  ): Promise<DescribeWorkflowExecutionResponse> {
    return next(input);
  }
}
