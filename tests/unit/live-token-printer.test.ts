/**
 * The terminal printer of live tokens (`run` and `watch`): the answer's text and each tool call's
 * arguments typed as they come, each tool call on a line of its own; a late joiner's answer so far
 * with its tool calls; event lines wait for the line being typed. A step's answer waits for the
 * run's events to reach that step, so lines keep step order though tokens come first; a typed tool
 * call is not printed again by its event; citation marks are typed as the final answer numbers them.
 */
import type { StreamFrame } from '../../activities/streaming';
import type { AgentEvent } from '../../shared/agent';
import { liveTokenPrinter } from '../../cli/live-token-printer';
import type { LiveEvent } from '../../client/live-tokens';
import { formatEventBesideTokens } from '../../cli/progress';

const tag = { run: 'r', step: 2, call: '7', attempt: 1 };
let seq = 0;
function frame(f: Partial<StreamFrame> & Pick<StreamFrame, 'kind'>): LiveEvent {
  const full: StreamFrame = { ...tag, seq: seq++, at: 0, ...f };
  return { type: 'frame', id: `${full.call}.${full.attempt}.${full.seq}`, frame: full };
}

/** A printer whose run's events have reached step 2 (the step of the frames above). */
function printer() {
  const out: string[] = [];
  const p = liveTokenPrinter((t) => out.push(t));
  p.reached(2);
  return { out, p };
}

function event(step: number, kind: AgentEvent['kind'], more: Partial<AgentEvent> = {}): AgentEvent {
  return { seq: seq++, at: '2026-12-07T00:00:00Z', step, kind, ...more };
}

test('tool-call arguments are typed as they come, each call on its own line after the text, then its id', () => {
  const { out, p } = printer();
  p.onEvent(frame({ kind: 'start' }));
  p.onEvent(frame({ kind: 'text', text: 'Two sums.' }));
  p.onEvent(frame({ kind: 'tool', index: 0, id: 'a', name: 'calculator', text: '{"expre' }));
  // Typed so far: the call's name and the start of its arguments, before the rest has come.
  expect(out.join('')).toBe('[step 2] Two sums.\n[step 2] → calculator {"expre');
  p.onEvent(frame({ kind: 'tool', index: 0, text: 'ssion":"1+1"}' }));
  p.onEvent(frame({ kind: 'tool', index: 1, id: 'b', name: 'calculator', text: '{"expression":' }));
  p.line('[step 2] model answered in 5 ms');
  p.onEvent(frame({ kind: 'tool', index: 1, text: '"2+2"}' }));
  p.onEvent(frame({ kind: 'end' }));
  expect(out.join('')).toBe(
    '[step 2] Two sums.\n' +
      '[step 2] → calculator {"expression":"1+1"} (a)\n' +
      '[step 2] → calculator {"expression":"2+2"} (b)\n' +
      '[step 2] model answered in 5 ms\n',
  );
  expect(p.typed(2)).toBe(true);
});

test('a call with only a tool call types it on the step’s line', () => {
  const { out, p } = printer();
  p.onEvent(frame({ kind: 'start' }));
  p.onEvent(frame({ kind: 'tool', index: 0, id: 'a', name: 'get_time', text: '{"timezone":"UTC"}' }));
  p.flush();
  expect(out.join('')).toBe('[step 2] → get_time {"timezone":"UTC"} (a)\n');
});

test('a late joiner gets the answer so far with its tool calls, then the rest', () => {
  const { out, p } = printer();
  p.onEvent({
    type: 'partial',
    id: '7.1.3',
    answer: {
      ...tag,
      seq: 3,
      text: 'Looking it up.',
      tools: [{ index: 0, id: 'a', name: 'web_search', args: '{"query":"tem' }],
      ended: false,
    },
  });
  p.onEvent(frame({ kind: 'tool', index: 0, text: 'poral"}' }));
  p.onEvent(frame({ kind: 'end' }));
  expect(out.join('')).toBe('[step 2] Looking it up.\n[step 2] → web_search {"query":"temporal"} (a)\n');
});

