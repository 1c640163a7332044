/**
 * A schedule's settings are checked before anything reaches Temporal (shared/schedule-spec.ts):
 * each mistake is named with what to write instead, and good settings come out in Temporal's terms.
 */
import { scheduleIdProblem } from '../../shared/identifiers';
import {
  checkScheduleSettings,
  cronProblem,
  durationMs,
  formatDuration,
  overlapPolicyName,
  scheduleInputSecretProblem,
} from '../../shared/schedule-spec';

const problems = (s: Parameters<typeof checkScheduleSettings>[0]) => {
  const r = checkScheduleSettings(s);
  return r.ok ? [] : r.problems;
};

test('good settings come out in Temporal terms, with the defaults (skip, 5 minutes)', () => {
  expect(checkScheduleSettings({ cron: ' 0 9 * * MON-FRI ', timezone: 'Europe/Paris' })).toEqual({
    ok: true,
    settings: {
      cron: '0 9 * * MON-FRI',
      timezone: 'Europe/Paris',
      overlap: 'skip',
      catchupWindowMs: 300_000,
      timing: 'cron "0 9 * * MON-FRI" (Europe/Paris)',
    },
  });
  const every = checkScheduleSettings({ every: '90 minutes', overlap: 'buffer-one', catchupWindow: '1h' });
  expect(every).toEqual({
    ok: true,
    settings: { everyMs: 5_400_000, overlap: 'buffer-one', catchupWindowMs: 3_600_000, timing: 'every 90m' },
  });
  expect(checkScheduleSettings({ cron: '@every 2h' }).ok).toBe(true);
  expect(checkScheduleSettings({ cron: '@daily' }).ok).toBe(true);
});

test('each mistake is named with what to write instead', () => {
  expect(problems({})).toEqual([expect.stringMatching(/^say when it fires: a cron expression/)]);
  expect(problems({ cron: '0 9 * * *', every: '1h' })).toEqual([
    'give a cron expression or an interval, not both',
  ]);
  expect(problems({ cron: '0 9 * *' })).toEqual([
    expect.stringContaining('cron "0 9 * *" has 4 fields: use five'),
  ]);
  expect(cronProblem('@fortnightly')).toMatch(/^cron "@fortnightly": use five fields or one of @yearly/);
  expect(problems({ every: '5 fortnights' })).toEqual([
    'every "5 fortnights": use an interval such as 30s, 15m, 2h or 1d',
  ]);
  expect(problems({ every: '0s' })).toEqual(['every "0s": the shortest interval is 1s']);
  expect(problems({ cron: '0 9 * * *', timezone: 'Mars/Olympus' })).toEqual([
    'unknown time zone "Mars/Olympus": use an IANA name such as UTC, Europe/Paris or America/New_York',
  ]);
  expect(problems({ every: '1h', timezone: 'UTC' })).toEqual([
    'a time zone applies to a cron expression only (an interval counts from the epoch)',
  ]);
  expect(problems({ every: '1h', overlap: 'never' })).toEqual([
    'unknown overlap policy "never": use one of skip, buffer-one, buffer-all, cancel-other, terminate-other, allow-all',
  ]);
  expect(problems({ every: '1h', catchupWindow: '5s' })).toEqual([
    'catch-up window "5s": the shortest the server honours is 10s',
  ]);
  expect(problems({ every: '1h', note: 'x'.repeat(1001) })).toEqual([
    'note: at most 1000 characters (got 1001)',
  ]);
});

test('durations, overlap names and schedule ids', () => {
  expect([durationMs('30s'), durationMs('2 hours'), durationMs('1.5m'), durationMs('1w')]).toEqual([
    30_000,
    7_200_000,
    90_000,
    null,
  ]);
  expect([
    formatDuration(86_400_000),
    formatDuration(7_200_000),
    formatDuration(300_000),
    formatDuration(90_000),
  ]).toEqual(['1d', '2h', '5m', '90s']);
  expect(overlapPolicyName('BUFFER_ONE')).toBe('buffer-one');
  expect(scheduleIdProblem('nightly.report')).toBeNull();
  expect(scheduleIdProblem('bad id')).toMatch(/^schedule id "bad id" may contain only ASCII letters/);
  // Its runs are named <id>-<time> (21 more characters), which must still be a valid run id.
  expect(scheduleIdProblem('a'.repeat(201))).toBe('a schedule id must be at most 200 characters (got 201)');
});

test('a run input that holds something shaped like a credential is refused; an ordinary one passes', () => {
  expect(
    scheduleInputSecretProblem({ task: 'Summarise the support inbox', model: { provider: 'scripted' } }),
  ).toBeNull();
  expect(
    scheduleInputSecretProblem({ task: 'Call the API with sk-ant-abcdefghijklmnopqrstuvwx', model: {} }),
  ).toMatch(/looks like a credential/);
  expect(scheduleInputSecretProblem({ task: 'read postgres://admin:hunter22@db/x' })).toMatch(/credential/);
});
