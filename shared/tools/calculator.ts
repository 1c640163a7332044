import { z } from 'zod';
import { schemaOnce } from '../schema-once';
import { defineTool } from './define';

/** Arguments of `calculator`. */
export const CalculatorArgs = schemaOnce('shared/tools/calculator#CalculatorArgs', () =>
  z.object({
    expression: z
      .string()
      .min(1)
      .max(500)
      .describe(
        'Arithmetic expression with + - * / % ^, parentheses and decimals, e.g. "(2+3)*4" / 算术表达式，例如 "(2+3)*4"',
      ),
  }),
);

/** `calculator`: evaluates an arithmetic expression exactly as written. */
export const calculatorTool = defineTool({
  name: 'calculator',
  description: 'Evaluates an arithmetic expression (+ - * / % ^ and parentheses) and returns the number.',
  description_zh: '计算算术表达式（支持 + - * / % ^ 和括号）并返回结果。',
  category: 'utility',
  sign: 'c',
  inputs: CalculatorArgs,
  output: 'the numeric result',
  local: true,
  activity: {
    startToCloseTimeout: '10 seconds',
    maximumAttempts: 3,
    nonRetryableErrorTypes: ['InvalidExpression'],
  },
});
