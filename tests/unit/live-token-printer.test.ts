/**
 * The terminal printer of live tokens (`run` and `watch`): the answer's text and each tool call's
 * arguments typed as they come, each tool call on a line of its own; a late joiner's answer so far
 * with its tool calls; event lines wait for the line being typed.
 */
import type { StreamFrame } from '../../activities/streaming';
import { liveTokenPrinter } from '../../client/live-tokens';
import type { LiveEvent } from '../../client/live-tokens';

const tag = { run: 'r', step: 2, call: '7', attempt: 1 };
let seq = 0;
function frame(f: Partial<StreamFrame> & Pick<StreamFrame, 'kind'>): LiveEvent {
  const full: StreamFrame = { ...tag, seq: seq++, at: 0, ...f };
  return { type: 'frame', id: `${full.call}.${full.attempt}.${full.seq}`, frame: full };
}

function printer() {
  const out: string[] = [];
  return { out, p: liveTokenPrinter((t) => out.push(t)) };
}

test('tool-call arguments are typed as they come, each call on its own line after the text', () => {
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
      '[step 2] → calculator {"expression":"1+1"}\n' +
      '[step 2] → calculator {"expression":"2+2"}\n' +
      '[step 2] model answered in 5 ms\n',
  );
  expect(p.typed(2)).toBe(true);
});

test('a call with only a tool call types it on the step’s line', () => {
  const { out, p } = printer();
  p.onEvent(frame({ kind: 'start' }));
  p.onEvent(frame({ kind: 'tool', index: 0, id: 'a', name: 'get_time', text: '{"timezone":"UTC"}' }));
  p.flush();
  expect(out.join('')).toBe('[step 2] → get_time {"timezone":"UTC"}\n');
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
  expect(out.join('')).toBe('[step 2] Looking it up.\n[step 2] → web_search {"query":"temporal"}\n');
});
