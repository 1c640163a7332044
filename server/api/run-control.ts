/**
 * Run control over HTTP: start a run, send it a message, cancel it — what `durable-agent run`,
 * `message` and `cancel` do, through the client SDK, so the input is checked exactly as the workflow
 * checks it and every refusal is one of the SDK's codes.
 */
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import type { AgentClientErrorCode } from '../../client/agent-client';
import type { AgentClient } from '../../client/agent-client';
import { AgentClientError } from '../../client/agent-client';
import type { AgentInput } from '../../shared/agent';
import { jsonBody as body } from './json-body';

/** How each of the SDK's refusals answers over HTTP. */
const STATUS: Record<AgentClientErrorCode, 400 | 404 | 409 | 503> = {
  invalid_input: 400,
  not_found: 404,
  finished: 409,
  refused: 409,
  already_answered: 409,
  id_taken: 409,
  no_worker: 503,
  unreachable: 503,
  run_failed: 409,
  run_cancelled: 409,
};

/** `POST /api/runs`: the run's input (checked by the SDK), and the workflow id when the caller picks it. */
const StartBodySchema = z.strictObject({
  input: z.record(z.string(), z.unknown()),
  id: z.string().optional(),
});
const MessageBodySchema = z.strictObject({ text: z.string() });

/** The SDK's refusal as `{ error, code }` with its status; anything else is the app's to report. */
function refused(c: Context, err: unknown): Response {
  if (!(err instanceof AgentClientError)) throw err;
  return c.json({ error: err.message, code: err.code }, STATUS[err.code]);
}

/**
 * Adds:
 * - `POST /api/runs` `{ input, id? }` → 201 `{ workflowId, links: { run, events, stream } }`;
 * - `POST /api/runs/:id/messages` `{ text }` → 202 `{ workflowId, accepted: true }` (read before the
 *   run's next model turn);
 * - `POST /api/runs/:id/cancel` → 202 `{ workflowId, cancelling: true }` (running tools are cancelled;
 *   the run's state stays readable).
 *
 * Refusals are `{ error, code }`: 400 `invalid_input` (the message names the field), 404
 * `not_found`, 409 `id_taken` or `finished`, 503 `unreachable`. `overRate(c, key)` answers 429 when
 * the key (`runs` for starts, the run's id otherwise) is past its budget of changes.
 */
export function registerRunControlRoutes(
  app: Hono,
  agents: AgentClient,
  overRate: (c: Context, key: string) => Response | undefined,
): void {
  app.post('/api/runs', async (c) => {
    const limited = overRate(c, 'runs');
    if (limited) return limited;
    const b = await body(c, StartBodySchema);
    if (!b.ok) return b.res;
    try {
      const run = await agents.start(b.value.input as unknown as AgentInput, {
        ...(b.value.id !== undefined ? { id: b.value.id } : {}),
      });
      const at = `/api/runs/${encodeURIComponent(run.id)}`;
      return c.json(
        { workflowId: run.id, links: { run: at, events: `${at}/events`, stream: `${at}/stream` } },
        201,
      );
    } catch (err) {
      return refused(c, err);
    }
  });

  app.post('/api/runs/:id/messages', async (c) => {
    const id = c.req.param('id');
    const limited = overRate(c, id);
    if (limited) return limited;
    const b = await body(c, MessageBodySchema);
    if (!b.ok) return b.res;
    try {
      await agents.run(id).message(b.value.text);
      return c.json({ workflowId: id, accepted: true }, 202);
    } catch (err) {
      return refused(c, err);
    }
  });

  app.post('/api/runs/:id/cancel', async (c) => {
    const id = c.req.param('id');
    const limited = overRate(c, id);
    if (limited) return limited;
    try {
      await agents.run(id).cancel();
      return c.json({ workflowId: id, cancelling: true }, 202);
    } catch (err) {
      return refused(c, err);
    }
  });
}
