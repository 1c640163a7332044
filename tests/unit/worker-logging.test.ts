/**
 * The worker's log lines: one line per event in both formats, no task tokens, no colours unless
 * asked, and the same sanitising as spans.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { LogEntry } from '@temporalio/worker';
import { privateWords, REDACTED } from '../../shared/private-text';
import { logRecord, textLine } from '../../workers/observability/logging';

const at = BigInt(Date.UTC(2026, 10, 30, 12, 0, 0)) * 1_000_000n;
const entry = (over: Partial<LogEntry>): LogEntry => ({
  level: 'INFO',
  message: 'activity completed',
  timestampNanos: at,
  ...over,
});

const activityMeta = {
  sdkComponent: 'activity',
  taskQueue: 'q',
  namespace: 'default',
  isLocal: false,
  attempt: 1,
  taskToken: 'CiQwMWEyMmQwNC1lYzE0LTdjMTAtYmJlNC1kNmQ2MzVkOWM4YjMSKmFnZW50',
  activityId: '3',
  activityType: 'web_search',
  workflowId: 'agent-1',
  tool: 'web_search',
  outcome: 'ok',
  durationMs: 12,
};

test('a text line: one line, no task token, constant fields left out, values quoted when needed', () => {
  // The call's words are only gathered for a line with free text to sanitize: not for this one.
  const words = jest.fn(() => new Set<string>());
  const record = logRecord(entry({ meta: activityMeta }), 'INFO', words);
  expect(words).not.toHaveBeenCalled();
  expect(record).toBeDefined();
  expect(record).not.toHaveProperty('taskToken');
  const line = textLine(record!, false);
  expect(line).toBe(
    '2026-11-30T12:00:00.000Z INFO  activity completed attempt=1 activityId=3 activityType=web_search ' +
      'workflowId=agent-1 tool=web_search outcome=ok durationMs=12\n',
  );
  expect(line).not.toContain('\x1b');
  expect(textLine(record!, true)).toContain('\x1b[32mINFO \x1b[0m');
});

test('JSON records keep the same fields (minus the task token) and every error is type plus sanitized message', () => {
  const err = ApplicationFailure.create({
    type: 'SearchBadRequest',
    message: 'searxng at http://127.0.0.1:9/search?q=zephyr answered 400: no results for Zephyr plans',
  });
  const record = logRecord(
    entry({
      level: 'WARN',
      message: 'activity failed',
      meta: { ...activityMeta, error: err, note: 'Zephyr "x"' },
    }),
    'INFO',
    () => privateWords({ query: 'Zephyr plans' }),
  );
  expect(record).toMatchObject({
    time: '2026-11-30T12:00:00.000Z',
    level: 'WARN',
    msg: 'activity failed',
    sdkComponent: 'activity',
    taskQueue: 'q',
    error: `SearchBadRequest: searxng at http://127.0.0.1:9/… answered 400: no results for ${REDACTED} ${REDACTED}`,
    note: `${REDACTED} "…"`,
  });
  expect(JSON.stringify(record)).not.toMatch(/zephyr|taskToken/i);
  expect(textLine(record!, false).split('\n')).toHaveLength(2);
});

test('Temporal’s own "Activity failed" line is left to the worker’s "activity failed"; dumps go to DEBUG', () => {
  expect(
    logRecord(
      entry({ level: 'WARN', message: 'Activity failed', meta: { sdkComponent: 'worker' } }),
      'INFO',
      () => new Set(),
    ),
  ).toBeUndefined();
  const dump = entry({ message: 'asset workflow-bundle.js 2.9 MiB\nmodules by path ./ 930 KiB' });
  expect(logRecord(dump, 'INFO', () => new Set())).toBeUndefined();
  expect(logRecord(dump, 'DEBUG', () => new Set())).toMatchObject({
    level: 'DEBUG',
    msg: 'asset workflow-bundle.js 2.9 MiB modules by path ./ 930 KiB',
  });
});

test('an MCP server’s name is written as it is, though the running call names it (it is configuration, not private)', () => {
  // Connected on the first call of a run's `mcp:files` tool: the call's words include "files".
  const words = () => privateWords({ server: 'files', tool: 'read_file', path: 'plan.md' });
  const record = logRecord(
    entry({ message: 'MCP server connected', meta: { server: 'files', transport: 'stdio' } }),
    'INFO',
    words,
  );
  expect(textLine(record!, false)).toBe(
    '2026-11-30T12:00:00.000Z INFO  MCP server connected server=files transport=stdio\n',
  );
});
