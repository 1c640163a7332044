/**
 * What the chaos script checks after the storm, each against the real system that holds it: rows in
 * PostgreSQL, mail in Dovecot (by Message-ID), notifications through the `notifications` query, and
 * every workflow history on the server.
 */
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type pg from 'pg';
import { deterministicMessageId } from '../../activities/email/send';
import { notificationIdFor } from '../../activities/notifications';
import type { History } from '../../client/debug/history';
import { WRITE_RECORD_TABLE } from '../../activities/sql/write-record';
import { notificationsQuery } from '../../shared/notifications/messages';
import { AGENT, USER, imapAs } from '../../testkit/mail';
import { historyBytes, workflowTaskFailures } from '../../testkit/history';
import { MAIL_CALL, WRITE_CALLS } from './jobs';

/** Copies of side effects that must happen exactly once. */
export interface EffectCount {
  /** Effects that must exist exactly once (of finished jobs). */
  expected: number;
  exactlyOnce: number;
  duplicates: number;
  missing: number;
}

/** A job as the checks see it. */
export interface CheckedJob {
  workflowId: string;
  /** The run completed with an answer, so every tool call of it ran. */
  finished: boolean;
  /** What the answer says `send_email` returned. */
  mail?: 'sent' | 'unknown' | 'failed';
}

/** Rows of the jobs' `effects` table per write call, and the tool's write records. */
export async function checkSqlRows(
  db: pg.Client,
  schema: string,
  jobs: CheckedJob[],
): Promise<EffectCount & { writeRecords: number; rows: number }> {
  const rows = await db.query<{ run_id: string; call_id: string; n: string }>(
    `SELECT run_id, call_id, count(*) AS n FROM ${schema}.effects GROUP BY 1, 2`,
  );
  const copies = new Map(rows.rows.map((r) => [`${r.run_id}\n${r.call_id}`, Number(r.n)]));
  const out = { expected: 0, exactlyOnce: 0, duplicates: 0, missing: 0, writeRecords: 0, rows: 0 };
  for (const job of jobs) {
    for (const call of WRITE_CALLS) {
      const n = copies.get(`${job.workflowId}\n${call}`) ?? 0;
      if (n > 1) out.duplicates += n - 1;
      if (!job.finished) continue;
      out.expected += 1;
      if (n === 1) out.exactlyOnce += 1;
      if (n === 0) out.missing += 1;
    }
  }
  out.rows = [...copies.values()].reduce((a, b) => a + b, 0);
  const records = await db
    .query<{ n: string }>(`SELECT count(*) AS n FROM ${schema}.${WRITE_RECORD_TABLE}`)
    .catch(() => ({ rows: [{ n: '0' }] }));
  out.writeRecords = Number(records.rows[0]?.n ?? 0);
  return out;
}

/** Copies of each Message-ID in the recipient's INBOX among mails whose subject holds `needle`. */
async function messageIdCounts(needle: string): Promise<Map<string, number>> {
  const c = imapAs(USER);
  await c.connect();
  try {
    const lock = await c.getMailboxLock('INBOX', { readOnly: true });
    try {
      const out = new Map<string, number>();
      const uids = await c.search({ subject: needle }, { uid: true });
      if (uids && uids.length) {
        for await (const m of c.fetch(uids, { uid: true, envelope: true }, { uid: true })) {
          const id = m.envelope?.messageId ?? '';
          out.set(id, (out.get(id) ?? 0) + 1);
        }
      }
      return out;
    } finally {
      lock.release();
    }
  } finally {
    await c.logout();
  }
}

/**
 * Mail of the jobs, by the Message-ID `send_email` derives from the run and tool call. A send the
 * tool reported as "delivery unknown" (a worker died between handing it to SMTP and recording the
 * answer; the tool then refuses to risk a second copy) may be there once or not at all: counted apart.
 */
export async function checkMail(
  subjectNeedle: string,
  jobs: CheckedJob[],
): Promise<EffectCount & { deliveryUnknown: number; deliveryUnknownArrived: number }> {
  // Delivery into Dovecot lags SMTP acceptance by tens of milliseconds.
  await new Promise((r) => setTimeout(r, 2000));
  const counts = await messageIdCounts(subjectNeedle);
  const out = {
    expected: 0,
    exactlyOnce: 0,
    duplicates: 0,
    missing: 0,
    deliveryUnknown: 0,
    deliveryUnknownArrived: 0,
  };
  for (const job of jobs) {
    const n = counts.get(deterministicMessageId(job.workflowId, MAIL_CALL, AGENT.address)) ?? 0;
    if (n > 1) out.duplicates += n - 1;
    if (!job.finished) continue;
    if (job.mail === 'unknown') {
      out.deliveryUnknown += 1;
      if (n === 1) out.deliveryUnknownArrived += 1;
      continue;
    }
    out.expected += 1;
    if (n === 1) out.exactlyOnce += 1;
    if (n === 0) out.missing += 1;
  }
  return out;
}