test('a step’s answer waits for the earlier steps’ event lines, and its typed tool calls are not repeated', () => {
  const out: string[] = [];
  const p = liveTokenPrinter((t) => out.push(t));
  const format = formatEventBesideTokens(p);
  const print = (e: AgentEvent) => {
    const line = format(e);
    if (line) p.line(line);
  };
  // Step 1 is still being read from the run's events (polled) when step 2's tokens arrive.
  print(event(1, 'model_started'));
  p.onEvent(frame({ kind: 'start', step: 2 }));
  p.onEvent(frame({ kind: 'text', step: 2, text: 'Now the total.' }));
  p.onEvent(
    frame({ kind: 'tool', step: 2, index: 0, id: 'c', name: 'calculator', text: '{"expression":"1+1"}' }),
  );
  p.onEvent(frame({ kind: 'end', step: 2 }));
  expect(out.join('')).toBe('[step 1] model thinking…\n');
  print(event(1, 'model_finished', { durationMs: 5, text: 'Checking.' }));
  print(event(1, 'tool_finished', { tool: 'get_time', durationMs: 3, text: '12:00' }));
  print(event(2, 'model_started'));
  print(event(2, 'model_finished', { durationMs: 4, text: 'Now the total.' }));
  print(event(2, 'tool_started', { tool: 'calculator', toolCallId: 'c', args: { expression: '1+1' } }));
  print(event(2, 'tool_finished', { tool: 'calculator', durationMs: 2, text: '2' }));
  p.flush();
  expect(out.join('')).toBe(
    '[step 1] model thinking…\n' +
      '[step 1] model answered in 5 ms: Checking.\n' +
      '[step 1] ✓ get_time in 3 ms: 12:00\n' +
      '[step 2] Now the total.\n' +
      '[step 2] → calculator {"expression":"1+1"} (c)\n' +
      '[step 2] model answered in 4 ms\n' +
      '[step 2] ✓ calculator in 2 ms: 2\n',
  );
});

test('a second call of the same tool in a step is printed by its event when only one was typed', () => {
  const { out, p } = printer();
  const format = formatEventBesideTokens(p);
  p.onEvent(frame({ kind: 'tool', index: 0, id: 'a', name: 'calculator', text: '{"expression":"1"}' }));
  p.onEvent(frame({ kind: 'end' }));
  const first = format(event(2, 'tool_started', { tool: 'calculator', toolCallId: 'a', args: {} }));
  const second = format(event(2, 'tool_started', { tool: 'calculator', toolCallId: 'b', args: {} }));
  expect([first, second]).toEqual([null, '[step 2] → calculator {} (b)']);
  expect(out.join('')).toBe('[step 2] → calculator {"expression":"1"} (a)\n');
});

test('without the run’s events the answer is typed all the same, after a wait', () => {
  jest.useFakeTimers();
  try {
    const out: string[] = [];
    const p = liveTokenPrinter((t) => out.push(t));
    p.onEvent(frame({ kind: 'text', step: 4, text: 'Still here.' }));
    expect(out.join('')).toBe('');
    jest.advanceTimersByTime(3_000);
    expect(out.join('')).toBe('[step 4] Still here.');
  } finally {
    jest.useRealTimers();
  }
});

test('citation marks are typed as the final answer numbers them, a mark split over frames too', () => {
  const { out, p } = printer();
  p.onEvent(frame({ kind: 'text', text: 'Calcium [[a' }));
  p.onEvent(frame({ kind: 'text', text: '2]]; a finer grind [[b1]' }));
  p.onEvent(frame({ kind: 'text', text: ']; calcium again [[a2]]. A list [' }));
  p.onEvent(frame({ kind: 'end' }));
  expect(out.join('')).toBe('[step 2] Calcium [1]; a finer grind [2]; calcium again [1]. A list [\n');
});
