/**
 * The Temporal environments test files share, as jest hooks: a file calls one of these at its top
 * level (or inside a `describe`), which starts the environment in `beforeAll` and stops it in
 * `afterAll`, and reads it in its tests through the returned handle. Each file gets its own server
 * (own port, own data folder) and its own task queue, so files can run in parallel jest workers.
 */
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { HeldLock } from '../../activities/search/kb/lock';
import { acquireLock } from '../../activities/search/kb/lock';
import { PROJECT_ROOT } from '../../shared/project-root';
import type { DevServerFixture } from '../../testkit/dev-server';
import { startDevServerFixture } from '../../testkit/dev-server';
import type { WorkerProcess } from '../../testkit/processes';
import { startWorkerProcess } from '../../testkit/processes';
import { devServerEnv, timeSkippingEnv, uid, workflowBundle } from '../../testkit/temporal';

/** Starting a server and bundling the workflows is slow on a busy 2-core machine. */
const START_TIMEOUT_MS = 180_000;
/** How long a file waits for another to release a lock it shares with it (`exclusive`). */
const EXCLUSIVE_WAIT_MS = 5 * 60_000;
/** The lock of runs on examples/config.json (see the `exclusive` option). */
export const EXAMPLES_CONFIG = 'examples-config';

/** A lock file of this checkout, the same for every jest worker and run (as its mail server is). */
function lockFile(name: string): string {
  const checkout = createHash('sha256').update(PROJECT_ROOT).digest('hex').slice(0, 8);
  return path.join(os.tmpdir(), `durable-agent-tests-${checkout}-${name}.lock`);
}

/** Reads a value set by a `beforeAll`, failing clearly when a test reads it outside the file's hooks. */
function started<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} has not started (read it inside a test or hook)`);
  return value;
}

/** A Temporal test environment of this file. */
export interface EnvironmentSuite {
  readonly env: TestWorkflowEnvironment;
}

function environmentSuite(
  create: () => Promise<TestWorkflowEnvironment>,
  what: string,
  opts: { bundle?: boolean },
): EnvironmentSuite {
  let env: TestWorkflowEnvironment | undefined;
  beforeAll(async () => {
    env = await create();
    // Workers of this file then start without waiting for the bundle.
    if (opts.bundle !== false) await workflowBundle();
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await env?.teardown();
  });
  return {
    get env() {
      return started(env, what);
    },
  };
}

/**
 * The time-skipping test server (timers and approvals without waiting) for this file, with the
 * workflow bundle built; `bundle: false` for a file that bundles workflows its own way.
 */
export function useTimeSkippingEnv(opts: { bundle?: boolean } = {}): EnvironmentSuite {
  return environmentSuite(timeSkippingEnv, 'the time-skipping environment', opts);
}

/** A real dev server managed by the SDK for this file (search attributes, real time). */
export function useLocalEnv(opts: { bundle?: boolean } = {}): EnvironmentSuite {
  return environmentSuite(devServerEnv, 'the local dev server environment', opts);
}

/** A dev server of this file, optionally with a worker process polling the file's task queue. */
export interface DevServerSuite {
  readonly fx: DevServerFixture;
  /** This file's task queue (a fresh one, so no other file's worker ever takes its tasks). */
  readonly taskQueue: string;
  /** TEMPORAL_ADDRESS and DURABLE_AGENT_TASK_QUEUE, plus the worker's variables: for CLI commands. */
  readonly env: Record<string, string>;
  /** The worker process (only with the `worker` option). */
  readonly worker: WorkerProcess;
  /** Runs `close` when the file ends, before the worker and the server stop (last deferred first). */
  defer(close: () => unknown): void;
}

/** What {@link useDevServer} starts beside the server, and how. */
export interface DevServerSuiteOptions {
  /** Start a worker process on the file's task queue: `true`, or its extra variables. */
  worker?: boolean | Record<string, string>;
  /** Prefix of the task queue's name (shows in failures and in the dev server's logs). */
  queue?: string;
  /** Fail the file when the worker does not exit 0 on SIGTERM (a clean shutdown is part of the test). */
  cleanExit?: boolean;
  /**
   * A lock held from before the server starts until it stopped, so nothing else holding it runs
   * at the same time in any jest worker: for what files cannot each have a copy of. Runs on
   * examples/config.json ({@link EXAMPLES_CONFIG}) share its state: the email example mails a
   * fixed subject to the agent's inbox and reads the newest back, and `.data/` is the checkout's.
   */
  exclusive?: string;
  /** Dynamic config values of the server over the dev server's own (see startDevServerFixture). */
  dynamicConfig?: Readonly<Record<string, string | number | boolean>>;
}

/** A dev server (and a worker process) for this file, started in `beforeAll`, stopped in `afterAll`. */
export function useDevServer(opts: DevServerSuiteOptions = {}): DevServerSuite {
  const taskQueue = uid(opts.queue ?? 'tq');
  let fx: DevServerFixture | undefined;
  let env: Record<string, string> | undefined;
  let worker: WorkerProcess | undefined;
  const closers: (() => unknown)[] = [];
  let held: HeldLock | undefined;
  beforeAll(
    async () => {
      if (opts.exclusive) held = await acquireLock(lockFile(opts.exclusive), EXCLUSIVE_WAIT_MS);
      fx = await startDevServerFixture(opts.dynamicConfig);
      const extra = typeof opts.worker === 'object' ? opts.worker : {};
      env = { TEMPORAL_ADDRESS: fx.address, DURABLE_AGENT_TASK_QUEUE: taskQueue, ...extra };
      if (opts.worker) worker = await startWorkerProcess(env);
    },
    START_TIMEOUT_MS + (opts.exclusive ? EXCLUSIVE_WAIT_MS : 0),
  );
  afterAll(async () => {
    // Every step runs even when one before it failed: a server left behind outlives the run.
    const errors: unknown[] = [];
    for (const close of closers.reverse()) {
      try {
        await close();
      } catch (e) {
        errors.push(e);
      }
    }
    if (worker) {
      worker.child.kill('SIGTERM');
      const code = await worker.exited;
      if (opts.cleanExit && code !== 0)
        errors.push(new Error(`the worker exited ${code} on SIGTERM: ${worker.stderr.join('')}`));
    }
    await fx?.stop().catch((e) => errors.push(e));
    held?.release();
    if (errors.length) throw errors[0];
  });
  return {
    taskQueue,
    get fx() {
      return started(fx, 'the dev server');
    },
    get env() {
      return started(env, 'the dev server');
    },
    get worker() {
      return started(worker, 'the worker process');
    },
    defer(close) {
      closers.push(close);
    },
  };
}

/**
 * Runs `fn` holding the lock `name` (the one the `exclusive` option of {@link useDevServer} holds
 * for a whole file), for a file that shares a resource only in some of its steps.
 */
export async function exclusive<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const held = await acquireLock(lockFile(name), EXCLUSIVE_WAIT_MS);
  try {
    return await fn();
  } finally {
    held.release();
  }
}
