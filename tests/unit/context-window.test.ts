import type { WindowItem, WindowPolicy } from '../../shared/context-window';
import { elisionStub, estimateTokens, planWindow } from '../../shared/context-window';

/** A conversation after the head: `steps` turns, each an assistant call and two tool results. */
function turns(steps: number, resultBytes = 100): WindowItem[] {
  const out: WindowItem[] = [];
  for (let i = 1; i <= steps; i++) {
    out.push({ role: 'assistant', bytes: 80 });
    out.push({ role: 'tool', bytes: resultBytes, tool: 'sql_query', step: i });
    out.push({ role: 'tool', bytes: resultBytes, tool: 'sql_query', step: i });
  }
  return out;
}

const BIG: WindowPolicy = {
  contextTokens: 1_000_000,
  reserveTokens: 4096,
  fixedTokens: 500,
  maxMessages: 200,
  keepWholeTurns: 3,
  elideOverBytes: 2048,
};

/** The window never opens with a tool result (so every result's call is in it). */
function expectTurnBoundaries(items: WindowItem[], start: number): void {
  expect(items[start]?.role).not.toBe('tool');
}

test('short conversations are sent whole', () => {
  const items = turns(3);
  const plan = planWindow(items, BIG);
  expect(plan.start).toBe(0);
  expect(plan.choices.every((c) => c.kind === 'whole')).toBe(true);
  expect(plan.elided).toBe(0);
  expect(plan.dropped).toBe(0);
});

test('maxMessages keeps the latest messages, never splitting a turn', () => {
  const items = turns(50);
  for (const max of [4, 5, 6, 10, 33]) {
    const plan = planWindow(items, { ...BIG, maxMessages: max });
    const sent = items.length - plan.start;
    expect(sent).toBeLessThanOrEqual(max);
    expect(sent).toBeGreaterThanOrEqual(max - 2);
    expectTurnBoundaries(items, plan.start);
  }
});

test('old large tool results become stubs; the latest turns stay whole', () => {
  const items = turns(10, 60_000);
  const plan = planWindow(items, BIG);
  expect(plan.start).toBe(0);
  // Results of the 3 latest turns whole, the 14 older ones elided.
  const kinds = plan.choices.map((c) => c.kind);
  expect(kinds.slice(-9).filter((k) => k === 'whole')).toHaveLength(9);
  expect(plan.elided).toBe(14);
  expect(kinds.slice(0, -9).filter((k) => k === 'stub')).toHaveLength(14);
});

test('the window fits the context: tokens stay under the budget however long the run', () => {
  const policy = { ...BIG, contextTokens: 8192, reserveTokens: 1024, elideOverBytes: 1_000_000 };
  for (const steps of [10, 100, 1000]) {
    const items = turns(steps, 3000);
    const plan = planWindow(items, { ...policy, maxMessages: 10_000 });
    expect(plan.tokens).toBeLessThanOrEqual(policy.contextTokens - policy.reserveTokens);
    expectTurnBoundaries(items, plan.start);
    expect(plan.choices.at(-1)?.kind).toBe('whole');
  }
});

test('a newest result larger than the whole context is cut to fit, never dropped', () => {
  const items: WindowItem[] = [
    { role: 'assistant', bytes: 50 },
    { role: 'tool', bytes: 5_000_000, tool: 'sql_query', step: 1 },
  ];
  const plan = planWindow(items, { ...BIG, contextTokens: 4096, reserveTokens: 512 });
  expect(plan.start).toBe(0);
  const last = plan.choices.at(-1);
  expect(last?.kind).toBe('cut');
  if (last?.kind === 'cut') expect(estimateTokens(last.maxBytes)).toBeLessThanOrEqual(4096 - 512 - 500);
});

test('the elision stub names the tool, the step and the size, and says what to do', () => {
  expect(elisionStub({ tool: 'sql_query', step: 7, bytes: 61_440 })).toBe(
    '[Result of sql_query from step 7 (60 KiB) left out to keep the context small. Call sql_query again if you need it.]',
  );
});
