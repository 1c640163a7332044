/** The errors of the client SDK: one class, a closed set of codes. */
import { ApprovalRequestError } from './approval-client';
import { NotificationTargetError } from './notification-client';
import type { QuestionErrorCode } from './questions';
import { QuestionRequestError } from './questions';
import { RunIdTakenError } from './start-run';
import { RunNotFoundError, classifyTemporalError, isRunNotFound } from './temporal-errors';

/**
 * What went wrong, a closed list:
 * - `invalid_input`: the run's input, a message or a decision is not valid (the message says what to fix);
 * - `not_found`: no run (or inbox) with that id;
 * - `finished`: the run has ended and takes no more messages, decisions or cancellation;
 * - `refused`: the run refused a decision or an answer (an unknown or decided call, arguments that
 *   do not fit, a question no longer waiting);
 * - `already_answered`: another door answered the question first;
 * - `id_taken`: a run with that id exists already;
 * - `no_worker`: no worker answered (none polls the task queue, or all are busy or down);
 * - `unreachable`: the Temporal server cannot be reached;
 * - `run_failed`, `run_cancelled`: what {@link AgentRun.result} throws for a run that did not answer.
 */
export type AgentClientErrorCode =
  | 'invalid_input'
  | 'not_found'
  | 'finished'
  | 'refused'
  | 'already_answered'
  | 'id_taken'
  | 'no_worker'
  | 'unreachable'
  | 'run_failed'
  | 'run_cancelled';

/** How a refused answer reads as the SDK's error. */
const QUESTION_CODES: Record<QuestionErrorCode, AgentClientErrorCode> = {
  not_found: 'not_found',
  finished: 'finished',
  not_waiting: 'refused',
  timed_out: 'refused',
  already_answered: 'already_answered',
  invalid_answer: 'invalid_input',
};

/** An error of the client SDK: a code to branch on and a message that says what to do. */
export class AgentClientError extends Error {
  override readonly name = 'AgentClientError';
  constructor(
    readonly code: AgentClientErrorCode,
    message: string,
    /** For `run_failed`: the failure's type (`InvalidAgentInput`, `OutputValidationError`, …). */
    readonly errorType?: string,
  ) {
    super(message);
  }
}

/** Maps what the lower layers throw to the SDK's errors; anything else passes through. */
export function mapped(err: unknown, workflowId?: string): unknown {
  if (err instanceof AgentClientError) return err;
  if (err instanceof RunIdTakenError) return new AgentClientError('id_taken', err.message);
  if (err instanceof RunNotFoundError) return new AgentClientError('not_found', err.message);
  if (err instanceof ApprovalRequestError) return new AgentClientError(err.code, err.message);
  if (err instanceof QuestionRequestError) return new AgentClientError(QUESTION_CODES[err.code], err.message);
  if (err instanceof NotificationTargetError) {
    const code: AgentClientErrorCode =
      err.code === 'not_found' || err.code === 'not_a_notification_target'
        ? 'not_found'
        : err.code === 'no_worker' || err.code === 'busy'
          ? 'no_worker'
          : err.code === 'unreachable'
            ? 'unreachable'
            : 'invalid_input';
    return new AgentClientError(code, err.message);
  }
  if (workflowId !== undefined && isRunNotFound(err))
    return new AgentClientError('not_found', new RunNotFoundError(workflowId).message);
  const failure = classifyTemporalError(err);
  if (failure?.kind === 'unreachable')
    return new AgentClientError('unreachable', `The Temporal server cannot be reached: ${failure.details}`);
  if (
    failure &&
    (failure.kind === 'no_poller' || failure.kind === 'timed_out' || failure.kind === 'task_failing')
  )
    return new AgentClientError(
      'no_worker',
      `No worker answered in time (${failure.details}): start one on the run's task queue`,
    );
  return err;
}

/** Runs `fn`, throwing what it throws as the SDK's errors. */
export async function guarded<T>(fn: () => Promise<T>, workflowId?: string): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw mapped(err, workflowId);
  }
}
