/**
 * Run routes of the HTTP API: a run's final answer with its citations resolved for people, in the
 * same rendering the CLI prints.
 */
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Hono } from 'hono';
import { stateQuery } from '../../shared/agent';
import { formatAnswer } from '../../shared/render-citations';
import { resolveRunAnswer } from '../answer';

/** Workflow ids are Temporal's: any non-empty string, bounded here to keep requests small. */
const MAX_WORKFLOW_ID_CHARS = 1000;

/**
 * Adds `GET /api/runs/:id/answer` → `{ workflowId, status, answer, text, markdown, citations,
 * unknownCitations }`: `answer` is the raw final answer (null while the run works), `text` and
 * `markdown` show it with numbered references and the sources listed under it, `citations` lists
 * the cited sources (number, title, location, URL, passage). 404 for an unknown run.
 */
export function registerRunRoutes(app: Hono, client: Client): void {
  app.get('/api/runs/:id/answer', async (c) => {
    const workflowId = c.req.param('id');
    if (!workflowId || workflowId.length > MAX_WORKFLOW_ID_CHARS) {
      return c.json({ error: `id must be a workflow id of 1–${MAX_WORKFLOW_ID_CHARS} characters` }, 400);
    }
    let state;
    try {
      state = await client.workflow.getHandle(workflowId).query(stateQuery);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError)
        return c.json({ error: `No run with id "${workflowId}"` }, 404);
      throw err;
    }
    if (state.answer === null) {
      return c.json({
        workflowId,
        status: state.status,
        answer: null,
        text: null,
        markdown: null,
        citations: [],
      });
    }
    const resolved = await resolveRunAnswer(client, workflowId, state.answer);
    return c.json({
      workflowId,
      status: state.status,
      answer: state.answer,
      text: formatAnswer(resolved.rendered, 'text'),
      markdown: formatAnswer(resolved.rendered, 'markdown'),
      citations: resolved.rendered.citations,
      unknownCitations: resolved.rendered.unknown,
      ...(resolved.ok ? {} : { warning: resolved.error }),
    });
  });
}
