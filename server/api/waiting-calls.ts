/**
 * What the routes of calls that wait for people (approvals, questions) read from a request alike:
 * the list's `run` and `user` filters, and the run and tool call ids of an answer's path.
 */
import type { Context } from 'hono';
import { TEMPORAL_LIMITS } from '../../shared/temporal-limits';

/** `?run=&user=` of a list of waiting calls, or a 400 saying what is wrong. */
export function waitingCallFilter(
  c: Context,
): { ok: true; filter: { workflowId?: string; user?: string } } | { ok: false; res: Response } {
  const run = c.req.query('run');
  const user = c.req.query('user');
  if (
    (run !== undefined && (!run || run.length > TEMPORAL_LIMITS.idBytes)) ||
    (user !== undefined && !user)
  ) {
    return {
      ok: false,
      res: c.json(
        { error: `run and user must be non-empty (run at most ${TEMPORAL_LIMITS.idBytes} characters)` },
        400,
      ),
    };
  }
  return { ok: true, filter: { ...(run ? { workflowId: run } : {}), ...(user ? { user } : {}) } };
}

/** `:run/:id` of an answer to a waiting call, or a 400 when either is too long. */
export function waitingCallIds(
  c: Context,
): { ok: true; run: string; toolCallId: string } | { ok: false; res: Response } {
  const run = c.req.param('run') ?? '';
  const toolCallId = c.req.param('id') ?? '';
  if (run.length > TEMPORAL_LIMITS.idBytes || toolCallId.length > TEMPORAL_LIMITS.idBytes) {
    return {
      ok: false,
      res: c.json({ error: `ids must be at most ${TEMPORAL_LIMITS.idBytes} characters` }, 400),
    };
  }
  return { ok: true, run, toolCallId };
}