/** How the notifications sent to one target were kept. */
export interface NotificationAccount {
  target: string;
  /** Notifications the target accepted (flood signals the server took, notify_user calls that completed). */
  accepted: number;
  /** … of them still in the list. */
  kept: number;
  /** The target's count of notifications evicted by its capacity rule (oldest first). */
  evicted: number;
  /** Accepted, not kept, and not covered by the eviction count, or missing while newer ones stayed. */
  lost: number;
  /** Created more often than accepted. */
  duplicates: number;
  /** Items in the list nobody here sent and the workflow did not raise itself. */
  others: number;
  /** Of the ids that may or may not have arrived (a `notify_user` call that failed for good), how many are kept. */
  maybeKept?: number;
  /** Why the list could not be read in full, if so. */
  problem?: string;
  /** With losses: of the accepted ids neither kept nor evicted, how many ever reached its history. */
  lostTrace?: { gone: number; inHistory: number };
}

/**
 * Accounts for every notification `accepted` by `target`. Eviction removes the oldest first, so of
 * `ordered` (ids one producer sent one after another) the kept ones must be the newest: an older one
 * kept while a newer one is gone means the newer one was lost, whatever the eviction count says.
 * `raised` are ids the workflows raise themselves (an approval request), each listed as often as it
 * may be created: the eviction count covers them too, so a raised one that is gone is neither a lost
 * nor an extra copy of an accepted one. (An approval request is updated in place when decided, or
 * created again if a flood evicted it meanwhile: list its id twice.) `maybe` are ids that may have
 * arrived once or not at all (a `notify_user` call that failed for good may have reached one of its
 * targets before it gave up): neither lost nor counted as a copy when gone.
 */
export async function accountNotifications(
  client: Client,
  target: string,
  accepted: string[],
  ordered: string[] = [],
  raised: string[] = [],
  maybe: string[] = [],
): Promise<NotificationAccount> {
  const out: NotificationAccount = {
    target,
    accepted: accepted.length,
    kept: 0,
    evicted: 0,
    lost: 0,
    duplicates: 0,
    others: 0,
  };
  let list: NotificationList;
  try {
    list = await client.workflow.getHandle(target).query(notificationsQuery);
  } catch (err) {
    return {
      ...out,
      lost: accepted.length,
      problem: `query failed: ${(err as Error).message.slice(0, 200)}`,
    };
  }
  const account = accountList(out, list, accepted, ordered, raised, maybe);
  if (account.lost > 0) {
    // Which side is wrong: a gone id that never reached the target's history was never delivered
    // there (a producer's error); one that did was dropped by the target.
    const kept = new Set(list.notifications.map((n) => n.id));
    const gone = accepted.filter((id) => !kept.has(id));
    const seen = await idsInHistory(client, target, gone);
    account.lostTrace = { gone: gone.length, inHistory: seen };
  }
  return account;
}

/** How many of `ids` appear in any payload of any run of `workflowId` (signals, update requests). */
async function idsInHistory(client: Client, workflowId: string, ids: string[]): Promise<number> {
  const found = new Set<string>();
  for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    const history: History = await client.workflow.getHandle(workflowId, run.runId).fetchHistory();
    for (const e of history.events ?? []) {
      const payloads = [
        ...(e.workflowExecutionSignaledEventAttributes?.input?.payloads ?? []),
        ...(e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.args?.payloads ?? []),
      ];
      for (const p of payloads) {
        const text = Buffer.from(p.data ?? []).toString();
        for (const id of ids) if (text.includes(id)) found.add(id);
      }
    }
  }
  return found.size;
}

/** What the `notifications` query answered, as far as the accounting reads it. */
export interface NotificationList {
  notifications: readonly { id: string }[];
  count: number;
  evicted: number;
}

/** The accounting of {@link accountNotifications} on a list already read (pure, for tests). */
export function accountList(
  base: NotificationAccount,
  list: NotificationList,
  accepted: string[],
  ordered: string[] = [],
  raised: string[] = [],
  maybe: string[] = [],
): NotificationAccount {
  const out = { ...base };
  const kept = new Set(list.notifications.map((n) => n.id));
  const sent = new Set(accepted);
  const own = new Set(raised.filter((id) => !sent.has(id)));
  const unsure = new Set(maybe.filter((id) => !sent.has(id) && !own.has(id)));
  out.kept = accepted.filter((id) => kept.has(id)).length;
  out.evicted = list.evicted;
  out.others = [...kept].filter((id) => !sent.has(id) && !own.has(id) && !unsure.has(id)).length;
  if (unsure.size) out.maybeKept = [...unsure].filter((id) => kept.has(id)).length;
  if (list.notifications.length < list.count) {
    out.problem = `the query returned ${list.notifications.length} of ${list.count} notifications`;
  }
  const gone = accepted.length - out.kept;
  // Of the eviction count, what the workflow's own notifications took is not there for accepted ones.
  const ownGone = [...own].filter((id) => !kept.has(id)).length;
  const firstKept = ordered.findIndex((id) => kept.has(id));
  const goneAfterKept = firstKept < 0 ? 0 : ordered.slice(firstKept).filter((id) => !kept.has(id)).length;
  out.lost = Math.max(0, gone - (list.evicted - ownGone), goneAfterKept);
  // Every item the list ever created is kept or evicted; more than the distinct ids (own ones as
  // often as they may be created, and the unsure ones that are gone: they may have been evicted)
  // is a copy. (For the lost count above, unsure ones are taken to have never arrived: the lenient
  // side there; a loss they hide would still show as a newer accepted one gone while older stayed.)
  const ownCreations = raised.filter((id) => own.has(id)).length;
  const unsureGone = [...unsure].filter((id) => !kept.has(id)).length;
  const others = new Set([...accepted, ...kept].filter((id) => !own.has(id))).size;
  out.duplicates = Math.max(0, kept.size + list.evicted - others - ownCreations - unsureGone);
  return out;
}

