/**
 * Run routes of the HTTP API: runs from Temporal visibility, a run's live state, events and
 * transcript (its queries), and its final answer with its citations resolved for people, in the
 * same rendering the CLI prints.
 */
import { TEMPORAL_LIMITS } from '../../shared/temporal-limits';
import { inboxUserProblem } from '../../shared/identifiers';
import { retryingActivities } from '../../client/retries';
import { runBuild } from '../../client/run-build';
import type { RetryingActivityView } from '../../shared/api-shapes';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import { RunNotFoundError } from '../../client/temporal-errors';
import type { Context, Hono } from 'hono';
import type { AgentStatus } from '../../shared/agent';
import { AGENT_WORKFLOW_TYPE, eventsQuery, stateQuery, transcriptQuery } from '../../shared/agent';
import { formatAnswer } from '../../shared/render-citations';
import {
  AgentLastToolKey,
  AgentModelKey,
  AgentStatusKey,
  AgentStepKey,
} from '../../shared/search-attributes';
import { resolveRunAnswer } from '../../client/answer';
import { NotificationTargetError, explainTargetError } from '../../client/notification-client';
import { hasAgentSearchAttributes } from '../../client/start-run';

/**
 * Adds `GET /api/runs/:id/answer` → `{ workflowId, status, answer, output?, body, text, markdown,
 * citations, unknownCitations }`: `answer` is the raw final answer (null while the run works),
 * `output` the answer parsed when the run has an output schema, `body` shows it
 * with numbered references, `text` and `markdown` with the sources also listed under it, `citations`
 * lists the cited sources (number, title, location, URL, passage), for a page that shows them
 * itself next to `body`. 404 for an unknown run.
 */
export function registerRunRoutes(app: Hono, client: Client): void {
  registerRunViews(app, client);
  app.get('/api/runs/:id/answer', async (c) => {
    const workflowId = c.req.param('id');
    if (!workflowId || workflowId.length > TEMPORAL_LIMITS.idBytes) {
      return c.json({ error: `id must be a workflow id of 1–${TEMPORAL_LIMITS.idBytes} characters` }, 400);
    }
    let state;
    try {
      state = await client.workflow.getHandle(workflowId).query(stateQuery);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError)
        return c.json({ error: new RunNotFoundError(workflowId).message }, 404);
      throw err;
    }
    if (state.answer === null) {
      return c.json({
        workflowId,
        status: state.status,
        answer: null,
        body: null,
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
      ...(state.output === undefined ? {} : { output: state.output }),
      body: resolved.rendered.text,
      text: formatAnswer(resolved.rendered, 'text'),
      markdown: formatAnswer(resolved.rendered, 'markdown'),
      citations: resolved.rendered.citations,
      unknownCitations: resolved.rendered.unknown,
      ...(resolved.ok ? {} : { warning: resolved.error }),
    });
  });
}

/** Statuses the runs list filters by (the `AgentStatus` search attribute). */
export const RUN_STATUSES: readonly AgentStatus[] = [
  'running',
  'waiting_for_approval',
  'waiting_for_input',
  'completed',
  'stopped',
  'failed',
  'cancelled',
];

/** Most runs a `?user=` list reads to find the ones that notify that user. */
const USER_SCAN_RUNS = 1000;

/** Most runs one list answer holds. */
export const MAX_RUNS_PER_LIST = 200;

import type { RunSummary } from '../../shared/api-shapes';
export type { RunSummary } from '../../shared/api-shapes';

function summary(wf: WorkflowExecutionInfo): RunSummary {
  const sa = wf.typedSearchAttributes;
  const task = wf.memo?.task;
  return {
    workflowId: wf.workflowId,
    execution: wf.status.name,
    status: sa.get(AgentStatusKey) ?? null,
    started: wf.startTime.toISOString(),
    closed: wf.closeTime?.toISOString() ?? null,
    step: sa.get(AgentStepKey) ?? null,
    lastTool: sa.get(AgentLastToolKey) ?? null,
    model: sa.get(AgentModelKey) ?? null,
    task: typeof task === 'string' ? task : null,
  };
}

function badId(c: Context, id: string) {
  return !id || id.length > TEMPORAL_LIMITS.idBytes
    ? c.json({ error: `id must be a workflow id of 1–${TEMPORAL_LIMITS.idBytes} characters` }, 400)
    : undefined;
}

/** Runs a query of a run, answering 404/503 the way the notification routes do. */
async function ask<T>(c: Context, workflowId: string, fn: () => Promise<T>): Promise<T | Response> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError)
      return c.json({ error: new RunNotFoundError(workflowId).message }, 404);
    const explained = explainTargetError(err, workflowId);
    if (
      explained instanceof NotificationTargetError &&
      ['no_worker', 'unreachable'].includes(explained.code)
    ) {
      c.header('Retry-After', '5');
      return c.json({ error: explained.message, code: explained.code }, 503);
    }
    throw err;
  }
}

