/**
 * What a schedule of agent runs is made of, checked before anything reaches Temporal: when it
 * fires (a cron expression or an interval, in a time zone), what a firing does when the last run
 * is still going (the overlap policy), and how late a missed firing may still start (the catch-up
 * window). Pure and free of Temporal's packages, so the CLI parses its flags with it before it
 * loads any client, and the HTTP API gives the same answers.
 */
import { redactSecrets } from './redact-secrets';

/** Overlap policies by the name people type, with Temporal's name for each. */
export const OVERLAP_POLICIES = Object.freeze({
  /** The firing starts nothing while a run of the schedule is still going (the default). */
  skip: 'SKIP',
  /** One firing waits for the running run, later ones are dropped. */
  'buffer-one': 'BUFFER_ONE',
  /** Every firing waits its turn. */
  'buffer-all': 'BUFFER_ALL',
  /** The running run is cancelled (gracefully), then the new one starts. */
  'cancel-other': 'CANCEL_OTHER',
  /** The running run is terminated, then the new one starts. */
  'terminate-other': 'TERMINATE_OTHER',
  /** Runs overlap freely. */
  'allow-all': 'ALLOW_ALL',
} as const);

/** An overlap policy as people type it. */
export type OverlapPolicyName = keyof typeof OVERLAP_POLICIES;
/** An overlap policy as Temporal names it. */
export type TemporalOverlapPolicy = (typeof OVERLAP_POLICIES)[OverlapPolicyName];

/** Every overlap policy name, the default first. */
export const OVERLAP_POLICY_NAMES = Object.keys(OVERLAP_POLICIES) as OverlapPolicyName[];

/** What a firing does while the last run is still going, unless the schedule says otherwise. */
export const DEFAULT_OVERLAP: OverlapPolicyName = 'skip';
/**
 * How late a firing missed while the server was down may still start, unless the schedule says
 * otherwise (Temporal's own default is a year, which would start a backlog after an outage).
 */
export const DEFAULT_CATCHUP_WINDOW = '5m';
/** The shortest catch-up window the server honours. */
export const MIN_CATCHUP_WINDOW_MS = 10_000;
/** The shortest interval the server accepts. */
export const MIN_INTERVAL_MS = 1_000;
/** Longest note on a schedule (shown by `describe`, set by `pause`/`unpause`). */
export const MAX_NOTE_CHARS = 1_000;

/** The name Temporal uses for an overlap policy, as people type it (`buffer-one` for BUFFER_ONE). */
export function overlapPolicyName(temporal: string): OverlapPolicyName | undefined {
  return OVERLAP_POLICY_NAMES.find((n) => OVERLAP_POLICIES[n] === temporal);
}

/** Why `name` is no overlap policy, or null when it is one. */
export function overlapPolicyProblem(name: string): string | null {
  return (OVERLAP_POLICY_NAMES as string[]).includes(name)
    ? null
    : `unknown overlap policy "${name}": use one of ${OVERLAP_POLICY_NAMES.join(', ')}`;
}

const UNIT_MS: Record<string, number> = {
  s: 1_000,
  sec: 1_000,
  secs: 1_000,
  second: 1_000,
  seconds: 1_000,
  m: 60_000,
  min: 60_000,
  mins: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hrs: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
};

/** Milliseconds of a duration written as `90s`, `5m`, `2h`, `1d` or `5 minutes`; null when unreadable. */
export function durationMs(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*$/i.exec(text);
  const unit = m?.[2] ? UNIT_MS[m[2].toLowerCase()] : undefined;
  if (!m || unit === undefined) return null;
  return Math.round(Number(m[1]) * unit);
}

/** A duration for people: `1d`, `2h`, `5m`, `90s`. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${Math.round(ms / 1000)}s`;
}

const CRON_SHORTHANDS = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];

/**
 * Why `cron` cannot be a cron expression, as far as can be told here (the field count and the
 * shorthands); the server checks each field's range and names and its answer is reported as well.
 */
export function cronProblem(cron: string): string | null {
  const text = cron.trim().replace(/^(CRON_)?TZ=\S+\s+/, '');
  if (text.startsWith('@')) {
    if (CRON_SHORTHANDS.includes(text)) return null;
    const every = /^@every\s+(\S+)$/.exec(text);
    if (every?.[1] && durationMs(every[1]) !== null) return null;
    return `cron "${cron}": use five fields or one of ${CRON_SHORTHANDS.join(', ')}, @every <interval>`;
  }
  const fields = text.split(/\s+/).filter(Boolean).length;
  if (fields < 5 || fields > 7) {
    return (
      `cron "${cron}" has ${fields} field${fields === 1 ? '' : 's'}: use five (minute hour day-of-month ` +
      'month day-of-week, e.g. "0 9 * * MON-FRI"), or six or seven with the year and seconds'
    );
  }
  return null;
}

