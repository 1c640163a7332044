import { Runtime } from '@temporalio/worker';
import type { LogLevel, TelemetryOptions } from '@temporalio/worker';
import { METRIC_BUCKETS } from '../../shared/metrics';
import type { MetricsConfig } from '../config';
import { ConfigError } from '../config';
import { createRuntimeLogger } from './logging';

/** What the process's Temporal runtime is installed with. */
export interface RuntimeSettings {
  logLevel: LogLevel;
  logFormat: 'text' | 'json';
  /** Serve Prometheus metrics (the SDK's and the agent's) when its exporter is `prometheus`. */
  metrics?: MetricsConfig;
}

let installed: { metrics: boolean } | undefined;

/**
 * Temporal's telemetry options for a metrics setting: a Prometheus endpoint at the address, with
 * the agent's histogram buckets. The SDK's names and units stay its defaults (counters without
 * `_total`, latencies in milliseconds), as Temporal's documentation and dashboards name them.
 */
export function telemetryOptionsFor(metrics: MetricsConfig | undefined): TelemetryOptions | undefined {
  if (metrics?.exporter !== 'prometheus') return undefined;
  return {
    metrics: {
      prometheus: { bindAddress: metrics.address, histogramBucketOverrides: { ...METRIC_BUCKETS } },
    },
  };
}

/**
 * Installs the process's Temporal runtime: the worker's logger (./logging.ts) and, when configured,
 * the Prometheus endpoint the SDK serves its worker metrics and the agent's on. Takes effect once
 * per process and must come before the first connection or worker: the SDK creates a runtime with
 * defaults (no metrics) at its first use. A metrics address that cannot be bound (in use, not
 * local) stops the worker with a ConfigError that names the variable.
 */
export function installRuntime(settings: RuntimeSettings): void {
  if (installed) return;
  const telemetryOptions = telemetryOptionsFor(settings.metrics);
  try {
    Runtime.install({
      logger: createRuntimeLogger(settings.logLevel, settings.logFormat),
      ...(telemetryOptions ? { telemetryOptions } : {}),
    });
  } catch (err) {
    if (!telemetryOptions) throw err;
    throw new ConfigError(
      `DURABLE_AGENT_METRICS_ADDRESS=${settings.metrics?.address}: cannot serve metrics there ` +
        `(${(err as Error).message}); give each worker on a machine its own port`,
    );
  }
  installed = { metrics: telemetryOptions !== undefined };
}

/** Routes Temporal's logs through the worker's logger, without metrics (see {@link installRuntime}). */
export function installLogging(level: LogLevel, format: 'text' | 'json'): void {
  installRuntime({ logLevel: level, logFormat: format });
}

/** Whether this process serves Prometheus metrics (its runtime was installed with them). */
export function servesMetrics(): boolean {
  return installed?.metrics === true;
}
