import { DefaultLogger } from '@temporalio/worker';
import type { LogEntry, Logger, LogLevel } from '@temporalio/worker';
import type { PrivateWords } from '../../shared/private-text';
import { describeError, sanitizeMessage } from '../../shared/private-text';
import { currentPrivateWords } from './private-values';

/** Fields that name things (ids, types, states) and are written as they are. */
const IDENTITY_FIELDS = new Set([
  'sdkComponent',
  'taskQueue',
  'namespace',
  'workflowId',
  'workflowRunId',
  'runId',
  'workflowType',
  'activityId',
  'activityType',
  'state',
  'model',
  'provider',
  'tool',
  'toolCallId',
  'outcome',
  'finishReason',
  'errorType',
  'size',
  // An MCP server's configured name and how it is reached: configuration, which a call's own
  // arguments may name too (`mcp:files`), not private text.
  'server',
  'transport',
]);

/** Never written: an opaque server handle, long and of no use to a reader. */
const DROPPED_FIELDS = new Set(['taskToken']);

/** Left out of text lines: the same on every line of one worker (JSON lines keep them). */
const TEXT_OMITTED_FIELDS = new Set(['sdkComponent', 'taskQueue', 'namespace', 'isLocal']);

/** Nesting kept in a field's value; deeper parts are elided. */
const MAX_VALUE_DEPTH = 3;

const SEVERITY: Record<LogLevel, number> = { TRACE: 0, DEBUG: 1, INFO: 2, WARN: 3, ERROR: 4 };

/** A log line before formatting: time, level, message, then the fields. */
export type LogRecord = { time: string; level: LogLevel; msg: string } & Record<string, unknown>;

/**
 * The record a log entry becomes, or undefined when it is not written. Every string that is not an
 * identity field, and every error (as `Type: message`), is sanitized: quoted parts, URL paths,
 * email addresses and the words of the running activity's arguments (`words`, asked for only when
 * such a value is there) are replaced, and each value is one line. The message is the code's own
 * wording: it is sanitized without the words. Temporal's own `Activity failed` line is dropped: the worker writes `activity
 * failed` for every failed attempt, with the call's facts. A multi-line INFO message (the
 * bundler's module list) is a dump rather than an event and is kept for DEBUG.
 */
export function logRecord(
  entry: LogEntry,
  minLevel: LogLevel,
  words: () => PrivateWords,
): LogRecord | undefined {
  const meta = entry.meta ?? {};
  if (entry.message === 'Activity failed' && meta.sdkComponent === 'worker') return undefined;
  const level = entry.level === 'INFO' && entry.message.includes('\n') ? 'DEBUG' : entry.level;
  if (SEVERITY[level] < SEVERITY[minLevel]) return undefined;
  let known: PrivateWords | undefined;
  const lazyWords = () => (known ??= words());
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(meta)) {
    if (!DROPPED_FIELDS.has(k) && v !== undefined) fields[k] = safeValue(k, v, lazyWords, 0);
  }
  return {
    time: new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString(),
    level,
    msg: sanitizeMessage(entry.message),
    ...fields,
  };
}

function safeValue(key: string, value: unknown, words: () => PrivateWords, depth: number): unknown {
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'string') {
    return IDENTITY_FIELDS.has(key) ? value.replace(/\s*\r?\n\s*/g, ' ') : sanitizeMessage(value, words());
  }
  if (value instanceof Error) return describeError(value, words());
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object') return `[${typeof value}]`;
  if (depth >= MAX_VALUE_DEPTH) return '…';
  if (Array.isArray(value)) return value.map((v) => safeValue(key, v, words, depth + 1));
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !DROPPED_FIELDS.has(k))
      .map(([k, v]) => [k, safeValue(k, v, words, depth + 1)]),
  );
}

const COLOURS: Record<LogLevel, string> = {
  TRACE: '\x1b[2m',
  DEBUG: '\x1b[2m',
  INFO: '\x1b[32m',
  WARN: '\x1b[33m',
  ERROR: '\x1b[31m',
};

/**
 * One text line: `<time> <LEVEL> <message> key=value …`. Values with spaces, quotes or `=` are
 * JSON-quoted; objects are JSON. The level is coloured only when `colours` is set.
 */
export function textLine(record: LogRecord, colours: boolean): string {
  const { time, level, msg, ...fields } = record;
  const lvl = level.padEnd(5);
  const parts = [time, colours ? `${COLOURS[level]}${lvl}\x1b[0m` : lvl, msg];
  for (const [k, v] of Object.entries(fields)) {
    if (!TEXT_OMITTED_FIELDS.has(k)) parts.push(`${k}=${textValue(v)}`);
  }
  return `${parts.join(' ')}\n`;
}

function textValue(v: unknown): string {
  if (typeof v === 'string') return v !== '' && /^[^\s"'=]+$/.test(v) ? v : JSON.stringify(v);
  return typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
}

/**
 * The logger Temporal's logs (the worker's and the activities') go through, one line per event:
 * text lines on stderr (level coloured on a terminal unless NO_COLOR is set), or with `json` one
 * object per line on stdout (for log shippers and tests). Installed with the runtime
 * (./runtime.ts), once per process.
 */
export function createRuntimeLogger(level: LogLevel, format: 'text' | 'json'): Logger {
  const colours = process.stderr.isTTY === true && process.env.NO_COLOR === undefined;
  return new DefaultLogger(level, (entry: LogEntry) => {
    const record = logRecord(entry, level, currentPrivateWords);
    if (!record) return;
    if (format === 'json') process.stdout.write(`${JSON.stringify(record)}\n`);
    else process.stderr.write(textLine(record, colours));
  });
}
