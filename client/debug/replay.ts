import os from 'node:os';
import path from 'node:path';
import type { ReplayWorkerOptions, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { DefaultLogger, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { globalHandlers } from '@temporalio/worker/lib/workflow/vm-shared';
import { WORKFLOWS_PATH, WORKFLOW_BUNDLER_OPTIONS, WORKFLOW_BUNDLE_FLAVOUR } from '../../workers/worker';
import { DATA_ROOT } from '../../shared/project-root';
import { cachedBundle, storeBundle } from './bundle-cache';
import type { History, HistoryEvent } from './history';
import { historyWorkflowId } from './history';
import { codecKeysFromEnv, openHistoryPayloads } from '../../workers/payload-codec';

/** Where code and history part ways, in words. */
export interface Divergence {
  /** Agent step (model turns so far) where the recorded commands differ from what the code does now. */
  step: number;
  /** First history event of the workflow task whose commands differ. */
  eventId: number | null;
  /** What the history recorded there (e.g. `activity callModel`). */
  expected: string;
  /** What the current code did instead, as far as the replayer says. */
  got: string;
  /** The replayer's own message. */
  detail: string;
}

/** The result of replaying one history. */
export interface ReplayOutcome {
  workflowId: string;
  ok: boolean;
  divergence?: Divergence;
  /** A failure that is not a determinism violation (bad file, code that throws while replaying). */
  error?: string;
}

/** Where `replay` keeps the bundles it built (see bundle-cache.ts). */
export const REPLAY_BUNDLE_CACHE = path.join(DATA_ROOT, '.data', 'replay-bundles');

/**
 * The workflow bundle replays of many histories share: from the cache while every file it was built
 * from is unchanged, else built (seconds) and cached. `cacheRoot: null` always builds. Bundles built
 * with other options (WORKFLOW_BUNDLE_FLAVOUR) are kept apart, in a folder of their own.
 */
export async function replayBundle(
  workflowsPath = WORKFLOWS_PATH,
  cacheRoot: string | null = REPLAY_BUNDLE_CACHE,
): Promise<WorkflowBundleWithSourceMap> {
  const cacheDir = cacheRoot ? path.join(cacheRoot, WORKFLOW_BUNDLE_FLAVOUR) : null;
  const cached = cacheDir ? cachedBundle(cacheDir, workflowsPath) : null;
  if (cached) return cached;
  const bundle = await bundleWorkflowCode({
    workflowsPath: path.resolve(workflowsPath),
    logger: new DefaultLogger('ERROR'),
    ...WORKFLOW_BUNDLER_OPTIONS,
  });
  if (cacheDir) storeBundle(cacheDir, workflowsPath, bundle);
  return bundle;
}

function describeCommandEvent(e: HistoryEvent): string | null {
  if (e.activityTaskScheduledEventAttributes)
    return `activity ${e.activityTaskScheduledEventAttributes.activityType?.name ?? '?'}`;
  if (e.timerStartedEventAttributes) return 'timer';
  if (e.upsertWorkflowSearchAttributesEventAttributes) return 'search attribute upsert';
  if (e.markerRecordedEventAttributes)
    return `marker ${e.markerRecordedEventAttributes.markerName ?? ''}`.trim();
  if (e.workflowExecutionCompletedEventAttributes) return 'workflow completion';
  if (e.workflowExecutionFailedEventAttributes) return 'workflow failure';
  if (e.workflowExecutionContinuedAsNewEventAttributes) return 'continue-as-new';
  if (e.signalExternalWorkflowExecutionInitiatedEventAttributes) return 'signal to another workflow';
  if (e.startChildWorkflowExecutionInitiatedEventAttributes) return 'child workflow';
  if (e.activityTaskCancelRequestedEventAttributes) return 'activity cancellation';
  if (e.workflowExecutionCanceledEventAttributes) return 'workflow cancellation';
  return null;
}

/** The replayer's words, without its wrapping. */
function coreMessage(err: Error): string {
  const m = /Nondeterminism error: (.*?)", source/.exec(err.message);
  return m?.[1] ?? err.message;
}

/**
 * A worker that only replays, built for speed. The SDK's replay worker spends most of a replay on
 * two things a replay does not need: a timeout watchdog around every call into the workflow
 * sandbox (a thread started per call), and a promise hook that captures a source-mapped stack trace
 * for every promise workflow code creates (for the `__stack_trace` query, never asked during a
 * replay). This one runs the workflow code on the calling thread in one reused V8 context, with
 * neither: workflow code that loops for ever hangs the replay instead of failing after 5 s.
 * Replay results are the same; only the cost differs (see bench/replay.ts).
 */
export class ReplayWorker extends Worker {
  protected static override async createWorkflowCreator(
    ...[bundle, compiledOptions, logger]: Parameters<typeof Worker.createWorkflowCreator>
  ): ReturnType<typeof Worker.createWorkflowCreator> {
    withoutPromiseStackHook();
    return super.createWorkflowCreator(
      bundle,
      {
        ...compiledOptions,
        debugMode: true,
        reuseV8Context: true,
        // No timeout: no watchdog thread per call into the sandbox.
        isolateExecutionTimeoutMs: undefined as unknown as number,
      },
      logger,
    );
  }
}

/**
 * Keeps the SDK's per-promise stack-trace hook out of this thread, unless a worker that runs
 * workflow code on this thread installed it already (then it stays: such a worker may be asked for
 * stack traces). The hook is installed once per thread and only by workers in debug mode, which
 * this project runs only for replays.
 */
function withoutPromiseStackHook(): void {
  if (!globalHandlers.installed) {
    globalHandlers.installed = true;
    globalHandlers.promiseHookInstalled = false;
  }
}

/** Whether replays on this thread run without the SDK's per-promise stack-trace hook. */
export function promiseStackHookOff(): boolean {
  return globalHandlers.installed && !globalHandlers.promiseHookInstalled;
}

const REPLAY_OPTIONS: ReplayWorkerOptions = { replayName: 'durable-agent-replay' };

/** How replays treat the workflow code's modules. */
export interface ReplayModuleOptions {
  /**
   * Evaluate the workflow code's modules afresh for every history, as a worker does for every
   * workflow. By default a replay worker evaluates them once and every history it replays uses
   * them: evaluating them (building the input schemas, above all) costs more than replaying a short
   * history. Workflow code keeps no state in its modules, so the outcome is the same; this option is
   * for code that might.
   */
  isolateModules?: boolean;
}

/** The SDK bundler's module cache declaration (per workflow in a reused V8 context). */
const MODULE_CACHE_DECLARATION = 'const __webpack_module_cache__ = globalThis.__webpack_module_cache__;';
/**
 * The same, falling back to one cache for all histories of the replay worker: the SDK's cache first
 * (modules shared by design, and those a workflow loaded for itself), then modules loaded once.
 */
const SHARED_MODULE_CACHE = `const __webpack_module_cache__ = (() => {
  const sdk = globalThis.__webpack_module_cache__;
  const loadedOnce = Object.create(null);
  return new Proxy({}, {
    get: (_, id) => sdk[id] ?? loadedOnce[id],
    set: (_, id, module) => {
      if (globalThis.__TEMPORAL_ACTIVATOR__) loadedOnce[id] = module;
      else sdk[id] = module;
      return true;
    },
    deleteProperty: (_, id) => delete loadedOnce[id],
  });
})();`;

const sharedBundles = new WeakMap<WorkflowBundleWithSourceMap, WorkflowBundleWithSourceMap>();

/**
 * The bundle a replay runs: with modules evaluated once per replay worker unless `isolateModules`
 * (or when the bundle does not declare its module cache the way this expects: then as it is).
 */
export function replayCode(
  bundle: WorkflowBundleWithSourceMap,
  { isolateModules = false }: ReplayModuleOptions = {},
): WorkflowBundleWithSourceMap {
  if (isolateModules || !bundle.code.includes(MODULE_CACHE_DECLARATION)) return bundle;
  let shared = sharedBundles.get(bundle);
  if (!shared) {
    shared = { ...bundle, code: bundle.code.replace(MODULE_CACHE_DECLARATION, SHARED_MODULE_CACHE) };
    sharedBundles.set(bundle, shared);
  }
  return shared;
}

/** Whether replays of this bundle evaluate its modules once per replay worker. */
export function sharesModules(bundle: WorkflowBundleWithSourceMap): boolean {
  return replayCode(bundle) !== bundle;
}

async function replays(
  bundle: WorkflowBundleWithSourceMap,
  history: History,
  workflowId: string,
): Promise<Error | null> {
  try {
    await ReplayWorker.runReplayHistory({ ...REPLAY_OPTIONS, workflowBundle: bundle }, history, workflowId);
    return null;
  } catch (err) {
    return err as Error;
  }
}

/**
 * Finds the first workflow task whose recorded commands the current code no longer produces, by
 * bisecting over history prefixes that end where a workflow task starts (a prefix replays every
 * earlier task in full).
 */
async function locate(
  bundle: WorkflowBundleWithSourceMap,
  history: History,
  workflowId: string,
  err: Error,
): Promise<Divergence> {
  const events = history.events ?? [];
  const taskStarts = events.flatMap((e, i) => (e.workflowTaskStartedEventAttributes ? [i] : []));
  // Smallest k such that the prefix ending at the k-th task start fails; all earlier tasks are fine.
  let lo = 0;
  let hi = taskStarts.length; // taskStarts.length stands for the full history, known to fail
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const prefix = { events: events.slice(0, (taskStarts[mid] as number) + 1) };
    if (await replays(bundle, prefix, workflowId)) hi = mid;
    else lo = mid + 1;
  }
  // The commands of the task before that start (or the last task) are where code and history differ.
  const end = lo < taskStarts.length ? (taskStarts[lo] as number) : events.length;
  const completedIdx = events
    .slice(0, end)
    .map((e) => Boolean(e.workflowTaskCompletedEventAttributes))
    .lastIndexOf(true);
  const commands = events.slice(completedIdx + 1, end).filter((e) => describeCommandEvent(e) !== null);
  const first = commands[0];
  const step = events
    .slice(0, completedIdx + 1)
    .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel').length;
  const detail = coreMessage(err);
  const stepAt = (eventId: number) =>
    events.filter(
      (e) =>
        Number(e.eventId) <= eventId &&
        e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel',
    ).length;
  const mismatch = /scheduled event '(.+?)' does not match activity type of activity command '(.+?)'/.exec(
    detail,
  );
  if (mismatch) {
    const at =
      commands.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === mismatch[1]) ??
      first;
    const eventId = at ? Number(at.eventId) : null;
    return {
      step: eventId === null ? step : stepAt(eventId),
      eventId,
      expected: `activity ${mismatch[1]}`,
      got: `activity ${mismatch[2]}`,
      detail,
    };
  }
  // "<Kind> machine does not handle this event: HistoryEvent(id: N, Type)" or "No command scheduled for event …"
  const named =
    /(?:(\w+) machine does not handle this event|No command scheduled for event)\W+HistoryEvent\(id: (\d+)/.exec(
      detail,
    );
  const namedEvent = named ? events.find((e) => Number(e.eventId) === Number(named[2])) : undefined;
  if (named && namedEvent) {
    const eventId = Number(named[2]);
    return {
      step: stepAt(eventId),
      eventId,
      expected: describeCommandEvent(namedEvent) ?? 'another command',
      got: named[1] ? named[1].toLowerCase() : 'no command',
      detail,
    };
  }
  const firstEvent = first ? Number(first.eventId) : null;
  return {
    step: firstEvent === null ? step : stepAt(firstEvent),
    eventId: firstEvent,
    expected: commands.map((e) => describeCommandEvent(e)).join(', ') || 'no command',
    got: 'different commands (see detail)',
    detail,
  };
}

/** Replays one history against the bundled workflow code. */
export async function replayHistory(
  bundle: WorkflowBundleWithSourceMap,
  history: History,
  workflowId = historyWorkflowId(history) ?? 'replayed',
  options: ReplayModuleOptions = {},
): Promise<ReplayOutcome> {
  bundle = replayCode(bundle, options);
  const err = await replays(bundle, history, workflowId);
  if (!err) return { workflowId, ok: true };
  if (err.name !== 'DeterminismViolationError') return { workflowId, ok: false, error: err.message };
  return { workflowId, ok: false, divergence: await locate(bundle, history, workflowId, err) };
}

/**
 * Replays many histories with a few replay workers (`lanes`, by default one per core up to 4; much
 * cheaper than a worker per history), locating the divergence of each history that fails. The
 * workers run workflow code on this thread; more than one keeps it busy while the SDK's core works
 * on its own threads. Outcomes come in the order replays finish.
 */
export async function* replayMany(
  bundle: WorkflowBundleWithSourceMap,
  histories:
    | AsyncIterable<{ history: History; workflowId: string }>
    | Iterable<{ history: History; workflowId: string }>,
  lanes = Math.max(1, Math.min(4, os.availableParallelism())),
  options: ReplayModuleOptions = {},
): AsyncGenerator<ReplayOutcome> {
  bundle = replayCode(bundle, options);
  const source = (async function* () {
    yield* histories;
  })();
  // Lanes pull from one shared source, so a slow history does not hold up the others.
  let pulling: Promise<unknown> = Promise.resolve();
  const next = () => {
    const p = pulling.then(() => source.next());
    pulling = p.catch(() => undefined);
    return p;
  };
  /**
   * Each history replays under the workflow id it recorded (a run's commands may depend on it: a
   * sub-agent's id is its parent's and the call's), and is reported under the caller's `workflowId`.
   * A lane replays one history at a time, so its pulled items answer in order.
   */
  const shared = (pulled: { history: History; label: string }[]) => ({
    [Symbol.asyncIterator]() {
      return {
        async next(): Promise<IteratorResult<{ history: History; workflowId: string }>> {
          const r = await next();
          if (r.done) return r;
          // Runs recorded with encryption on replay from their opened payloads.
          openHistoryPayloads(r.value.history, codecKeysFromEnv());
          pulled.push({ history: r.value.history, label: r.value.workflowId });
          const id = historyWorkflowId(r.value.history) ?? r.value.workflowId;
          return { done: false, value: { history: r.value.history, workflowId: id } };
        },
      };
    },
  });
  const queue: ReplayOutcome[] = [];
  let wake: (() => void) | undefined;
  let failure: unknown;
  let running = lanes;
  const lane = async () => {
    const pulled: { history: History; label: string }[] = [];
    for await (const r of ReplayWorker.runReplayHistories(
      { ...REPLAY_OPTIONS, workflowBundle: bundle },
      shared(pulled),
    )) {
      const item = pulled.shift();
      const label = item?.label ?? r.workflowId;
      let outcome: ReplayOutcome;
      if (!r.error) outcome = { workflowId: label, ok: true };
      else if (r.error.name !== 'DeterminismViolationError' || !item) {
        outcome = { workflowId: label, ok: false, error: r.error.message };
      } else {
        outcome = {
          workflowId: label,
          ok: false,
          divergence: await locate(bundle, item.history, r.workflowId, r.error),
        };
      }
      queue.push(outcome);
      wake?.();
    }
  };
  for (let i = 0; i < lanes; i++) {
    lane()
      .catch((err: unknown) => (failure ??= err))
      .finally(() => {
        running -= 1;
        wake?.();
      });
  }
  while (running > 0 || queue.length) {
    if (!queue.length) {
      await new Promise<void>((r) => (wake = r));
      wake = undefined;
      continue;
    }
    yield queue.shift() as ReplayOutcome;
  }
  if (failure) throw failure instanceof Error ? failure : new Error(JSON.stringify(failure));
}

/** One line for a replay outcome. */
export function formatOutcome(o: ReplayOutcome): string {
  if (o.ok) return `OK ${o.workflowId}`;
  if (o.divergence) {
    const d = o.divergence;
    return (
      `DIVERGED ${o.workflowId} at step ${d.step}${d.eventId !== null ? ` (history event ${d.eventId})` : ''}: ` +
      `history has ${d.expected}, the code now does ${d.got}\n    ${d.detail}`
    );
  }
  return `FAILED ${o.workflowId}: ${o.error ?? 'unknown error'}`;
}
