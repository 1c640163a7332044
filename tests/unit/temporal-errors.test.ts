/**
 * The shared classifier of Temporal failures, on the error shapes recorded from the dev server
 * (Temporal 1.32, grpc-js 1.14) for a query no worker answers, and their neighbours that mean
 * something else. tests/notifications/no-worker-doors.test.ts makes each happen on a real server.
 */
import { ServiceError } from '@temporalio/client';
import { classifyTemporalError } from '../../client/temporal-errors';
import type { TemporalFailureKind } from '../../client/temporal-errors';

/** A gRPC error as grpc-js raises it, wrapped the way the client wraps a failed query. */
function failedQuery(code: number, details: string): Error {
  const grpc = Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} });
  return new ServiceError('Failed to query Workflow', { cause: grpc });
}

test.each<[string, number, string, TemporalFailureKind]>([
  ['our deadline first', 4, 'Deadline exceeded after 9.993s,remote_addr=127.0.0.1:7233', 'timed_out'],
  ['the server handler at its deadline', 4, 'query timed out before a worker could process it', 'timed_out'],
  ['the server resetting the stream at its deadline', 1, 'Call cancelled', 'timed_out'],
  ['a deadline already past on arrival', 4, 'context deadline exceeded', 'timed_out'],
  [
    'no poll on the task queue lately',
    9,
    'no poller seen for task queue recently, worker may be down',
    'no_poller',
  ],
  [
    'a failing workflow task',
    9,
    'Unable to query workflow due to Workflow Task in failed state.',
    'task_failing',
  ],
  [
    'a full query buffer',
    8,
    'consistent query buffer is full, this may be caused by too many queries and workflow not able to process query fast enough',
    'busy',
  ],
  ['an answer over the gRPC limit', 8, 'Received message larger than max (5000000 vs. 4194304)', 'too_large'],
  ['no server', 14, 'No connection established. Last error: connect ECONNREFUSED 127.0.0.1:1', 'unreachable'],
])('%s is %s', (_what, code, details, kind) => {
  expect(classifyTemporalError(failedQuery(code, details))).toEqual({ kind, code, details });
});

test('a call this process cancelled, another failed precondition, and errors without a status are left alone', () => {
  expect(classifyTemporalError(failedQuery(1, 'Cancelled on client'))).toBeUndefined();
  expect(classifyTemporalError(failedQuery(9, 'Workflow is not running'))).toBeUndefined();
  expect(classifyTemporalError(new Error('Deadline exceeded'))).toBeUndefined();
  expect(classifyTemporalError(undefined)).toBeUndefined();
});
