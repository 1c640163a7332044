import { ApplicationFailure } from '@temporalio/common';
import { evaluateExpression } from '../../activities/utility/calculator';

test.each([
  ['1+2*3', 7],
  ['(1+2)*3', 9],
  ['2^3^2', 512],
  ['-2^2', -4],
  ['10 % 4', 2],
  ['1,000 * 1.5', 1500],
  ['.5 + 1e3', 1000.5],
  ['--3', 3],
  ['(4 * 182.50 + 912) * 1.10', 1806.2000000000003],
])('evaluates %s', (expr, value) => {
  expect(evaluateExpression(expr)).toBeCloseTo(value, 9);
});

test.each([
  ['1/0', /division by zero/],
  ['2+', /unexpected end/],
  ['(1+2', /missing "\)"/],
  ['1+2)', /unexpected "\)" at position 4/],
  ['process.exit()', /unexpected "p" at position 1/],
  ['10^400', /not a finite number/],
])('refuses %s with a non-retryable, explanatory error', (expr, why) => {
  let err: unknown;
  try {
    evaluateExpression(expr);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ApplicationFailure);
  expect((err as ApplicationFailure).nonRetryable).toBe(true);
  expect((err as ApplicationFailure).type).toBe('InvalidExpression');
  expect((err as Error).message).toMatch(why);
  expect((err as Error).message).toMatch(/Use numbers, \+ - \* \/ % \^ and parentheses/);
});
