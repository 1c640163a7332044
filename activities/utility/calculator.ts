import { ApplicationFailure } from '@temporalio/common';
import type { z } from 'zod';
import type { CalculatorArgs } from '../../shared/tools/calculator';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';

/** Evaluates + - * / % ^ with parentheses, unary minus and decimals, by recursive descent (never eval). */
export function evaluateExpression(expression: string): number {
  const src = expression.replace(/[\s,_]/g, '');
  let pos = 0;
  const fail = (why: string): never => {
    throw ApplicationFailure.create({
      type: 'InvalidExpression',
      message: `Cannot evaluate "${expression}": ${why}. Use numbers, + - * / % ^ and parentheses.`,
      nonRetryable: true,
    });
  };
  const peek = () => src[pos];
  const expr = (): number => {
    let v = term();
    while (peek() === '+' || peek() === '-') v = src[pos++] === '+' ? v + term() : v - term();
    return v;
  };
  const term = (): number => {
    let v = unary();
    while (peek() === '*' || peek() === '/' || peek() === '%') {
      const op = src[pos++];
      const r = unary();
      if ((op === '/' || op === '%') && r === 0) fail('division by zero');
      v = op === '*' ? v * r : op === '/' ? v / r : v % r;
    }
    return v;
  };
  // Unary minus binds looser than ^, as in mathematics: -2^2 is -(2^2).
  const unary = (): number => {
    if (peek() === '-') {
      pos++;
      return -unary();
    }
    if (peek() === '+') {
      pos++;
      return unary();
    }
    return power();
  };
  const power = (): number => {
    const base = atom();
    if (peek() === '^') {
      pos++;
      return base ** unary();
    }
    return base;
  };
  const atom = (): number => {
    if (peek() === '(') {
      pos++;
      const v = expr();
      if (peek() !== ')') fail(`missing ")" at position ${pos + 1}`);
      pos++;
      return v;
    }
    const m = /^(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?/.exec(src.slice(pos));
    if (!m)
      return fail(peek() === undefined ? 'unexpected end' : `unexpected "${peek()}" at position ${pos + 1}`);
    pos += m[0].length;
    return Number(m[0]);
  };
  const value = expr();
  if (pos < src.length) fail(`unexpected "${peek()}" at position ${pos + 1}`);
  if (!Number.isFinite(value)) fail('the result is not a finite number');
  return value;
}

/** The `calculator` activity. */
export async function calculator({
  args,
}: ToolActivityInput<z.output<typeof CalculatorArgs>>): Promise<ToolResult> {
  const value = evaluateExpression(args.expression);
  const rounded = Number(value.toPrecision(15));
  return { content: String(rounded), data: { expression: args.expression, value: rounded } };
}
