/**
 * Question routes of the HTTP API: what waits for input (questions to the user and client-side
 * tools' calls), and answers. They go through the same client code as the CLI and the MCP server
 * (`client/questions.ts`), so every door says the same about finished runs and refused answers
 * (the run's validator's own reason).
 */
import { waitingCallFilter, waitingCallIds } from './waiting-calls';
import type { Client } from '@temporalio/client';
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { formatZodIssues } from '../../shared/zod-issues';
import type { QuestionErrorCode } from '../../client/questions';
import { QuestionRequestError, answerQuestion, listQuestions } from '../../client/questions';

/** Body of an answer: any JSON value, and optionally which door sends it (default `api`). */
const AnswerBodySchema = z
  .object({
    answer: z.unknown(),
    by: z.string().min(1).max(64).optional(),
  })
  .strict()
  .refine((b) => b.answer !== undefined, {
    message: 'give the answer: { "answer": <JSON value> }',
    path: ['answer'],
  });

const STATUS: Record<QuestionErrorCode, 400 | 404 | 409 | 504> = {
  not_found: 404,
  finished: 409,
  not_waiting: 409,
  already_answered: 409,
  invalid_answer: 400,
  timed_out: 504,
};

function failed(c: Context, err: unknown) {
  if (err instanceof QuestionRequestError)
    return c.json({ error: err.message, code: err.code }, STATUS[err.code]);
  throw err;
}

/**
 * Adds:
 * - `GET /api/questions[?run=<id>][&user=<user>][&kind=question|client_tool]` → `{ questions: [{
 *   workflowId, toolCallId, kind, tool, question, args?, schema?, hasDefault, default?, deadline,
 *   parent? }] }`, of one run (with its sub-agents') or of every running agent run
 * - `POST /api/questions/:run/:id` `{ answer[, by] }` → `{ toolCallId, answered: true }`
 *
 * Errors: 400 for a bad body or an answer the run refused (`code: invalid_answer`, the run's
 * reason), 404 for an unknown run, 409 for a finished run, a call that does not wait, or one that
 * was already answered (`code: already_answered`).
 */
export function registerQuestionRoutes(app: Hono, client: Client): void {
  app.get('/api/questions', async (c) => {
    const f = waitingCallFilter(c);
    if (!f.ok) return f.res;
    const kind = c.req.query('kind');
    if (kind !== undefined && kind !== 'question' && kind !== 'client_tool') {
      return c.json({ error: 'kind must be "question" or "client_tool"' }, 400);
    }
    try {
      const questions = await listQuestions(client, {
        ...f.filter,
        ...(kind ? { kind } : {}),
      });
      return c.json({ questions });
    } catch (err) {
      return failed(c, err);
    }
  });

  app.post('/api/questions/:run/:id', async (c) => {
    const ids = waitingCallIds(c);
    if (!ids.ok) return ids.res;
    const { run, toolCallId } = ids;
    let body: unknown;
    try {
      body = await c.req.json();
    } catch (err) {
      return c.json(
        {
          error: `body must be JSON (Content-Type: application/json): ${(err as Error).message}`,
          code: 'invalid_answer',
        },
        400,
      );
    }
    const parsed = AnswerBodySchema.safeParse(body);
    if (!parsed.success) return c.json({ error: formatZodIssues(parsed.error), code: 'invalid_answer' }, 400);
    try {
      return c.json(
        await answerQuestion(client, run, toolCallId, parsed.data.answer, { by: parsed.data.by ?? 'api' }),
      );
    } catch (err) {
      return failed(c, err);
    }
  });
}