/** Why `zone` is no time zone this machine knows, or null when it is one. */
export function timeZoneProblem(zone: string): string | null {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return null;
  } catch {
    return `unknown time zone "${zone}": use an IANA name such as UTC, Europe/Paris or America/New_York`;
  }
}

/** A schedule's settings as a person gives them (CLI flags, an API body). */
export interface ScheduleSettings {
  /** A cron expression; exactly one of `cron` and `every`. */
  cron?: string;
  /** An interval such as `1h` or `30m`. */
  every?: string;
  /** IANA time zone of a cron expression (default UTC). */
  timezone?: string;
  overlap?: string;
  catchupWindow?: string;
  note?: string;
}

/** Settings that passed {@link checkScheduleSettings}, in Temporal's terms. */
export interface CheckedScheduleSettings {
  cron?: string;
  everyMs?: number;
  timezone?: string;
  overlap: OverlapPolicyName;
  catchupWindowMs: number;
  note?: string;
  /** When it fires, in words: `cron "0 9 * * *" (Europe/Paris)`, `every 1h`. */
  timing: string;
}

/** The settings in Temporal's terms, or every problem with them, each naming its field. */
export function checkScheduleSettings(
  s: ScheduleSettings,
): { ok: true; settings: CheckedScheduleSettings } | { ok: false; problems: string[] } {
  const problems: string[] = [];
  const cron = s.cron?.trim() || undefined;
  const every = s.every?.trim() || undefined;
  if (cron === undefined && every === undefined)
    problems.push('say when it fires: a cron expression (cron) or an interval (every), e.g. every 1h');
  if (cron !== undefined && every !== undefined)
    problems.push('give a cron expression or an interval, not both');
  const cronIssue = cron === undefined ? null : cronProblem(cron);
  if (cronIssue) problems.push(cronIssue);
  let everyMs: number | undefined;
  if (every !== undefined) {
    everyMs = durationMs(every) ?? undefined;
    if (everyMs === undefined) problems.push(`every "${every}": use an interval such as 30s, 15m, 2h or 1d`);
    else if (everyMs < MIN_INTERVAL_MS) problems.push(`every "${every}": the shortest interval is 1s`);
  }
  const timezone = s.timezone?.trim() || undefined;
  const zoneIssue = timezone === undefined ? null : timeZoneProblem(timezone);
  if (zoneIssue) problems.push(zoneIssue);
  if (timezone !== undefined && every !== undefined)
    problems.push('a time zone applies to a cron expression only (an interval counts from the epoch)');
  const overlap = s.overlap?.trim() || DEFAULT_OVERLAP;
  const overlapIssue = overlapPolicyProblem(overlap);
  if (overlapIssue) problems.push(overlapIssue);
  const window = s.catchupWindow?.trim() || DEFAULT_CATCHUP_WINDOW;
  const catchupWindowMs = durationMs(window);
  if (catchupWindowMs === null)
    problems.push(`catch-up window "${window}": use a duration such as 30s, 5m or 1h`);
  else if (catchupWindowMs < MIN_CATCHUP_WINDOW_MS)
    problems.push(`catch-up window "${window}": the shortest the server honours is 10s`);
  if (s.note !== undefined && s.note.length > MAX_NOTE_CHARS)
    problems.push(`note: at most ${MAX_NOTE_CHARS} characters (got ${s.note.length})`);
  if (problems.length > 0 || catchupWindowMs === null) return { ok: false, problems };
  const timing =
    cron !== undefined
      ? `cron "${cron}"${timezone ? ` (${timezone})` : ''}`
      : `every ${formatDuration(everyMs ?? 0)}`;
  return {
    ok: true,
    settings: {
      ...(cron !== undefined ? { cron } : {}),
      ...(everyMs !== undefined ? { everyMs } : {}),
      ...(timezone !== undefined ? { timezone } : {}),
      overlap: overlap as OverlapPolicyName,
      catchupWindowMs,
      ...(s.note !== undefined ? { note: s.note } : {}),
      timing,
    },
  };
}

/**
 * Why a schedule's run input must not be kept as it is: a value shaped like a credential (an API
 * key, a bearer token, a password in a URL). A schedule keeps its input readable by anyone who
 * can describe it, for as long as it exists; secrets belong in the worker's configuration.
 */
export function scheduleInputSecretProblem(input: unknown): string | null {
  const text = JSON.stringify(input) ?? '';
  return redactSecrets(text) === text
    ? null
    : 'the run input holds what looks like a credential (an API key, a token, a password in a URL); ' +
        'a schedule keeps its input readable by anyone who can describe it: keep secrets in the ' +
        'worker’s configuration (DURABLE_AGENT_CONFIG, environment variables)';
}