/** How a run's `notify_user` calls ended, as its histories (each run of its chain) record them. */
export interface NotifyOutcomes {
  /** Ids of notifications the tool delivered (to the run and, when configured, the user's inbox). */
  delivered: string[];
  /** Calls whose activity failed for good: not delivered everywhere, and the agent was told so. */
  failed: number;
  /** The ids those calls would have stored: each may have reached some of its targets, or none. */
  undelivered: string[];
}

/**
 * Reads, from the run's histories, the id each `notify_user` call delivered: the ground truth of
 * what a target accepted from the tool, whether the run finished or not.
 */
export async function notifyOutcomes(client: Client, workflowId: string): Promise<NotifyOutcomes> {
  const out: NotifyOutcomes = { delivered: [], failed: 0, undelivered: [] };
  for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    const history: History = await client.workflow.getHandle(workflowId, run.runId).fetchHistory();
    /** Scheduled notify_user calls by event id, with the id the call stores. */
    const notifyCalls = new Map<string, string>();
    for (const e of history.events ?? []) {
      const scheduled = e.activityTaskScheduledEventAttributes;
      if (scheduled?.activityType?.name === 'notify_user') {
        const payload = scheduled.input?.payloads?.[0];
        const input = payload
          ? defaultPayloadConverter.fromPayload<{ args?: { id?: unknown }; toolCallId?: string }>(payload)
          : {};
        const id =
          typeof input.args?.id === 'string'
            ? input.args.id
            : notificationIdFor(workflowId, String(input.toolCallId ?? ''));
        notifyCalls.set(String(e.eventId), id);
      }
      const done = e.activityTaskCompletedEventAttributes;
      if (done && notifyCalls.has(String(done.scheduledEventId))) {
        const payload = done.result?.payloads?.[0];
        const result = payload
          ? defaultPayloadConverter.fromPayload<{ data?: { id?: string } }>(payload)
          : {};
        if (result.data?.id) out.delivered.push(result.data.id);
      }
      const failed = e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes;
      if (failed && notifyCalls.has(String(failed.scheduledEventId))) {
        out.failed += 1;
        out.undelivered.push(notifyCalls.get(String(failed.scheduledEventId)) as string);
      }
    }
  }
  return out;
}

/** Every execution on the server (each run of a continue-as-new chain), as the histories tell. */
export interface HistoryCensus {
  executions: number;
  byStatus: Record<string, number>;
  workflowTaskFailures: Record<string, number>;
  /**
   * Tasks the server itself ended so the workflow sees new signals or updates first, then retried
   * at once: it refuses to close a run while new ones arrive (UNHANDLED_COMMAND), and it ends a
   * task early when too many queue behind it (FORCE_CLOSE_COMMAND). No failure of the workflow.
   */
  serverRetries: Record<string, number>;
  largestHistoryBytes: number;
  totalHistoryBytes: number;
}

const SERVER_RETRY_CAUSES: readonly string[] = [
  'WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND',
  'WORKFLOW_TASK_FAILED_CAUSE_FORCE_CLOSE_COMMAND',
];

/** Reads every workflow history on the (script's own) server. */
export async function historyCensus(client: Client): Promise<HistoryCensus> {
  const census: HistoryCensus = {
    executions: 0,
    byStatus: {},
    workflowTaskFailures: {},
    serverRetries: {},
    largestHistoryBytes: 0,
    totalHistoryBytes: 0,
  };
  for await (const wf of client.workflow.list()) {
    census.executions += 1;
    census.byStatus[wf.status.name] = (census.byStatus[wf.status.name] ?? 0) + 1;
    const history: History = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
    for (const [cause, n] of Object.entries(workflowTaskFailures([history]))) {
      const into = SERVER_RETRY_CAUSES.includes(cause) ? census.serverRetries : census.workflowTaskFailures;
      into[cause] = (into[cause] ?? 0) + n;
    }
    const bytes = historyBytes(history);
    census.totalHistoryBytes += bytes;
    census.largestHistoryBytes = Math.max(census.largestHistoryBytes, bytes);
  }
  return census;
}
