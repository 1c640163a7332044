/**
 * The chaos script's CI configuration (bench/chaos.ts): four agent jobs with real side effects
 * (PostgreSQL writes, mail through Postfix into Dovecot, notifications, 60 KB tool results) on
 * their own dev server and worker processes, two workers SIGKILLed at seeded moments, one dev
 * server restart on the same data file, and a short flood of maximum-size notifications (through the
 * `notify` update, as the CLI and API send them) into two inboxes and a job held open for it, enough
 * to evict the held job's own approval request. Every count that must be zero is zero.
 */
import { chaosFailures, formatReport, runChaos } from '../../bench/chaos/run';
import { requireMailServer } from '../../testkit/mail';
import { quietRuntime } from '../../testkit/temporal';

beforeAll(async () => {
  quietRuntime();
  await requireMailServer();
});

test('4 jobs, 2 worker SIGKILLs, a server restart and a flood: nothing lost, stuck, duplicated or missing', async () => {
  const report = await runChaos({
    runs: 4,
    kills: 2,
    floodRate: 8,
    floodSeconds: 5,
    seed: 11,
    serverRestart: true,
    windowSeconds: 20,
    settleSeconds: 180,
  });
  const printout = formatReport(report);
  // The whole printout on failure, so a red run says what went wrong.
  expect({ failures: chaosFailures(report), printout }).toEqual({ failures: [], printout });

  // The storm really happened, and the checks really counted something.
  expect(report.chaos).toEqual({ kills: 2, serverRestarts: 1, unexpectedWorkerExits: 0 });
  expect(report.runs).toMatchObject({ finished: 4, lost: 0, stuck: 0 });
  expect(report.sql).toMatchObject({ expected: 8, exactlyOnce: 8, rows: 8, writeRecords: 8 });
  expect(report.mail.exactlyOnce + report.mail.deliveryUnknown).toBe(4);
  expect(report.largeResults).toEqual({ expected: 4, whole: 4 });
  expect(report.flood?.accepted).toBe(40);
  expect(report.flood?.notificationBytes).toBeGreaterThan(64 * 1024);
  // 4 jobs × 2 notify_user calls, each in its run and in the agents' inbox, plus the 40 flooded.
  expect(report.notifications.toolFailures).toBe(0);
  expect(report.notifications.accepted).toBe(4 * 2 * 2 + 40);
  // The held job's list overflowed: its oldest (its first notify_user and its approval request) went.
  const held = report.notifications.targets.find((t) => t.target.endsWith('-job-0'));
  expect(held?.evicted).toBeGreaterThanOrEqual(2);
  expect(report.notifications.kept + report.notifications.evicted).toBeGreaterThanOrEqual(
    report.notifications.accepted,
  );
  expect(Object.keys(report.histories.workflowTaskFailures)).toEqual([]);
}, 600_000);
