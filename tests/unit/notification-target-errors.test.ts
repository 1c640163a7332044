/**
 * How the notification doors (CLI, HTTP API, the chaos flood) read Temporal's errors: a workflow whose
 * task is being retried refuses updates for a while, which is a reason to retry, not a failure.
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { NotificationTargetError, explainTargetError } from '../../cli/notification-client';

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
  expect((explained as Error).message).toMatch(/"chaos-job-1" takes no updates until a worker completes/);
});

test('another failed precondition is not mistaken for it', () => {
  const other = grpcError(9, 'Workflow is not running');
  expect(explainTargetError(other, 'x')).toBe(other);
});
