import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  workflowInfo,
} from '@temporalio/workflow';
import { formatZodIssues } from '../shared/zod-issues';
import { SIZE_BUDGETS } from '../shared/temporal-limits';
import { NotificationStateSchema } from '../shared/notifications/state';
import type { NotificationState } from '../shared/notifications/state';
import { NotificationBox } from './notifications';
import { unreadCount } from '../shared/notifications/reads';
import { InboxMetrics } from './metrics';

/** Input of a user's inbox workflow (id `inbox:<user>`). */
export interface InboxInput {
  /** Capacity of the inbox; default 100 (SPEC). */
  maxNotifications?: number;
  /**
   * Byte capacity of the inbox (its notifications as JSON), up to and by default
   * `SIZE_BUDGETS.notificationStateBytes`; the oldest are evicted first past it or past the count.
   */
  maxBytes?: number;
  /**
   * Signals and updates handled in one run before continuing as new (it also continues on the
   * server's suggestion and when its history passes the budgets in `shared/temporal-limits.ts`).
   */
  continueAsNewAfter?: number;
  /** State carried over continue-as-new. */
  carried?: NotificationState;
}

/**
 * Signals and updates per run before continuing as new. The history budgets (4,000 events, 4 MiB)
 * keep each run's history small whatever this is; a continue-as-new costs a new run and the carried
 * state's check, so doing it every 500 notifications halved a busy inbox's signal throughput.
 */
const DEFAULT_CONTINUE_AS_NEW_AFTER = 2_000;

/** True when this run's history should end in a continue-as-new. */
function historyFull(): boolean {
  const info = workflowInfo();
  return (
    info.continueAsNewSuggested ||
    info.historySize >= SIZE_BUDGETS.continueAsNewHistoryBytes ||
    info.historyLength >= SIZE_BUDGETS.continueAsNewHistoryEvents
  );
}

/**
 * A user's inbox: aggregates notifications across agent runs. Created by update-with-start (or
 * signal-with-start), runs forever, and continues as new with its exact state, so nothing is lost
 * or renumbered by it. The carried state is within its byte capacity, so under the payload limit;
 * while a continue-as-new is overdue the update validators refuse new work (see `busyReason`).
 */
export async function inboxWorkflow(input: InboxInput = {}): Promise<never> {
  const parsed = input.carried === undefined ? undefined : NotificationStateSchema.safeParse(input.carried);
  if (parsed && !parsed.success) {
    throw ApplicationFailure.create({
      type: 'InvalidInboxState',
      message: `Invalid carried inbox state: ${formatZodIssues(parsed.error)}`,
      nonRetryable: true,
    });
  }
  const carried = parsed?.data;
  let box: NotificationBox;
  const metrics = new InboxMetrics();
  try {
    box = new NotificationBox(carried, {
      ...(input.maxNotifications !== undefined ? { max: input.maxNotifications } : {}),
      ...(input.maxBytes !== undefined ? { maxBytes: input.maxBytes } : {}),
      onChange: (state) => metrics.changed(state.notifications.length, unreadCount(state)),
    });
  } catch (err) {
    // A plain error would retry the workflow task forever; bad input fails the run, saying why.
    throw ApplicationFailure.create({
      type: 'InvalidInboxInput',
      message: `Invalid inbox input: ${(err as Error).message}`,
      nonRetryable: true,
    });
  }
  box.registerHandlers();
  const limit = input.continueAsNewAfter ?? DEFAULT_CONTINUE_AS_NEW_AFTER;
  await condition(() => historyFull() || box.handled >= limit);
  await condition(allHandlersFinished);
  return continueAsNew<typeof inboxWorkflow>({ ...input, carried: box.snapshot() });
}