/**
 * Adds the routes the web UI's runs pages read:
 * - `GET /api/runs[?status=<agent status>][&limit=N]` → `{ runs: RunSummary[] }`, newest first
 * - `GET /api/runs/:id` → `{ workflowId, execution, started, closed, task, state }` (`state`: the
 *   `state` query)
 * - `GET /api/runs/:id/events[?since=N]` → `{ events }` (the `events` query)
 * - `GET /api/runs/:id/transcript[?limit=N]` → the `transcript` query's page
 */
function registerRunViews(app: Hono, client: Client): void {
  app.get('/api/runs', async (c) => {
    const status = c.req.query('status');
    const user = c.req.query('user');
    const rawLimit = c.req.query('limit') ?? '50';
    if (user !== undefined) {
      const problem = inboxUserProblem(user);
      if (problem) return c.json({ error: `user: ${problem}` }, 400);
    }
    if (status !== undefined && status !== '' && !RUN_STATUSES.includes(status as AgentStatus)) {
      return c.json({ error: `status must be one of ${RUN_STATUSES.join(', ')}` }, 400);
    }
    if (!/^[1-9]\d{0,3}$/.test(rawLimit) || Number(rawLimit) > MAX_RUNS_PER_LIST) {
      return c.json({ error: `limit must be a whole number from 1 to ${MAX_RUNS_PER_LIST}` }, 400);
    }
    const conditions = [`WorkflowType = '${AGENT_WORKFLOW_TYPE}'`];
    if (status) {
      if (!(await hasAgentSearchAttributes(client))) {
        return c.json(
          { error: 'Filtering by status needs the agent search attributes, which this namespace lacks' },
          400,
        );
      }
      // The value is one of RUN_STATUSES, so it needs no quoting beyond this.
      conditions.push(`${AgentStatusKey.name} = '${status}'`);
    }
    const runs: RunSummary[] = [];
    const limit = Number(rawLimit);
    // `user`: the runs that notify this user's inbox (their memo says so; memos are not
    // searchable, so the newest runs are read, at most USER_SCAN_RUNS of them).
    let scanned = 0;
    for await (const wf of client.workflow.list({ query: conditions.join(' AND '), pageSize: limit })) {
      scanned += 1;
      if (user === undefined || wf.memo?.notifyUser === user) runs.push(summary(wf));
      if (runs.length >= limit || (user !== undefined && scanned >= USER_SCAN_RUNS)) break;
    }
    return c.json({ runs });
  });

  app.get('/api/runs/:id', async (c) => {
    const workflowId = c.req.param('id');
    const bad = badId(c, workflowId);
    if (bad) return bad;
    const handle = client.workflow.getHandle(workflowId);
    const described = await ask(c, workflowId, () => handle.describe());
    if (described instanceof Response) return described;
    const state = await ask(c, workflowId, () => handle.query(stateQuery));
    if (state instanceof Response) return state;
    const task = described.memo?.task;
    return c.json({
      workflowId,
      execution: described.status.name,
      started: described.startTime.toISOString(),
      closed: described.closeTime?.toISOString() ?? null,
      task: typeof task === 'string' ? task : null,
      state,
      build: runBuild(described),
      retrying: retryingActivities(described).map((r): RetryingActivityView => ({
        activity: r.activity,
        attempt: r.attempt,
        lastError: r.lastError,
        ...(r.nextAttemptAt ? { nextAttemptAt: r.nextAttemptAt.toISOString() } : {}),
      })),
    });
  });

  app.get('/api/runs/:id/events', async (c) => {
    const workflowId = c.req.param('id');
    const rawSince = c.req.query('since');
    const bad = badId(c, workflowId);
    if (bad) return bad;
    if (rawSince !== undefined && !/^\d{1,15}$/.test(rawSince)) {
      return c.json({ error: 'since must be an event number (a whole number ≥ 0)' }, 400);
    }
    const handle = client.workflow.getHandle(workflowId);
    const events = await ask(c, workflowId, () =>
      handle.query(eventsQuery, rawSince !== undefined ? { since: Number(rawSince) } : {}),
    );
    if (events instanceof Response) return events;
    return c.json({ events });
  });

  app.get('/api/runs/:id/transcript', async (c) => {
    const workflowId = c.req.param('id');
    const rawLimit = c.req.query('limit');
    const bad = badId(c, workflowId);
    if (bad) return bad;
    if (rawLimit !== undefined && !/^[1-9]\d{0,5}$/.test(rawLimit)) {
      return c.json({ error: 'limit must be a whole number ≥ 1' }, 400);
    }
    const handle = client.workflow.getHandle(workflowId);
    const page = await ask(c, workflowId, () =>
      handle.query(transcriptQuery, rawLimit !== undefined ? { limit: Number(rawLimit) } : {}),
    );
    if (page instanceof Response) return page;
    return c.json(page);
  });
}
