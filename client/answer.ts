/**
 * A run's final answer as people read it: citation marks numbered and the cited sources listed,
 * using the run's `citations` query. Shared by `run`, `status` and the HTTP API.
 */
import type { Client } from '@temporalio/client';
// The messages alone, not the input's schemas: `durable-agent status` loads no more than it uses.
import { citationsQuery } from '../shared/agent/messages';
import type { Citation } from '../shared/citations';
import type { RenderedAnswer } from '../shared/render-citations';
import { hasCitationMarks, renderCitations } from '../shared/render-citations';

/** How long to wait for the `citations` query (a closed run is queried through a worker replaying it). */
const CITATIONS_QUERY_MS = 10_000;

/** The answer with its marks resolved, or, when the run's citations cannot be read, why not. */
export type ResolvedAnswer =
  { ok: true; rendered: RenderedAnswer } | { ok: false; rendered: RenderedAnswer; error: string };

/**
 * Resolves the marks of `answer` through the run's `citations` query. An answer without marks needs
 * no query. When the query fails (no worker polls the run's task queue), the answer comes back
 * unchanged with the reason, so the caller still prints it.
 */
export async function resolveRunAnswer(
  client: Client,
  workflowId: string,
  answer: string,
): Promise<ResolvedAnswer> {
  if (!hasCitationMarks(answer)) return { ok: true, rendered: { text: answer, citations: [], unknown: [] } };
  let citations: Citation[];
  try {
    citations = await client.withDeadline(Date.now() + CITATIONS_QUERY_MS, () =>
      client.workflow.getHandle(workflowId).query(citationsQuery),
    );
  } catch (err) {
    return {
      ok: false,
      rendered: { text: answer, citations: [], unknown: [] },
      error: `the run's citations could not be read (${(err as Error).message}); is a worker running?`,
    };
  }
  return { ok: true, rendered: renderCitations(answer, citations) };
}
