import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  workflowInfo,
} from '@temporalio/workflow';
import { NotificationStateSchema } from '../shared/notifications/state';
import type { NotificationState } from '../shared/notifications/state';
import { NotificationBox } from './notifications';

/** Input of a user's inbox workflow (id `inbox:<user>`). */
export interface InboxInput {
  /** Capacity of the inbox; default 100 (SPEC). */
  maxNotifications?: number;
  /** Signals handled in one run before continuing as new (also on the server's suggestion). */
  continueAsNewAfter?: number;
  /** State carried over continue-as-new. */
  carried?: NotificationState;
}

/** Signals per run before continuing as new, keeping each run's history small. */
const DEFAULT_CONTINUE_AS_NEW_AFTER = 500;
/** History events per run before continuing as new, whatever the signal count. */
const MAX_HISTORY_EVENTS = 2000;

/**
 * A user's inbox: aggregates notifications across agent runs. Created by signal-with-start, runs
 * forever, and continues as new with its exact state, so nothing is lost or renumbered by it.
 */
export async function inboxWorkflow(input: InboxInput = {}): Promise<never> {
  const parsed = input.carried === undefined ? undefined : NotificationStateSchema.safeParse(input.carried);
  if (parsed && !parsed.success) {
    throw ApplicationFailure.create({
      type: 'InvalidInboxState',
      message: `Invalid carried inbox state: ${parsed.error.issues.map((i) => i.message).join('; ')}`,
      nonRetryable: true,
    });
  }
  const carried = parsed?.data;
  const box = new NotificationBox(carried, input.maxNotifications);
  box.registerHandlers();
  const limit = input.continueAsNewAfter ?? DEFAULT_CONTINUE_AS_NEW_AFTER;
  // The history length guard keeps a flood of signals from growing one run's history (and its
  // replay time) without bound while continue-as-new waits for a quiet moment.
  await condition(
    () =>
      workflowInfo().continueAsNewSuggested ||
      box.handled >= limit ||
      workflowInfo().historyLength >= MAX_HISTORY_EVENTS,
  );
  await condition(allHandlersFinished);
  return continueAsNew<typeof inboxWorkflow>({ ...input, carried: box.snapshot() });
}
