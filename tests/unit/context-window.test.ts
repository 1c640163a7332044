import type { ChatMessage } from '../../shared/conversation';
import { contextWindow } from '../../shared/conversation';

function conversation(steps: number): ChatMessage[] {
  const out: ChatMessage[] = [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'task' },
  ];
  for (let i = 1; i <= steps; i++) {
    out.push({
      role: 'assistant',
      content: null,
      toolCalls: [
        { id: `c${i}a`, name: 't', arguments: {} },
        { id: `c${i}b`, name: 't', arguments: {} },
      ],
    });
    out.push({ role: 'tool', toolCallId: `c${i}a`, name: 't', content: `${i}a` });
    out.push({ role: 'tool', toolCallId: `c${i}b`, name: 't', content: `${i}b` });
  }
  return out;
}

test('short conversations are sent whole', () => {
  const c = conversation(3);
  expect(contextWindow(c, 20)).toBe(c);
});

test('long ones keep the system prompt and task, then the latest turns, never an orphaned tool result', () => {
  const c = conversation(50);
  for (const max of [4, 5, 6, 10, 33]) {
    const w = contextWindow(c, max);
    // At most the results of one turn (two calls here) beyond the bound.
    expect(w.length).toBeLessThanOrEqual(max + 2);
    expect(w.length).toBeLessThan(c.length);
    expect(w.slice(0, 2)).toEqual(c.slice(0, 2));
    expect(w[2]?.role).toBe('assistant');
    expect(w.at(-1)).toBe(c.at(-1));
    // Every tool result in the window answers a call that is in the window too.
    const calls = new Set(
      w.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((t) => t.id) : [])),
    );
    for (const m of w) if (m.role === 'tool') expect(calls.has(m.toolCallId)).toBe(true);
  }
});
