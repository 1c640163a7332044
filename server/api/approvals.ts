/**
 * Approval routes of the HTTP API: what waits for a person, and decisions. They go through the same
 * client code as the CLI (`approval-client.ts`), so both say the same about finished runs and
 * refused decisions (the run's validator's own message).
 */
import { waitingCallFilter, waitingCallIds } from './waiting-calls';
import type { Client } from '@temporalio/client';
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { formatZodIssues } from '../../shared/zod-issues';
import { ApprovalRequestError, decideApproval, listApprovals } from '../../client/approval-client';

/** Body of a decision: approve (optionally with edited arguments) or reject with a reason. */
const DecisionBodySchema = z
  .object({
    approve: z.boolean({ error: 'approve must be true or false' }),
    reason: z.string().max(2000).optional(),
    args: z.record(z.string(), z.unknown()).optional(),
  })
  .strict()
  .refine((b) => b.approve || (b.reason ?? '').trim().length > 0, {
    message: 'a rejection needs a reason (shown to the model)',
    path: ['reason'],
  });

const STATUS = { not_found: 404, finished: 409, refused: 400 } as const;

function failed(c: Context, err: unknown) {
  if (err instanceof ApprovalRequestError)
    return c.json({ error: err.message, code: err.code }, STATUS[err.code]);
  throw err;
}

/**
 * Adds:
 * - `GET /api/approvals[?run=<id>][&user=<user>]` → `{ approvals: [{ workflowId, toolCallId, tool,
 *   args, summary, reason, step, deadline }] }`, of one run or of every running agent run
 * - `POST /api/approvals/:run/:id` `{ approve: true[, args][, reason] }` or `{ approve: false,
 *   reason }` → `{ toolCallId, approved, editedArgs? }`
 *
 * Errors: 400 for a bad body or a decision the run refused (unknown or decided id, invalid edited
 * arguments: the run's message), 404 for an unknown run, 409 for a finished run.
 */
export function registerApprovalRoutes(app: Hono, client: Client): void {
  app.get('/api/approvals', async (c) => {
    const f = waitingCallFilter(c);
    if (!f.ok) return f.res;
    try {
      const approvals = await listApprovals(client, {
        ...f.filter,
      });
      return c.json({ approvals });
    } catch (err) {
      return failed(c, err);
    }
  });

  app.post('/api/approvals/:run/:id', async (c) => {
    const ids = waitingCallIds(c);
    if (!ids.ok) return ids.res;
    const { run, toolCallId } = ids;
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      return c.json({ error: 'body must be JSON (Content-Type: application/json)' }, 400);
    }
    const parsed = DecisionBodySchema.safeParse(body);
    if (!parsed.success) return c.json({ error: formatZodIssues(parsed.error) }, 400);
    const { approve, reason, args } = parsed.data;
    try {
      const r = await decideApproval(client, run, {
        toolCallId,
        approve,
        ...(reason ? { reason } : {}),
        ...(args !== undefined ? { args } : {}),
      });
      return c.json(r);
    } catch (err) {
      return failed(c, err);
    }
  });
}
