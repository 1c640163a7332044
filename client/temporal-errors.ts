/**
 * What a failed Temporal call means, read from what the server and the transport return: the one
 * classifier behind every door (HTTP API, CLI), so the same failure gets the same answer everywhere.
 *
 * A query that no worker answers ends in one of these shapes, depending on which timer fires first
 * (seen on the dev server, Temporal 1.32 with grpc-js 1.14):
 * - our deadline first: grpc-js ends the call, `4 DEADLINE_EXCEEDED: Deadline exceeded after 9.993s,…`;
 * - the server's first (it gets our deadline as `grpc-timeout`, and our timer can run late on a
 *   busy event loop): its handler answers `4 DEADLINE_EXCEEDED: query timed out before a worker
 *   could process it`, or grpc-go's own deadline timer resets the stream first, RST_STREAM(CANCEL),
 *   which grpc-js reports as `1 CANCELLED: Call cancelled` (each came first in about half the calls);
 * - a deadline already past when the request arrives: `4 DEADLINE_EXCEEDED: context deadline exceeded`;
 * - a task queue no worker has polled within the server's `matching.queryPollerUnavailableWindow`
 *   (20 s): `9 FAILED_PRECONDITION: no poller seen for task queue recently, worker may be down`, a
 *   second before the deadline, so always ahead of ours;
 * - without a deadline of ours, the same at the server's own 30 s limit.
 */
import { noSuchRunMessage } from '../shared/identifiers';
import type { Client, WorkflowHandle } from '@temporalio/client';
import {
  WorkflowNotFoundError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  isGrpcServiceError,
} from '@temporalio/client';

/**
 * The handle of a running workflow, or the error `fail` makes when it does not exist (`not_found`,
 * in the one wording of an unknown run) or has ended (`finished`: its status, that `nothingWaits`,
 * and how to see its outcome).
 */
export async function runningHandle(
  client: Client,
  workflowId: string,
  fail: (code: 'not_found' | 'finished', message: string) => Error,
  nothingWaits: string,
): Promise<WorkflowHandle> {
  const handle = client.workflow.getHandle(workflowId);
  let status: string;
  try {
    status = (await handle.describe()).status.name;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw fail('not_found', noSuchRunMessage(workflowId));
    throw err;
  }
  if (status !== 'RUNNING') {
    throw fail(
      'finished',
      `Run "${workflowId}" has already ended (${status}); ${nothingWaits} any more. ` +
        `See its outcome with: durable-agent status ${workflowId}`,
    );
  }
  return handle;
}

/**
 * What a failure says, a closed list:
 * - `timed_out`: no answer came before a deadline, ours or the server's: no worker took the task,
 *   or no server answered (the caller can tell these apart by asking the server something cheap);
 * - `no_poller`: the server says no worker has polled the task queue recently;
 * - `task_failing`: the workflow's current task keeps failing or was lost with its worker, so it
 *   takes no queries or updates until a worker completes it;
 * - `busy`: the server refuses more work on this workflow for now (updates in flight, buffered
 *   queries, rate limits); retry shortly;
 * - `too_large`: a message over a gRPC or Temporal size limit;
 * - `unreachable`: the server cannot be reached.
 */
export type TemporalFailureKind =
  'timed_out' | 'no_poller' | 'task_failing' | 'busy' | 'too_large' | 'unreachable';

/** A classified failure, with the server's or transport's own words to show. */
export interface TemporalFailure {
  kind: TemporalFailureKind;
  /** gRPC status code, when the failure carried one. */
  code?: number;
  details: string;
}

/** gRPC status codes (grpc/status.proto) this classifier reads. */
const CANCELLED = 1;
const DEADLINE_EXCEEDED = 4;
const RESOURCE_EXHAUSTED = 8;
const FAILED_PRECONDITION = 9;
const UNAVAILABLE = 14;

/** What grpc-js says when this process cancelled the call itself: no news about Temporal. */
const CANCELLED_BY_US = 'Cancelled on client';
/** Size limits: grpc-js and grpc-go ("received message larger than max"), Temporal's blob limit. */
const SIZE_LIMIT = /exceeds limit|larger than max/i;

/**
 * The gRPC status under a client error, if any: `details` to show, `text` to match. For
 * update-with-start the client lifts the failing operation's status out of the multi-operation
 * error, putting its message in `message` and its details (binary, or the outer error's) in `details`.
 */
function grpcStatus(err: unknown): { code: number; details: string; text: string } | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (isGrpcServiceError(e)) {
      // Binary details (of a lifted operation status) are no text to show or match.
      const printable = (t: string | undefined) =>
        t && ![...t].some((c) => c.charCodeAt(0) < 9 || c === '\ufffd') ? t : '';
      const details = printable(e.details) || e.message;
      return { code: e.code, details, text: `${details} ${e.message}` };
    }
  }
  return undefined;
}

/**
 * Classifies a Temporal client error by its gRPC status (and, where one code means several
 * things, the server's message); undefined for anything else, which the caller handles or reports
 * as it is.
 */
export function classifyTemporalError(err: unknown): TemporalFailure | undefined {
  const status = grpcStatus(err);
  if (!status) {
    // The client's own reading of an update's DEADLINE_EXCEEDED or CANCELLED, should it carry no status.
    return err instanceof WorkflowUpdateRPCTimeoutOrCancelledError
      ? { kind: 'timed_out', details: err.message }
      : undefined;
  }
  const { code, details, text } = status;
  const failure = (kind: TemporalFailureKind): TemporalFailure => ({ kind, code, details });
  if (SIZE_LIMIT.test(text)) return failure('too_large');
  switch (code) {
    case DEADLINE_EXCEEDED:
      return failure('timed_out');
    case CANCELLED:
      // The server resets a call at the deadline we gave it; one we cancelled says nothing.
      return details === CANCELLED_BY_US ? undefined : failure('timed_out');
    case FAILED_PRECONDITION:
      if (/no poller seen/i.test(text)) return failure('no_poller');
      if (/workflow task in failed state/i.test(text)) return failure('task_failing');
      return undefined;
    case RESOURCE_EXHAUSTED:
      return failure('busy');
    case UNAVAILABLE:
      return failure('unreachable');
    default:
      return undefined;
  }
}

/** gRPC NOT_FOUND: the server holds no such workflow (or run). */
const NOT_FOUND = 5;

/** A workflow id the namespace does not hold: every door says so in the same words. */
export class RunNotFoundError extends Error {
  override readonly name = 'RunNotFoundError';
  constructor(readonly workflowId: string) {
    super(noSuchRunMessage(workflowId));
  }
}

/** Whether a client error says the workflow does not exist (the SDK's error, or a raw NOT_FOUND). */
export function isRunNotFound(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError || grpcStatus(err)?.code === NOT_FOUND;
}
