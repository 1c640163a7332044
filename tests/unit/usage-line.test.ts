/** The closing line of `run` counts in the right number: "1 tool call", not "1 tool calls". */
import { usageLine } from '../../cli/progress';
import { counted } from '../../shared/words';

const usage = (toolCalls: number) => ({ inputTokens: 10, outputTokens: 2, modelCalls: 1, toolCalls });

test('one of a kind is singular, none and many are plural', () => {
  expect(usageLine({ steps: 1, usage: usage(1) })).toBe('1 step, 1 tool call, 10+2 tokens');
  expect(usageLine({ steps: 2, usage: usage(0) })).toBe('2 steps, 0 tool calls, 10+2 tokens');
  expect(usageLine({ steps: 3, usage: usage(5) })).toBe('3 steps, 5 tool calls, 10+2 tokens');
  expect(counted(1, 'model call')).toBe('1 model call');
});
