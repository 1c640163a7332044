/**
 * One chaos run: agent jobs with real side effects on the script's own dev server and worker
 * processes, while workers are SIGKILLed at seeded moments, the server restarts once and a flood
 * of maximum-size notifications hits an inbox and the runs; then every side effect is counted.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { closeEmailConnections } from '../../activities/email';
import type { AgentResult } from '../../shared/agent';
import { approveToolCallUpdate } from '../../shared/agent';
import { inboxWorkflowId } from '../../shared/notifications/messages';
import type { CheckedJob, EffectCount, HistoryCensus, NotificationAccount } from './checks';
import { accountNotifications, checkMail, checkSqlRows, historyCensus, notifyOutcomes } from './checks';
import { ChaosCluster } from './cluster';
import type { FloodDoor, FloodResult, QueryProbe } from './flood';
import { flood, probeNotificationsQuery } from './flood';
import type { JobSpec } from './jobs';
import { GATE_CALL, LARGE_RESULT_CHARS, answerParts, jobInput, mailSubject, prepareJobSystems } from './jobs';

/** Settings of a chaos run. */
export interface ChaosOptions {
  runs: number;
  kills: number;
  /** Flood notifications per second (0: no flood). */
  floodRate: number;
  floodSeconds: number;
  /** How the flood is sent: `update` (what producers use; default) or raw `signal`s (hostile). */
  floodDoor?: FloodDoor;
  seed: number;
  serverRestart: boolean;
  /** Worker processes (default 2). */
  workers?: number;
  /** Seconds over which job starts, kills and the restart are spread (default from the counts). */
  windowSeconds?: number;
  /** Seconds to wait for the runs after the window before calling the rest stuck (default 240). */
  settleSeconds?: number;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

/** What a chaos run found. */
export interface ChaosReport {
  options: Required<Omit<ChaosOptions, 'log'>>;
  wallSeconds: number;
  runs: { finished: number; lost: number; stuck: number; lostDetail: string[] };
  chaos: { kills: number; serverRestarts: number; unexpectedWorkerExits: number };
  histories: HistoryCensus;
  sql: EffectCount & { writeRecords: number; rows: number };
  mail: EffectCount & { deliveryUnknown: number; deliveryUnknownArrived: number };
  largeResults: { expected: number; whole: number };
  notifications: {
    targets: NotificationAccount[];
    accepted: number;
    kept: number;
    evicted: number;
    lost: number;
    duplicates: number;
    /** notify_user calls whose delivery failed for good (the agent was told; nothing to account). */
    toolFailures: number;
  };
  flood:
    (Omit<FloodResult, 'accepted'> & { sent: number; accepted: number; inboxQueries: QueryProbe }) | null;
  workerErrors: string[];
  /** Gated jobs whose held call could not be approved after the flood (the run would not take it). */
  approvalsFailed: string[];
}

/**
 * Planned seconds between kills by default: a replacement worker takes 5-20 s to poll on a busy
 * machine, and a kill waits for its slot's worker to poll, so closer kills would only queue up
 * after the jobs are done.
 */
const KILL_SPACING_SECONDS = 12;

/** A small seeded generator (mulberry32), so a seed replays the same plan. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** Runs the chaos script with `options` and returns what it counted; never throws for a finding. */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const log = options.log ?? (() => undefined);
  const workers = options.workers ?? 2;
  const flooding = options.floodRate > 0 && options.floodSeconds > 0;
  const windowSeconds =
    options.windowSeconds ??
    Math.max(20, options.kills * KILL_SPACING_SECONDS + (flooding ? options.floodSeconds : 0) + 5);
  const opts = {
    workers,
    windowSeconds,
    settleSeconds: options.settleSeconds ?? 240,
    floodDoor: options.floodDoor ?? 'update',
    ...options,
  };
  delete (opts as ChaosOptions).log;
  const random = seeded(options.seed);
  const token = `${options.seed}-${randomUUID().slice(0, 8)}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chaos-'));
  const taskQueue = `chaos-${token}`;
  const agentsInbox = `chaos-agents-${token}`;
  // Two flooded inboxes: each target's sends are sequential (so their order is known), which bounds
  // the rate one target takes on a busy machine.
  const floodInboxes = [1, 2].map((n) => inboxWorkflowId(`chaos-flood-${n}-${token}`));
  const [floodInbox] = floodInboxes as [string];

  // The plan, all from the seed: gated jobs (held open for the flood) start first.
  const gatedCount = flooding ? Math.max(1, Math.round(options.runs / 10)) : 0;
  const jobs: (JobSpec & { startAt: number })[] = Array.from({ length: options.runs }, (_, index) => ({
    index,
    workflowId: `chaos-${token}-job-${index}`,
    waitSeconds: 1 + Math.floor(random() * 3),
    gated: index < gatedCount,
    startAt: index < gatedCount ? 0 : random() * 0.8 * windowSeconds,
  }));
  const events: { at: number; what: 'kill' | 'restart'; slot: number }[] = [];
  for (let i = 0; i < options.kills; i += 1)
    events.push({
      at: 2 + random() * (windowSeconds - 2),
      what: 'kill',
      slot: Math.floor(random() * workers),
    });
  if (options.serverRestart)
    events.push({ at: windowSeconds * (0.3 + random() * 0.4), what: 'restart', slot: 0 });
  events.sort((a, b) => a.at - b.at);
  const floodAt = flooding ? 1 + random() * Math.max(0, windowSeconds - options.floodSeconds - 1) : 0;

  const systems = await prepareJobSystems(dir);
  const cluster = await ChaosCluster.start(path.join(dir, 'temporal'), workers, {
    DURABLE_AGENT_TASK_QUEUE: taskQueue,
    ...systems.workerEnv,
  });
  const client = cluster.client;
  const started = Date.now();
  const at = (seconds: number) => sleep(started + seconds * 1000 - Date.now());
  log(`server ${cluster.address}, ${workers} workers, window ${windowSeconds.toFixed(0)} s, token ${token}`);

  try {
    const handles = new Map<string, WorkflowHandle>();
    const starting = (async () => {
      for (const job of [...jobs].sort((a, b) => a.startAt - b.startAt)) {
        await at(job.startAt);
        for (;;) {
          try {
            handles.set(
              job.workflowId,
              await client.workflow.start('agentWorkflow', {
                taskQueue,
                workflowId: job.workflowId,
                args: [jobInput(job, token, agentsInbox)],
              }),
            );
            break;
          } catch (err) {
            // The server may be restarting; a start is idempotent by workflow id only if it did not land.
            if (/already started/i.test((err as Error).message)) {
              handles.set(job.workflowId, client.workflow.getHandle(job.workflowId));
              break;
            }
            await sleep(500);
          }
        }
      }
    })();

    const storm = (async () => {
      for (const e of events) {
        await at(e.at);
        if (e.what === 'kill') {
          log(`t=${((Date.now() - started) / 1000).toFixed(1)} s: SIGKILL worker ${e.slot}`);
          await cluster.killWorker(e.slot);
        } else {
          log(`t=${((Date.now() - started) / 1000).toFixed(1)} s: dev server restart`);
          await cluster.restartServer();
        }
      }
    })();

    let floodResult: FloodResult | null = null;
    const approvalsFailed: string[] = [];
    let inboxQueries: QueryProbe = { ok: 0, failed: 0, errors: new Map() };
    const flooded = (async () => {
      if (!flooding) return;
      await at(floodAt);
      log(`t=${((Date.now() - started) / 1000).toFixed(1)} s: flood starts`);
      const gated = jobs.filter((j) => j.gated).map((j) => ({ workflowId: j.workflowId }));
      let live: ReadonlyMap<string, readonly string[]> = new Map();
      const running = flood(
        client,
        taskQueue,
        [...floodInboxes.map((workflowId) => ({ workflowId })), ...gated],
        {
          rate: options.floodRate,
          seconds: options.floodSeconds,
          idPrefix: `flood-${token}`,
          door: opts.floodDoor,
        },
        (accepted) => (live = accepted),
      );
      [floodResult, inboxQueries] = await Promise.all([
        running,
        probeNotificationsQuery(client, floodInbox, 2000, () => !!live.get(floodInbox)?.length, running),
      ]);
      log(`t=${((Date.now() - started) / 1000).toFixed(1)} s: flood done`);
      // Now the gated jobs may go on.
      for (const refusal of await Promise.all(
        gated.map((g) => approve(client.workflow.getHandle(g.workflowId))),
      ))
        if (refusal) approvalsFailed.push(refusal);
    })();

    await Promise.all([starting, storm, flooded]);
    log(`t=${((Date.now() - started) / 1000).toFixed(1)} s: storm over, waiting for the runs`);

    // Runs finish, fail, or are stuck at the deadline.
    const deadline = Date.now() + opts.settleSeconds * 1000;
    const status = new Map<string, string>();
    let reported = Date.now();
    for (;;) {
      for (const job of jobs) {
        if (status.get(job.workflowId) && status.get(job.workflowId) !== 'RUNNING') continue;
        const d = await client.workflow
          .getHandle(job.workflowId)
          .describe()
          .catch(() => undefined);
        status.set(job.workflowId, d?.status.name ?? 'RUNNING');
      }
      const open = [...status.values()].filter((s) => s === 'RUNNING').length;
      if (open === 0 || Date.now() > deadline) break;
      if (Date.now() - reported > 15_000) {
        reported = Date.now();
        log(`t=${((Date.now() - started) / 1000).toFixed(1)} s: ${open} runs still open`);
      }
      await sleep(1000);
    }

    const checked: CheckedJob[] = [];
    const lostDetail: string[] = [];
    const large = { expected: 0, whole: 0 };
    for (const job of jobs) {
      const s = status.get(job.workflowId);
      let result: AgentResult | undefined;
      if (s === 'COMPLETED')
        result = (await client.workflow.getHandle(job.workflowId).result()) as AgentResult;
      const finished = result?.stopReason === 'final_answer';
      if (s !== 'RUNNING' && !finished)
        lostDetail.push(
          `${job.workflowId}: ${s} ${result ? result.stopReason : await failureOf(client, job.workflowId)}`,
        );
      const parts = answerParts(result?.answer ?? '');
      if (finished) {
        large.expected += 1;
        if (parts.b1.includes('A'.repeat(LARGE_RESULT_CHARS))) large.whole += 1;
      }
      checked.push({
        workflowId: job.workflowId,
        finished,
        mail: /NOT sent again/.test(parts.m1)
          ? 'unknown'
          : /^Email (already )?sent/.test(parts.m1)
            ? 'sent'
            : 'failed',
      });
    }

    log('counting side effects');
    const sql = await checkSqlRows(systems.db, systems.schema, checked);
    const mail = await checkMail(mailSubject(token, 0).replace(/ job 0$/, ''), checked);

    const accepted = (floodResult as FloodResult | null)?.accepted ?? new Map<string, string[]>();
    const accounts: NotificationAccount[] = [];
    // What each notify_user call delivered, from the runs' histories (finished or not): a call
    // whose delivery failed for good told the agent so, and was accepted by no one to account for.
    const agentIds: string[] = [];
    const undelivered: string[] = [];
    const raised: string[] = [];
    let toolFailures = 0;
    for (const job of jobs) {
      const outcome = await notifyOutcomes(client, job.workflowId);
      toolFailures += outcome.failed;
      agentIds.push(...outcome.delivered);
      undelivered.push(...outcome.undelivered);
      // A gated run raises its approval request itself: one item, updated in place when decided, or
      // created again then if the flood evicted it meanwhile.
      const approval = `approval:${job.workflowId}:${GATE_CALL}`;
      const own = job.gated ? [approval, approval] : [];
      raised.push(...own);
      const floodIds = accepted.get(job.workflowId) ?? [];
      if (outcome.delivered.length || outcome.undelivered.length || floodIds.length)
        accounts.push(
          await accountNotifications(
            client,
            job.workflowId,
            [...outcome.delivered, ...floodIds],
            floodIds,
            own,
            outcome.undelivered,
          ),
        );
    }
    if (agentIds.length || undelivered.length)
      accounts.push(
        await accountNotifications(client, inboxWorkflowId(agentsInbox), agentIds, [], raised, undelivered),
      );
    if (flooding) {
      for (const inbox of floodInboxes) {
        const ids = accepted.get(inbox) ?? [];
        accounts.push(await accountNotifications(client, inbox, ids, ids));
      }
    }
    const sum = (k: 'accepted' | 'kept' | 'evicted' | 'lost' | 'duplicates') =>
      accounts.reduce((a, t) => a + t[k], 0);

    const histories = await historyCensus(client);
    const f = floodResult as FloodResult | null;
    return {
      options: opts,
      wallSeconds: (Date.now() - started) / 1000,
      runs: {
        finished: checked.filter((j) => j.finished).length,
        lost: lostDetail.length,
        stuck: [...status.values()].filter((s) => s === 'RUNNING').length,
        lostDetail,
      },
      chaos: {
        kills: cluster.kills,
        serverRestarts: cluster.serverRestarts,
        unexpectedWorkerExits: cluster.unexpectedExits,
      },
      histories,
      sql,
      mail,
      largeResults: large,
      notifications: {
        targets: accounts,
        accepted: sum('accepted'),
        kept: sum('kept'),
        evicted: sum('evicted'),
        lost: sum('lost'),
        duplicates: sum('duplicates'),
        toolFailures,
      },
      flood: f
        ? {
            refused: f.refused,
            retries: f.retries,
            notificationBytes: f.notificationBytes,
            seconds: f.seconds,
            sent: Math.round(options.floodRate * options.floodSeconds),
            accepted: [...f.accepted.values()].reduce((a, ids) => a + ids.length, 0),
            inboxQueries,
          }
        : null,
      workerErrors: cluster.problems().slice(0, 20),
      approvalsFailed,
    };
  } finally {
    await cluster.stop().catch(() => undefined);
    closeEmailConnections();
    await systems.drop().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The innermost message of a closed run's failure. */
async function failureOf(client: Client, workflowId: string): Promise<string> {
  try {
    await client.workflow.getHandle(workflowId).result();
    return '';
  } catch (err) {
    let e = err as Error & { cause?: unknown };
    while (e.cause instanceof Error) e = e.cause;
    return e.message.slice(0, 300);
  }
}

/**
 * Approves the gated job's held tool call, retrying until the run has reached the approval.
 * Returns why it could not, or null.
 */
async function approve(handle: WorkflowHandle): Promise<string | null> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      await handle.executeUpdate(approveToolCallUpdate, { args: [{ toolCallId: GATE_CALL, approve: true }] });
      return null;
    } catch (err) {
      if (Date.now() > deadline) {
        let e = err as Error & { cause?: unknown };
        while (e.cause instanceof Error) e = e.cause;
        return `${handle.workflowId}: ${e.message.slice(0, 200)}`;
      }
      await sleep(1000);
    }
  }
}

/** The findings that make a chaos run fail: each is a count that must be zero. */
export function chaosFailures(r: ChaosReport): string[] {
  const out: string[] = [];
  const nonZero = (what: string, n: number) => n > 0 && out.push(`${what}: ${n}`);
  nonZero('runs lost', r.runs.lost);
  nonZero('runs stuck', r.runs.stuck);
  for (const [cause, n] of Object.entries(r.histories.workflowTaskFailures))
    nonZero(`workflow task failures ${cause}`, n);
  nonZero(
    'executions terminated or timed out',
    (r.histories.byStatus.TERMINATED ?? 0) + (r.histories.byStatus.TIMED_OUT ?? 0),
  );
  nonZero('SQL rows duplicated', r.sql.duplicates);
  nonZero('SQL rows missing', r.sql.missing);
  nonZero('mails duplicated', r.mail.duplicates);
  nonZero('mails missing', r.mail.missing);
  nonZero('large results not read back whole', r.largeResults.expected - r.largeResults.whole);
  nonZero('notifications lost', r.notifications.lost);
  nonZero('notifications duplicated', r.notifications.duplicates);
  const refused = r.flood?.refused ?? [];
  // The first refusal's error in the line itself: a red run then says why without the printout.
  if (refused.length)
    out.push(
      `flood notifications refused: ${refused.length} (first: ${refused[0]?.target} ${refused[0]?.id}: ${refused[0]?.error})`,
    );
  nonZero('approvals the run would not take', r.approvalsFailed.length);
  for (const t of r.notifications.targets) if (t.problem) out.push(`${t.target}: ${t.problem}`);
  return out;
}

const mb = (n: number) => `${(n / (1024 * 1024)).toFixed(1)} MB`;

/** The printout of a chaos run. */
export function formatReport(r: ChaosReport): string {
  const o = r.options;
  const f = r.flood;
  const failures = chaosFailures(r);
  const causes = Object.entries(r.histories.workflowTaskFailures);
  const lines = [
    `chaos: ${o.runs} runs, ${o.kills} kills, ${o.floodRate && o.floodSeconds ? `flood ${o.floodRate}/s for ${o.floodSeconds} s by ${o.floodDoor}` : 'no flood'}, seed ${o.seed}, ` +
      `server restart ${o.serverRestart ? 'yes' : 'no'}, ${o.workers} workers, window ${o.windowSeconds.toFixed(0)} s`,
    `runs: ${r.runs.finished} finished, ${r.runs.lost} lost, ${r.runs.stuck} stuck (${r.wallSeconds.toFixed(0)} s wall)`,
    `chaos done: ${r.chaos.kills} worker SIGKILLs, ${r.chaos.serverRestarts} server restart(s), ` +
      `${r.chaos.unexpectedWorkerExits} unexpected worker exits`,
    `workflow task failures: ${causes.length ? causes.map(([c, n]) => `${c} ${n}`).join(', ') : 'none'}; ` +
      `tasks the server retried to hand over new signals (no failure): ${
        Object.entries(r.histories.serverRetries)
          .map(([c, n]) => `${c.replace('WORKFLOW_TASK_FAILED_CAUSE_', '')} ${n}`)
          .join(', ') || 'none'
      }`,
    `executions: ${r.histories.executions} (${Object.entries(r.histories.byStatus)
      .map(([s, n]) => `${s} ${n}`)
      .join(', ')}); ` +
      `histories ${mb(r.histories.totalHistoryBytes)} in all, largest ${mb(r.histories.largestHistoryBytes)}`,
    `SQL rows: ${r.sql.expected} expected, ${r.sql.exactlyOnce} exactly once, ${r.sql.duplicates} duplicated, ` +
      `${r.sql.missing} missing (${r.sql.rows} rows, ${r.sql.writeRecords} write records)`,
    `mails by Message-ID: ${r.mail.expected} expected, ${r.mail.exactlyOnce} exactly once, ${r.mail.duplicates} duplicated, ` +
      `${r.mail.missing} missing; delivery unknown (reported to the agent, never resent): ${r.mail.deliveryUnknown} ` +
      `(${r.mail.deliveryUnknownArrived} arrived)`,
    `large tool results (${LARGE_RESULT_CHARS / 1000} KB) read back whole: ${r.largeResults.whole}/${r.largeResults.expected}`,
    `notifications: ${r.notifications.accepted} accepted by ${r.notifications.targets.length} workflows, ` +
      `${r.notifications.kept} kept, ${r.notifications.evicted} evicted (oldest first), ` +
      `${r.notifications.lost} lost, ${r.notifications.duplicates} duplicated; ` +
      `notify_user calls that failed for good (the agent was told): ${r.notifications.toolFailures}`,
  ];
  if (f) {
    const errors = [...f.inboxQueries.errors.entries()].map(([m, n]) => `${n}× ${m}`).join('; ');
    lines.push(
      `flood: ${f.sent} notifications of ${(f.notificationBytes / 1024).toFixed(1)} KB in ${f.seconds.toFixed(0)} s, ` +
        `${f.accepted} accepted, ${f.refused.length} refused, ${f.retries} resent after an error; ` +
        `inbox queries during the flood: ${f.inboxQueries.ok} answered, ${f.inboxQueries.failed} failed${errors ? ` (${errors})` : ''}`,
    );
  }
  for (const t of r.notifications.targets.filter((t) => t.lost || t.duplicates || t.problem))
    lines.push(
      `  ${t.target}: accepted ${t.accepted}, kept ${t.kept}, evicted ${t.evicted}, lost ${t.lost}, ` +
        `duplicated ${t.duplicates}, others kept ${t.others}${t.problem ? `, ${t.problem}` : ''}` +
        (t.lostTrace
          ? `; of ${t.lostTrace.gone} gone, ${t.lostTrace.inHistory} reached its history (the rest were never delivered to it)`
          : ''),
    );
  for (const d of r.runs.lostDetail.slice(0, 10)) lines.push(`  lost: ${d}`);
  for (const a of r.approvalsFailed) lines.push(`  approval not taken: ${a}`);
  if (f) for (const x of f.refused.slice(0, 5)) lines.push(`  refused: ${x.target} ${x.id}: ${x.error}`);
  if (failures.length) for (const e of r.workerErrors.slice(0, 5)) lines.push(`  worker: ${e}`);
  lines.push(
    failures.length ? `FAIL: ${failures.join('; ')}` : 'PASS: every count above that must be zero is zero',
  );
  return lines.join('\n');
}
