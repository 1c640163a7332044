/**
 * The flood: maximum-size notifications sent at a fixed rate into inboxes and running agent runs,
 * through the door every producer uses (the `notify` update, update-with-start for inboxes, as the
 * CLI and HTTP API send it), or, as the hostile case, through raw `notify` signals (signal-with-start
 * for inboxes), which skip every validator and rate limit.
 *
 * Everything about how notifications are produced lives here, so a change of the notification door
 * (another path, other limits) is a change of this file only.
 */
import type { Client } from '@temporalio/client';
import {
  NotificationTargetError,
  prepareNotification,
  sendNotification,
} from '../../client/notification-client';
import { SIZE_BUDGETS, jsonBytes } from '../../shared/temporal-limits';
import {
  INBOX_WORKFLOW_TYPE,
  inboxUser,
  notificationsQuery,
  notifySignal,
} from '../../shared/notifications/messages';
import type { NotificationInput } from '../../shared/notifications/schema';
import { NOTIFICATION_LIMITS } from '../../shared/notifications/schema';

/** A three-byte UTF-8 character (CJK): the most bytes per accepted character. */
const WIDE = '通';

/**
 * The largest notification the project accepts: each text field as many three-byte characters as
 * both its character limit and its byte budget allow, the whole within the per-notification budget.
 */
export function maxSizeNotification(id: string, seq: number): NotificationInput {
  const fill = (chars: number, bytes: number, head: string) => {
    const n = Math.max(0, Math.min(chars, Math.floor(bytes / 3)) - head.length);
    return head + WIDE.repeat(n);
  };
  const head = `#${seq} `;
  const n: NotificationInput = {
    id,
    type: 'progress',
    priority: 10,
    title: fill(NOTIFICATION_LIMITS.title, SIZE_BUDGETS.notificationTitleBytes, head),
    message: fill(NOTIFICATION_LIMITS.message, SIZE_BUDGETS.notificationMessageBytes, head),
    detail: fill(NOTIFICATION_LIMITS.detail, SIZE_BUDGETS.notificationDetailBytes, head),
    group: 'chaos-flood',
  };
  // Field budgets add up to more than the whole may hold: shorten the detail until it fits.
  while (jsonBytes(n) > SIZE_BUDGETS.notificationBytes) n.detail = (n.detail ?? '').slice(0, -1024);
  return n;
}

/** Where flood notifications go: an inbox (`inbox:<user>`) or a running agent run. */
export interface FloodTarget {
  workflowId: string;
}

/** How flood notifications are sent: the `notify` update (what producers use) or raw signals. */
export type FloodDoor = 'update' | 'signal';

/** Errors of the update door after which the same notification is sent again (shortly). */
const RETRY_CODES: readonly string[] = ['busy', 'no_worker', 'unreachable'];

/** Settings of one flood. */
export interface FloodOptions {
  /** Default `update`. */
  door?: FloodDoor;
  /** Notifications per second, over all targets. */
  rate: number;
  seconds: number;
  /** Ids are `<idPrefix>-<n>`, unique per flood. */
  idPrefix: string;
  /** How long one notification is retried (e.g. across a server restart) before it counts as refused. */
  retryForMs?: number;
}

/** What a flood did. */
export interface FloodResult {
  /** Per target workflow id: ids the server accepted, in the order they were sent. */
  accepted: Map<string, string[]>;
  /** Notifications never accepted (the target was gone, or retries ran out), with the last error. */
  refused: { id: string; target: string; error: string }[];
  /** Sends that failed once and were sent again with the same id (an update in place if both landed). */
  retries: number;
  /** Encoded bytes of one notification. */
  notificationBytes: number;
  seconds: number;
}

/**
 * Sends `rate × seconds` maximum-size notifications round-robin to `targets`. Each target's sends
 * are sequential, so its accepted ids are in arrival order; a failed send is retried with the same
 * id (idempotent: an id that arrived already is updated in place, not added twice). `onAccepted`
 * gets the live map of accepted ids at the start.
 */
