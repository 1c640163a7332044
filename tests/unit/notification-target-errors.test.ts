/**
 * How the notification doors (CLI, HTTP API, the chaos flood) read Temporal's errors: a workflow whose
 * task is being retried refuses updates for a while, which is a reason to retry, not a failure.
 */
import { ServiceError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { rethrowKnownErrorTypes } from '@temporalio/client/lib/helpers';
import * as proto from '@temporalio/proto';
import { NotificationTargetError, explainTargetError } from '../../client/notification-client';

/** A gRPC error as the client raises it (code, details, metadata). */
function grpcError(code: number, details: string): Error {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} });
}

test('an update refused while the workflow task is being retried is "no worker", to retry', () => {
  const refused = grpcError(
    9,
    'Unable to perform workflow execution update due to Workflow Task in failed state.',
  );
  const explained = explainTargetError(
    new WorkflowUpdateFailedError('Workflow Update failed', refused),
    'chaos-job-1',
  );
  expect(explained).toBeInstanceOf(NotificationTargetError);
  expect(explained).toMatchObject({ code: 'no_worker' });
  expect((explained as Error).message).toMatch(
    /"chaos-job-1" takes no updates or queries until a worker completes/,
  );
});

test('another failed precondition is not mistaken for it', () => {
  const other = grpcError(9, 'Workflow is not running');
  expect(explainTargetError(other, 'x')).toBe(other);
});

/**
 * Update-with-start (the door that creates an inbox) answers with one multi-operation error; the
 * client lifts the failing operation's status out of its binary details, which is what reaches us.
 */
test('update-with-start refused while the workflow task is being retried is "no worker" too', () => {
  const { google, temporal } = proto;
  const aborted = google.rpc.Status.create({
    code: 10,
    message: 'Operation was aborted.',
    details: [
      {
        type_url: 'type.googleapis.com/temporal.api.failure.v1.MultiOperationExecutionAborted',
        value: Buffer.alloc(0),
      },
    ],
  });
  const failedState = google.rpc.Status.create({
    code: 9,
    message: 'Unable to perform workflow execution update due to Workflow Task in failed state.',
  });
  const failure = temporal.api.errordetails.v1.MultiOperationExecutionFailure.encode({
    statuses: [aborted, failedState],
  }).finish();
  const status = google.rpc.Status.encode({
    code: 10,
    message: 'MultiOperation could not be executed.',
    details: [
      {
        type_url: 'type.googleapis.com/temporal.api.errordetails.v1.MultiOperationExecutionFailure',
        value: failure,
      },
    ],
  }).finish();
  const bin = Buffer.from(status);
  const metadata = { get: (key: string) => (key === 'grpc-status-details-bin' ? [bin] : []) };
  const raw = Object.assign(new Error('10 ABORTED: MultiOperation could not be executed.'), {
    code: 10,
    details: 'MultiOperation could not be executed.',
    metadata,
  });
  let lifted: unknown = raw;
  try {
    rethrowKnownErrorTypes(raw as never);
  } catch (err) {
    lifted = err;
  }
  const explained = explainTargetError(
    new ServiceError('Update-With-Start failed', { cause: lifted as Error }),
    'inbox:alice',
  );
  expect(explained).toBeInstanceOf(NotificationTargetError);
  expect(explained).toMatchObject({ code: 'no_worker' });
});

test('the server refusing more updates in flight is "busy", to retry, not "too large"', () => {
  const inFlight = grpcError(8, 'limit on number of concurrent in-flight updates has been reached (10)');
  const explained = explainTargetError(
    new ServiceError('Workflow Update failed', { cause: inFlight }),
    'inbox:ana',
  );
  expect(explained).toMatchObject({ code: 'busy' });
  expect((explained as Error).message).toMatch(/retry shortly/);
  const tooLarge = grpcError(8, 'grpc: received message larger than max (5000000 vs. 4194304)');
  expect(explainTargetError(tooLarge, 'inbox:ana')).toMatchObject({ code: 'too_large' });
});

test('only a workflow without the notify handler is "not a notification target"; other update failures are not', () => {
  const noHandler = new WorkflowUpdateFailedError(
    'Workflow Update failed',
    ApplicationFailure.nonRetryable('No registered handler for update: notify'),
  );
  expect(explainTargetError(noHandler, 'some-workflow')).toMatchObject({ code: 'not_a_notification_target' });
  // A server on its way down says "update" and "not" too: that is no verdict on the target.
  const aborted = new WorkflowUpdateFailedError(
    'Workflow Update failed',
    ApplicationFailure.retryable('workflow update was not completed: the server is shutting down'),
  );
  expect(explainTargetError(aborted, 'inbox:u')).not.toMatchObject({ code: 'not_a_notification_target' });
});
