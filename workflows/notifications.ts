import { ApplicationFailure, log, patched, setHandler, uuid4, workflowInfo } from '@temporalio/workflow';
import { SIZE_BUDGETS, formatBytes, jsonBytes } from '../shared/temporal-limits';
import {
  clearNotificationsSignal,
  clearNotificationsUpdate,
  markReadSignal,
  markReadUpdate,
  notificationsQuery,
  notificationsSinceQuery,
  notifySignal,
  notifyUpdate,
  unreadCountQuery,
} from '../shared/notifications/messages';
import type { NotifyResult } from '../shared/notifications/messages';
import type { MarkReadInput, ValidNotificationInput } from '../shared/notifications/schema';
import {
  API_NOTIFICATION_DEFAULTS,
  MarkReadInputSchema,
  validateNotificationInput,
} from '../shared/notifications/schema';
import type { NotificationState } from '../shared/notifications/state';
import { add, clear, createNotificationState, currentUpdate, markRead } from '../shared/notifications/state';
import { page, since, unreadCount } from '../shared/notifications/reads';
import { NotificationSizes } from '../shared/notifications/sizes';

/** Options of a {@link NotificationBox}: its new state's capacity (ignored when a state is carried over). */
export interface NotificationBoxOptions {
  max?: number;
  maxBytes?: number;
  /** Called after each change of the state (an inbox records its size). */
  onChange?: (state: NotificationState) => void;
}

/**
 * Why the workflow refuses new updates now, or undefined: its history is past the high-water mark
 * (continue-as-new is overdue, e.g. under a flood). A refused update never enters history, so a
 * flood delays the workflow but cannot push it to the server's history limits.
 */
export function busyReason(): string | undefined {
  const { historySize, historyLength } = workflowInfo();
  if (
    historySize < SIZE_BUDGETS.refuseUpdatesHistoryBytes &&
    historyLength < SIZE_BUDGETS.refuseUpdatesHistoryEvents
  ) {
    return undefined;
  }
  return (
    `Busy: this workflow's history (${formatBytes(historySize)}, ${historyLength} events) is past ` +
    `its high-water mark until it continues as new; retry in a few seconds`
  );
}

/**
 * Marks runs that take at most `SIZE_BUDGETS.notifySignal*PerRun` of raw `notify` signals and drop (and
 * count) the rest; runs recorded before it took every signal and replay that way.
 */
export const SIGNAL_BUDGET_PATCH = 'notify-signal-budget';

/** The error a validator throws: the caller gets `message`; nothing enters history. */
function refuse(type: 'InvalidNotification' | 'InvalidMarkRead' | 'Busy', message: string): never {
  throw ApplicationFailure.create({ type, message, nonRetryable: true });
}

/**
 * A workflow's notifications: the state, and the update, signal and query handlers of the public
 * contract. Shared by agent runs and inboxes. Changes come only through updates, signals (or the
 * owning workflow); reads only through queries.
 */
export class NotificationBox {
  private state: NotificationState;
  /** Signals dropped for bad payloads, counted so a producer bug is visible in logs. */
  rejected = 0;
  /** Signals and updates handled by this run, valid or not. */
  handled = 0;
  /** `notify` signals this run took (valid or not) and their bytes, against the per-run budget. */
  private signalsTaken = 0;
  private signalBytesTaken = 0;
  /** `notify` signals dropped unread because this run's signal budget was used up. */
  droppedSignals = 0;
  private readonly sizes = new NotificationSizes();
  private readonly onChange: ((state: NotificationState) => void) | undefined;

  constructor(carried?: NotificationState, options: NotificationBoxOptions = {}) {
    this.onChange = options.onChange;
    this.state =
      carried ??
      createNotificationState({
        guid: uuid4(),
        ...(options.max ? { max: options.max } : {}),
        ...(options.maxBytes ? { maxBytes: options.maxBytes } : {}),
      });
  }

  /** The state to carry over continue-as-new (within its byte capacity, so under the payload limit). */
  snapshot(): NotificationState {
    return this.state;
  }

  /**
   * Adds (or updates in place) a notification from a signal. A bad payload is dropped and logged
   * by the fields at fault only, never the value (it may be huge, or private): a signal cannot
   * answer, and throwing here would fail the workflow task.
   */
  notify(raw: unknown): boolean {
    if (this.overSignalBudget()) {
      // Not even validated: a dropped signal costs nothing but its count. Its value is never logged.
      this.droppedSignals += 1;
      if (this.droppedSignals === 1 || this.droppedSignals % 100 === 0) {
        log.warn('notify signals dropped: this run took its budget of signals; use the notify update', {
          dropped: this.droppedSignals,
          taken: this.signalsTaken,
          takenBytes: this.signalBytesTaken,
        });
      }
      return false;
    }
    this.signalsTaken += 1;
    const valid = validateNotificationInput(raw, API_NOTIFICATION_DEFAULTS);
    if (!valid.ok) {
      this.rejected += 1;
      log.warn('notify signal dropped: invalid notification', {
        fields: valid.fields,
        rejected: this.rejected,
      });
      return false;
    }
    this.signalBytesTaken += jsonBytes(valid.value);
    this.add(valid.value);
    return true;
  }

