/**
 * Content store garbage collection, as every role sees it: the GC workflow's input and report,
 * how a claim names its workflow, and the schedule's name and defaults. The collector itself is
 * activities/content/gc.ts; docs/content-retention.md explains the rules. No zod here: the CLI's
 * `content` commands import this at start-up (the input's schema is shared/content-gc-schema.ts).
 */
import type { ContentRef } from './content';

/** The GC workflow's type name (a schedule's action names it). */
export const CONTENT_GC_WORKFLOW_TYPE = 'contentGcWorkflow';

/** How often the worker's GC schedule fires unless configured (`DURABLE_AGENT_CONTENT_GC`). */
export const DEFAULT_CONTENT_GC_EVERY_MS = 60 * 60 * 1000;

/** The id of the GC schedule of a task queue: its workers' store is the one it collects. */
export function contentGcScheduleId(taskQueue: string): string {
  return `durable-agent-content-gc:${taskQueue}`;
}

/** What one collection does. */
export interface ContentGcInput {
  /** Count what would go; remove nothing. */
  dryRun?: boolean;
  /**
   * How long after its last write, and after the close of every run that claims it, a value is
   * kept (ms). Never shorter than the namespace's retention: a shorter one is raised to it.
   */
  graceMs?: number;
  /** Also remove unclaimed values stored before claims were recorded (an upgraded store). */
  includeLegacy?: boolean;
}

/** Error types a collection fails with for good (retrying cannot help). */
export const CONTENT_GC_ERRORS = ['InvalidGcInput', 'NoNamespace', 'NotCollectable'] as const;

/** What a collection did (or, dry, would do). Sizes in bytes of stored JSON; times ISO 8601. */
export interface ContentGcReport {
  dryRun: boolean;
  /** The longest retention among the namespaces of the claims judged, and the grace used. */
  retentionMs: number;
  graceMs: number;
  /** Set when the grace asked for was shorter than retention, saying so. */
  graceNote?: string;
  /** Values last written before this were considered. */
  cutoff: string;
  /** Workflows claiming old values; those found gone or closed before the cutoff. */
  claimants: number;
  deadClaimants: number;
  /** Claimants of another Temporal service or of namespaces this one does not know: kept, not judged. */
  unjudged: number;
  scanned: number;
  removed: number;
  removedBytes: number;
  oldestRemoved: string | null;
  /** Unclaimed values from before claims were recorded, kept (see `includeLegacy`). */
  legacyKept: number;
  legacyKeptBytes: number;
  /** A few of the references removed. */
  sample: ContentRef[];
  /** What the store holds after the collection. */
  storeValues: number;
  storeBytes: number;
}

/**
 * A claim's claimant: the Temporal service (its cluster id), the namespace and the workflow id
 * (`<service>/<namespace>/<workflow id>`; neither of the first two holds a `/`). So one store shared
 * by several namespaces is judged run by run in each, and one shared by several Temporal services
 * (a developer's dev server and a test's) is judged only by the service that wrote each claim.
 */
export function claimantOf(service: string, namespace: string, workflowId: string): string {
  return `${service}/${namespace}/${workflowId}`;
}

/** The service, namespace and workflow id of a claimant. */
export function parseClaimant(claimant: string): { service: string; namespace: string; workflowId: string } {
  const first = claimant.indexOf('/');
  const second = claimant.indexOf('/', first + 1);
  return {
    service: claimant.slice(0, first),
    namespace: claimant.slice(first + 1, second),
    workflowId: claimant.slice(second + 1),
  };
}

/** The service id of a Temporal service that does not tell its cluster id (its namespaces are then the key). */
export const UNKNOWN_SERVICE = 'unknown';
