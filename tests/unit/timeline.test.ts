/**
 * The transcript's timeline from recorded histories, without a server: an approval wait's timer is
 * stamped and placed where the decision cancelled it, and named as that call's approval timeout;
 * a continued or forked run says it resumes at the step its first entries have.
 */
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { eventTimeMs, readHistoryFile } from '../../client/debug/history';
import type { History } from '../../client/debug/history';
import { planFork } from '../../client/debug/fork';
import { buildTimeline } from '../../client/debug/timeline';
import type { TimelineEntry } from '../../client/debug/timeline';
import { renderTimeline } from '../../cli/debug/render';

const HISTORIES = path.join(__dirname, '..', 'replay', 'histories');
const history = (file: string): History => readHistoryFile(path.join(HISTORIES, file));

/** The headline of each entry, without its time. */
function headlines(entries: TimelineEntry[]): string[] {
  return renderTimeline(entries, 'text')
    .split('\n')
    .filter((l) => !l.startsWith(' '))
    .map((l) => l.replace(/^\d\d:\d\d:\d\d\.\d{3} /, ''));
}

test('an approval timeout cancelled by the decision is stamped then, after it, and named', () => {
  // Recorded before timers had summaries: the name comes from the decision and the model's call.
  const entries = buildTimeline(history('approvals.json'));
  const lines = headlines(entries);
  const approved = lines.findIndex((l) => l.startsWith('update approveToolCall {"toolCallId":"yes"'));
  const rejected = lines.findIndex((l) => l.startsWith('update approveToolCall {"toolCallId":"no"'));
  expect(approved).toBeGreaterThan(0);
  expect(lines[approved + 1]).toMatch(
    /^approval timeout for calculator \(yes\) cancelled after 801 ms: approved$/,
  );
  expect(lines[rejected + 1]).toBe(
    'approval timeout for calculator (no) cancelled after 990 ms: rejected: not needed',
  );

  const timers = entries.filter((e) => e.kind === 'timer');
  const update = entries[entries.findIndex((e) => e.kind === 'update')];
  expect(timers[0]).toMatchObject({ at: update?.at, durationMs: 801, cancelledBy: 'approved' });
  expect(timers[0]?.at).toBe((timers[0]?.startedAt ?? 0) + 801);
  // Stamps never go back in time.
  const stamps = entries.map((e) => e.at);
  expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
  // The timeout that fired (no decision came) is left as it was.
  expect(lines).toContain('timer fired after 2.0 s');
});

test('a timer with a summary is named by it, fired, cancelled or still running', () => {
  // A copy of its own (read again: event ids are Longs, which structuredClone would not keep).
  const events = history('approvals.json').events ?? [];
  const summary = (text: string) => ({ summary: defaultPayloadConverter.toPayload(text) });
  const started = events.filter((e) => e.timerStartedEventAttributes);
  Object.assign(started[0] ?? {}, { userMetadata: summary('approval timeout for calculator (yes)') });
  Object.assign(started[1] ?? {}, { userMetadata: summary('approval timeout for calculator (no)') });
  Object.assign(started[2] ?? {}, { userMetadata: summary('approval timeout for calculator (late)') });
  const lines = headlines(buildTimeline({ events }));
  expect(lines).toContain('approval timeout for calculator (yes) cancelled after 801 ms: approved');
  expect(lines).toContain('approval timeout for calculator (late) fired after 2.0 s');

  // Cut before the last timer fires: it is still running, and shown where it started.
  const fired = events.findIndex((e) => e.timerFiredEventAttributes);
  const running = buildTimeline({ events: events.slice(0, fired) });
  expect(headlines(running).at(-1)).toBe('approval timeout for calculator (late) started');
  const last = running.at(-1);
  expect(last).toMatchObject({ kind: 'timer', durationMs: null });
  expect(last?.at).toBe(events[fired - 1] && eventTimeMs(events[fired - 1] as (typeof events)[number]));
});

test('a continued run resumes at the step of its first model turn', () => {
  const entries = buildTimeline(history('continue-as-new-2.json'));
  const start = entries[0];
  const firstModel = entries.find((e) => e.kind === 'model');
  expect(start).toMatchObject({ kind: 'start', resumedAtStep: firstModel?.step });
  expect(renderTimeline(entries, 'text')).toContain(`resumes at step ${firstModel?.step}`);
});

test('a fork after step 1 says it resumes at step 2, the step of its first model turn', () => {
  const original = history('approvals.json');
  const plan = planFork(original, 1);
  const first = history('approvals.json').events?.[0];
  const attrs = first?.workflowExecutionStartedEventAttributes;
  if (!first || !attrs) throw new Error('the history has no start event');
  attrs.input = { payloads: [plan.input, plan.carried].map((p) => defaultPayloadConverter.toPayload(p)) };
  const [start] = buildTimeline({ events: [first] });
  expect(start).toMatchObject({ kind: 'start', resumedAtStep: 2 });
  // The run forked from numbers its model turns from 1: the fork's first is the second.
  expect(buildTimeline(original).filter((e) => e.kind === 'model')[1]).toMatchObject({ step: 2 });
  expect(renderTimeline([start as TimelineEntry], 'text')).toContain('resumes at step 2');
});
