import { log, setHandler, uuid4 } from '@temporalio/workflow';
import {
  clearNotificationsSignal,
  markReadSignal,
  notificationsQuery,
  notificationsSinceQuery,
  notifySignal,
  unreadCountQuery,
} from '../shared/notifications/messages';
import type { MarkReadInput, ValidNotificationInput } from '../shared/notifications/schema';
import {
  API_NOTIFICATION_DEFAULTS,
  MarkReadInputSchema,
  validateNotificationInput,
} from '../shared/notifications/schema';
import type { NotificationState } from '../shared/notifications/state';
import {
  add,
  clear,
  createNotificationState,
  history,
  markRead,
  since,
  unreadCount,
} from '../shared/notifications/state';

/**
 * A workflow's notifications: the state, and the signal and query handlers of the public contract.
 * Shared by agent runs and inboxes. Changes come only through signals (or the owning workflow);
 * reads only through queries.
 */
export class NotificationBox {
  private state: NotificationState;
  /** Signals refused for bad payloads, counted so a producer bug is visible in logs. */
  rejected = 0;
  /** Signals handled by this run, valid or not. */
  handled = 0;

  constructor(carried?: NotificationState, max?: number) {
    this.state = carried ?? createNotificationState({ guid: uuid4(), ...(max ? { max } : {}) });
  }

  /** The state to carry over continue-as-new. */
  snapshot(): NotificationState {
    return this.state;
  }

  /**
   * Adds (or updates in place) a notification. A bad payload is logged and dropped: a signal cannot
   * answer, and throwing here would fail the workflow task, so producers validate before sending.
   */
  notify(raw: unknown): boolean {
    const valid = validateNotificationInput(raw, API_NOTIFICATION_DEFAULTS);
    if (!valid.ok) {
      this.rejected += 1;
      log.warn('notify signal rejected', { error: valid.error });
      return false;
    }
    this.add(valid.value);
    return true;
  }

  /** Adds a notification the owning workflow raised itself (e.g. an approval timeout). */
  add(input: ValidNotificationInput): void {
    this.state = add(this.state, input, { now: new Date().toISOString(), newId: uuid4 }).state;
  }

  registerHandlers(): void {
    setHandler(notifySignal, (input) => {
      this.handled += 1;
      this.notify(input);
    });
    setHandler(markReadSignal, (input: MarkReadInput) => {
      this.handled += 1;
      const parsed = MarkReadInputSchema.safeParse(input);
      if (!parsed.success) {
        this.rejected += 1;
        log.warn('markRead signal rejected', { error: parsed.error.issues.map((i) => i.message).join('; ') });
        return;
      }
      this.state = markRead(this.state, parsed.data).state;
    });
    setHandler(clearNotificationsSignal, () => {
      this.handled += 1;
      this.state = clear(this.state, { newId: uuid4 });
    });
    setHandler(notificationsQuery, () => history(this.state));
    setHandler(unreadCountQuery, () => unreadCount(this.state));
    setHandler(notificationsSinceQuery, (args) => {
      const updateNo = typeof args?.updateNo === 'number' && args.updateNo >= 0 ? args.updateNo : 0;
      return since(this.state, updateNo, typeof args?.guid === 'string' ? args.guid : undefined);
    });
  }
}