export async function flood(
  client: Client,
  taskQueue: string,
  targets: FloodTarget[],
  opts: FloodOptions,
  onAccepted?: (accepted: ReadonlyMap<string, readonly string[]>) => void,
): Promise<FloodResult> {
  const total = Math.round(opts.rate * opts.seconds);
  const retryForMs = opts.retryForMs ?? 180_000;
  const accepted = new Map<string, string[]>(targets.map((t) => [t.workflowId, []]));
  const refused: FloodResult['refused'] = [];
  let retries = 0;
  const chains = new Map<string, Promise<void>>(targets.map((t) => [t.workflowId, Promise.resolve()]));
  onAccepted?.(accepted);
  const started = Date.now();

  const door = opts.door ?? 'update';
  const send = async (target: string, n: NotificationInput) => {
    if (door === 'update') {
      const prepared = prepareNotification(n);
      if (!prepared.ok) throw new Error(prepared.error);
      await sendNotification(client, taskQueue, target, prepared.notification);
      return;
    }
    const user = inboxUser(target);
    if (user !== null) {
      await client.workflow.signalWithStart(INBOX_WORKFLOW_TYPE, {
        workflowId: target,
        taskQueue,
        args: [{}],
        signal: notifySignal,
        signalArgs: [n],
      });
    } else {
      await client.workflow.getHandle(target).signal(notifySignal, n);
    }
  };

  const deliver = async (target: string, n: NotificationInput) => {
    const giveUp = Date.now() + retryForMs;
    for (;;) {
      try {
        await send(target, n);
        accepted.get(target)?.push(n.id as string);
        return;
      } catch (err) {
        let inner = err as Error & { cause?: unknown; type?: string };
        while (inner.cause instanceof Error) inner = inner.cause;
        const message =
          inner === err
            ? (err as Error).message
            : `${(err as Error).message}: ${inner.type ? `${inner.type}: ` : ''}${inner.message}`;
        // The update door says which errors are worth a retry; for signals, all but a closed target.
        const gone =
          err instanceof NotificationTargetError
            ? !RETRY_CODES.includes(err.code)
            : /not found|already completed/i.test(message);
        if (gone || Date.now() > giveUp) {
          refused.push({ id: n.id as string, target, error: message.slice(0, 300) });
          return;
        }
        retries += 1;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };

  for (let i = 0; i < total; i += 1) {
    const due = started + (i * 1000) / opts.rate;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const target = (targets[i % targets.length] as FloodTarget).workflowId;
    const n = maxSizeNotification(`${opts.idPrefix}-${i}`, i);
    chains.set(
      target,
      (chains.get(target) as Promise<void>).then(() => deliver(target, n)),
    );
  }
  await Promise.all(chains.values());
  return {
    accepted,
    refused,
    retries,
    notificationBytes: jsonBytes(maxSizeNotification(`${opts.idPrefix}-0`, 0)),
    seconds: (Date.now() - started) / 1000,
  };
}

/** Answers of a target's `notifications` query while it was probed. */
export interface QueryProbe {
  ok: number;
  failed: number;
  /** Distinct failure messages (shortened), with counts. */
  errors: Map<string, number>;
}

/**
 * Queries `notifications` of `workflowId` every `everyMs` until `done` resolves, from the moment
 * `exists()` says the target was created.
 */
export async function probeNotificationsQuery(
  client: Client,
  workflowId: string,
  everyMs: number,
  exists: () => boolean,
  done: Promise<unknown>,
): Promise<QueryProbe> {
  const probe: QueryProbe = { ok: 0, failed: 0, errors: new Map() };
  let finished = false;
  void done.finally(() => (finished = true));
  while (!finished) {
    if (!exists()) {
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    try {
      await client.workflow.getHandle(workflowId).query(notificationsQuery);
      probe.ok += 1;
    } catch (err) {
      probe.failed += 1;
      const key = (err as Error).message.slice(0, 120);
      probe.errors.set(key, (probe.errors.get(key) ?? 0) + 1);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return probe;
}
