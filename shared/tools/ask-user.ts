import { z } from 'zod';
import { schemaOnce } from '../schema-once';
import { QUESTION_LIMITS, answerSchemaProblems, checkAnswer, questionTextProblem } from '../agent/questions';
import { defineTool } from './define';

/** Arguments of `ask_user`. */
export const AskUserArgs = schemaOnce('shared/tools/ask-user#AskUserArgs', () =>
  z.object({
    question: z.string().describe('The question, as the user reads it / 向用户提出的问题'),
    schema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'JSON Schema the answer must match: {"enum": ["a","b"]} for a choice, {"type": "number"}, {"type": "boolean"}, {"type": "string", "format": "date"}, or an object; omit for free text / 答案须符合的 JSON Schema；省略则为自由文本',
      ),
    timeout_seconds: z
      .number()
      .int()
      .min(1)
      .max(QUESTION_LIMITS.maxTimeoutSeconds)
      .optional()
      .describe('How long to wait for the answer, in seconds; default: the run’s policy / 等待答案的秒数'),
    default: z
      .unknown()
      .optional()
      .describe('The answer to take when the user does not answer in time / 超时未答时采用的答案'),
  }),
);

/** The arguments once checked. */
export type AskUserArgs = z.infer<typeof AskUserArgs>;

/**
 * Checks `ask_user` arguments: the shape, the question, a schema the run can enforce, and a default
 * that matches it. Errors go to the model verbatim, saying what to fix.
 */
function checkAskUserArgs(raw: unknown): { ok: true; value: unknown } | { ok: false; error: string } {
  const parsed = AskUserArgs.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      error: `Invalid arguments for ask_user: ${issue ? `${issue.path.join('.') || '(input)'}: ${issue.message}` : 'give { question }'}. Fix them and call the tool again.`,
    };
  }
  const args = parsed.data;
  const problem = questionTextProblem(args.question);
  if (problem) return { ok: false, error: `Invalid arguments for ask_user: ${problem}.` };
  if (args.schema !== undefined) {
    const problems = answerSchemaProblems(args.schema);
    if (problems.length)
      return { ok: false, error: `Invalid arguments for ask_user: schema: ${problems.join('; ')}.` };
  }
  if (args.default !== undefined) {
    const checked = checkAnswer(args.schema, args.default);
    if (!checked.ok)
      return { ok: false, error: `Invalid arguments for ask_user: default: ${checked.error}.` };
  }
  return { ok: true, value: args };
}

/**
 * `ask_user`: asks the run's user a question and waits for the answer (minutes or days) without
 * holding a worker: the run waits in the workflow, and the answer comes in as an update checked
 * against the question's schema. No activity runs it.
 */
export const askUserTool = defineTool({
  name: 'ask_user',
  description:
    'Asks the user a question and waits for the answer: a choice, a number, a date, yes/no, text or a small form (give a JSON Schema). Use it when you need something only the user knows; the answer is the tool result.',
  description_zh:
    '向用户提问并等待回答：选项、数字、日期、是/否、文本或小表单（给出 JSON Schema）。答案即工具结果。',
  category: 'human',
  sign: 'q',
  inputs: AskUserArgs,
  output: 'the user’s answer (text as it is, anything else as JSON), or that no answer came in time',
  // Never scheduled: the workflow itself waits for the answer (see workflows/agent/questions.ts).
  activity: { startToCloseTimeout: '1 second' },
  checkArgs: checkAskUserArgs,
});
