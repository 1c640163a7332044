/**
 * The one route a notification takes to a workflow, whoever raises it: the `notify` update to an
 * agent run, update-with-start to an inbox. The implementation lives with the client
 * (client/deliver.ts); activities receive it from the worker that creates them.
 */
import type { NotifyResult } from './messages';
import type { NotificationInput } from './schema';

/** Input of a delivery: where to, and what. */
export interface DeliverNotificationInput {
  /** Workflow ids: agent runs, or `inbox:<user>` (created on first delivery). */
  targets: string[];
  notification: NotificationInput;
}

/**
 * Delivers one notification to every target, answering where each stored it. `signal` ends the
 * wait: an activity passes its cancellation, so a worker shutting down is not held by an update
 * that only a workflow task (perhaps of that very worker) could answer.
 */
export type NotificationDelivery = (
  input: DeliverNotificationInput,
  opts?: { signal?: AbortSignal },
) => Promise<NotifyResult[]>;
