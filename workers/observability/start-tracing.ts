import type { WorkerConfig } from '../config';
import type * as TracingModule from './tracing';

/**
 * Tracing when the configuration asks for it; OpenTelemetry is only loaded then. A CLI command
 * passes its name, so its client calls share one trace under a `durable-agent <command>` span.
 */
export function startTracing(
  config: Pick<WorkerConfig, 'tracing'>,
  command?: string,
): TracingModule.Tracing | undefined {
  if (config.tracing.exporter === 'off') return undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
  const { createTracing } = require('./tracing') as typeof TracingModule;
  return createTracing(config, undefined, command);
}
