import type { WorkerOptions } from '@temporalio/worker';
import { DEFAULT_VERSIONING_BEHAVIOR } from '../shared/worker-versioning';
import { ConfigError } from './config-error';

/**
 * The worker deployment version a worker declares (Temporal's Worker Versioning): the deployment
 * it belongs to and the build it runs. Off (undefined) unless both are configured.
 */
export interface WorkerVersioningConfig {
  deploymentName: string;
  buildId: string;
}

/**
 * Longest deployment name or build id accepted: Temporal documents 255 characters for a build id
 * (the server refused 256 here); names are held to the same so one rule covers both.
 */
export const MAX_VERSIONING_ID_LENGTH = 255;

/** Why a deployment name or build id would be refused by the server, or undefined when fine. */
function problemOf(what: 'deployment name' | 'build id', value: string): string | undefined {
  if (value.length > MAX_VERSIONING_ID_LENGTH)
    return `is ${value.length} characters; a ${what} has at most ${MAX_VERSIONING_ID_LENGTH}`;
  // The server reserves names starting with `__` (`__unversioned__`) for itself.
  if (value.startsWith('__')) return `must not start with "__" (reserved by Temporal)`;
  if (/[\s\p{Cc}]/u.test(value)) return 'must not contain spaces or control characters';
  // `<name>.<build>` and `<name>:<build>` are the server's canonical forms of a version.
  if (what === 'deployment name' && /[.:]/.test(value))
    return 'must not contain "." or ":" (Temporal joins name and build id with them)';
  return undefined;
}

/**
 * Reads DURABLE_AGENT_DEPLOYMENT_NAME and DURABLE_AGENT_BUILD_ID: both set turns Worker Versioning
 * on, neither leaves it off, one alone is an error. Checked here because the server does not
 * refuse a worker with a bad name: the worker starts, and its polls fail quietly forever.
 */
export function parseWorkerVersioning(
  deploymentName: string | undefined,
  buildId: string | undefined,
): WorkerVersioningConfig | undefined {
  const name = deploymentName?.trim() || undefined;
  const build = buildId?.trim() || undefined;
  if (name === undefined && build === undefined) return undefined;
  if (name === undefined) {
    throw new ConfigError(
      'Invalid worker configuration: DURABLE_AGENT_BUILD_ID is set but DURABLE_AGENT_DEPLOYMENT_NAME is not; ' +
        'set both (e.g. DURABLE_AGENT_DEPLOYMENT_NAME=durable-agent) to use Worker Versioning, or neither',
    );
  }
  if (build === undefined) {
    throw new ConfigError(
      'Invalid worker configuration: DURABLE_AGENT_DEPLOYMENT_NAME is set but DURABLE_AGENT_BUILD_ID is not; ' +
        "set it to this build's id (e.g. its git commit) to use Worker Versioning, or unset both",
    );
  }
  const problems = [
    ['DURABLE_AGENT_DEPLOYMENT_NAME', problemOf('deployment name', name)],
    ['DURABLE_AGENT_BUILD_ID', problemOf('build id', build)],
  ].filter((p): p is [string, string] => p[1] !== undefined);
  if (problems.length > 0) {
    throw new ConfigError(
      `Invalid worker configuration: ${problems.map(([k, p]) => `${k}: ${p}`).join('; ')}`,
    );
  }
  return { deploymentName: name, buildId: build };
}

/**
 * The SDK's worker deployment options for a versioned worker. Every workflow the worker registers
 * declares its own versioning behaviour (shared/worker-versioning.ts); the default covers only a
 * workflow type added without one.
 */
export function workerDeploymentOptions(
  v: WorkerVersioningConfig,
): NonNullable<WorkerOptions['workerDeploymentOptions']> {
  return {
    version: { deploymentName: v.deploymentName, buildId: v.buildId },
    useWorkerVersioning: true,
    defaultVersioningBehavior: DEFAULT_VERSIONING_BEHAVIOR,
  };
}
