/**
 * The inboxes that exist, for the web UI's first page (`/` asks whose inbox to open): an inbox is a
 * workflow created by its first notification, so visibility lists them like runs.
 */
import type { Client } from '@temporalio/client';
import type { Hono } from 'hono';
import { INBOX_WORKFLOW_TYPE, inboxUser } from '../../shared/notifications/messages';

/**
 * Most inboxes one answer names: the newest, so the answer (and the page's list) stays small in a
 * namespace of many users; anyone else's inbox is still opened by typing the name.
 */
export const MAX_INBOXES_LISTED = 100;

/**
 * Adds `GET /api/inboxes` → `{ users: string[], more: boolean }`: the users whose inbox exists,
 * newest first, at most `limit` ({@link MAX_INBOXES_LISTED}); `more` when there are others.
 */
export function registerInboxRoutes(app: Hono, client: Client, limit = MAX_INBOXES_LISTED): void {
  app.get('/api/inboxes', async (c) => {
    const users: string[] = [];
    let more = false;
    // Running only: an inbox that continued as new is one inbox, not one per execution.
    const query = `WorkflowType = '${INBOX_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`;
    for await (const wf of client.workflow.list({ query, pageSize: limit + 1 })) {
      const user = inboxUser(wf.workflowId);
      if (user === null) continue;
      if (users.length === limit) {
        more = true;
        break;
      }
      users.push(user);
    }
    return c.json({ users, more });
  });
}