  /** Whether this run took as many `notify` signals as it may (see SIGNAL_BUDGET_PATCH). */
  private overSignalBudget(): boolean {
    if (
      this.signalsTaken < SIZE_BUDGETS.notifySignalsPerRun &&
      this.signalBytesTaken < SIZE_BUDGETS.notifySignalBytesPerRun
    ) {
      return false;
    }
    // Asked only here, where the two behaviours part, so runs that never meet the budget add no marker.
    return patched(SIGNAL_BUDGET_PATCH);
  }

  /** Adds a notification the owning workflow raised itself (e.g. an approval timeout). */
  add(input: ValidNotificationInput): NotifyResult {
    const result = add(this.state, input, {
      now: new Date().toISOString(),
      newId: uuid4,
      sizes: this.sizes,
    });
    this.changed(result.state);
    return {
      id: result.notification.id,
      no: result.notification.no,
      created: result.created,
      update: currentUpdate(this.state),
      guid: this.state.guid,
      count: this.state.notifications.length,
      evicted: this.state.evicted,
    };
  }

  private changed(state: NotificationState): void {
    this.state = state;
    this.onChange?.(state);
  }

  private markRead(input: MarkReadInput): string[] {
    const result = markRead(this.state, input);
    this.changed(result.state);
    return result.marked;
  }

  registerHandlers(): void {
    setHandler(notifySignal, (input) => {
      this.handled += 1;
      this.notify(input);
    });
    setHandler(
      notifyUpdate,
      (input) => {
        this.handled += 1;
        // Validators do not run on replay, so the handler validates again (pure, deterministic).
        const valid = validateNotificationInput(input, API_NOTIFICATION_DEFAULTS);
        if (!valid.ok) return refuse('InvalidNotification', valid.error);
        return this.add(valid.value);
      },
      {
        validator: (input) => {
          const busy = busyReason();
          if (busy) refuse('Busy', busy);
          const valid = validateNotificationInput(input, API_NOTIFICATION_DEFAULTS);
          if (!valid.ok) refuse('InvalidNotification', valid.error);
        },
      },
    );
    setHandler(markReadSignal, (input: MarkReadInput) => {
      this.handled += 1;
      const parsed = MarkReadInputSchema.safeParse(input);
      if (!parsed.success) {
        this.rejected += 1;
        log.warn('markRead signal dropped: invalid input', {
          fields: parsed.error.issues.map((i) => i.path.join('.') || '(input)'),
        });
        return;
      }
      this.markRead(parsed.data);
    });
    setHandler(
      markReadUpdate,
      (input) => {
        this.handled += 1;
        const parsed = MarkReadInputSchema.safeParse(input);
        if (!parsed.success)
          return refuse('InvalidMarkRead', parsed.error.issues.map((i) => i.message).join('; '));
        const present = new Set(this.state.notifications.map((n) => n.id));
        const unknown = (parsed.data.ids ?? []).filter((id) => !present.has(id));
        const marked = this.markRead(parsed.data);
        return {
          marked,
          ...(unknown.length > 0 ? { unknown } : {}),
          unread: unreadCount(this.state),
          update: currentUpdate(this.state),
          guid: this.state.guid,
        };
      },
      {
        validator: (input) => {
          const busy = busyReason();
          if (busy) refuse('Busy', busy);
          const parsed = MarkReadInputSchema.safeParse(input);
          if (!parsed.success)
            refuse('InvalidMarkRead', parsed.error.issues.map((i) => i.message).join('; '));
        },
      },
    );
    setHandler(clearNotificationsSignal, () => {
      this.handled += 1;
      this.changed(clear(this.state, { newId: uuid4 }));
    });
    setHandler(
      clearNotificationsUpdate,
      () => {
        this.handled += 1;
        const removed = this.state.notifications.length;
        this.changed(clear(this.state, { newId: uuid4 }));
        return { guid: this.state.guid, removed };
      },
      {
        validator: () => {
          const busy = busyReason();
          if (busy) refuse('Busy', busy);
        },
      },
    );
    setHandler(notificationsQuery, (input) => page(this.state, input ?? {}));
    setHandler(unreadCountQuery, () => unreadCount(this.state));
    setHandler(notificationsSinceQuery, (args) => {
      const updateNo = typeof args?.updateNo === 'number' && args.updateNo >= 0 ? args.updateNo : 0;
      return since(this.state, updateNo, typeof args?.guid === 'string' ? args.guid : undefined);
    });
  }
}
