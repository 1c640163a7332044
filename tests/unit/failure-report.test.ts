/** The closing list `npm test` prints (testkit/test-run.ts): a cut CI log's tail still names every failure. */
import { failureReport } from '../../testkit/test-run';

const failure = (n: number) => ({
  file: `tests/e2e/f${n}.test.ts`,
  test: `test ${n}`,
  message: `\nTypeError: thing ${n} is not a function\n${'    at frame\n'.repeat(20)}`,
});

test('a few failures are listed with their messages, and no index', () => {
  const lines = failureReport([failure(1), failure(2)]);
  expect(lines).toContain('Failed tests (2):');
  expect(lines).toContain('  ✕ tests/e2e/f1.test.ts › test 1');
  expect(lines.filter((l) => l.includes('at frame'))).toHaveLength(2 * 10);
  expect(lines.some((l) => l.startsWith('Failed tests, one line each'))).toBe(false);
});

test('many failures end with one line each, naming the test and the first line of its message', () => {
  const failures = Array.from({ length: 15 }, (_, i) => failure(i + 1));
  const lines = failureReport(failures, 6);
  const index = lines.indexOf('Failed tests, one line each (15):');
  expect(index).toBeGreaterThan(0);
  const tail = lines.slice(index + 1);
  expect(tail).toHaveLength(15);
  expect(tail[14]).toBe('  ✕ tests/e2e/f15.test.ts › test 15 — TypeError: thing 15 is not a function');
  expect(lines.filter((l) => l.includes('at frame'))).toHaveLength(15 * 4);
});

test('an index line keeps at most 160 characters of the message', () => {
  const long = { file: 'a.test.ts', test: 't', message: 'x'.repeat(500) };
  const lines = failureReport([long, long, long, long]);
  expect(lines.at(-1)).toBe(`  ✕ a.test.ts › t — ${'x'.repeat(160)}…`);
  expect(failureReport([])).toEqual([]);
});
