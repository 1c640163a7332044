/**
 * Schedule routes of the HTTP API: recurring agent runs on Temporal Schedules. They go through the
 * same client code as `durable-agent schedule` (client/schedules.ts), so both refuse the same
 * mistakes in the same words, and each firing is an ordinary run that `/api/runs` lists.
 */
import type { Client } from '@temporalio/client';
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { OVERLAP_POLICY_NAMES } from '../../shared/schedule-spec';
import type { OverlapPolicyName } from '../../shared/schedule-spec';
import { jsonBody as body } from './json-body';
import {
  MAX_SCHEDULES_PER_LIST,
  ScheduleRequestError,
  createAgentSchedule,
  deleteAgentSchedule,
  describeAgentSchedule,
  listAgentSchedules,
  pauseAgentSchedule,
  triggerAgentSchedule,
  unpauseAgentSchedule,
} from '../../client/schedules';

const overlap = z.enum(OVERLAP_POLICY_NAMES as [OverlapPolicyName, ...OverlapPolicyName[]], {
  error: `overlap must be one of ${OVERLAP_POLICY_NAMES.join(', ')}`,
});

/** Body of `POST /api/schedules`: the schedule's settings (checked by client/schedules.ts) and its run input. */
const CreateBodySchema = z
  .object({
    id: z.string({ error: 'id must be a schedule id' }),
    input: z.record(z.string(), z.unknown(), { error: 'input must be the run input, a JSON object' }),
    cron: z.string().optional(),
    every: z.string().optional(),
    timezone: z.string().optional(),
    overlap: overlap.optional(),
    catchupWindow: z.string().optional(),
    paused: z.boolean().optional(),
    note: z.string().optional(),
    taskQueue: z.string().min(1).max(1000).optional(),
  })
  .strict();

const NoteBodySchema = z.object({ note: z.string().max(1000).optional() }).strict();
const TriggerBodySchema = z.object({ overlap: overlap.optional() }).strict();

const STATUS = { invalid: 400, not_found: 404, already_exists: 409 } as const;

/** A refused request as its status and message; anything else goes to the app's error handler. */
function failed(c: Context, err: unknown) {
  if (err instanceof ScheduleRequestError)
    return c.json({ error: err.message, code: err.code }, STATUS[err.code]);
  throw err;
}

/**
 * Adds:
 * - `GET /api/schedules[?limit=N]` → `{ schedules: ScheduleSummary[] }`, by id
 * - `POST /api/schedules` `{ id, input, cron | every, timezone?, overlap?, catchupWindow?, paused?,
 *   note?, taskQueue? }` → 201 `{ schedule: ScheduleDetails }`
 * - `GET /api/schedules/:id` → `{ schedule }`
 * - `POST /api/schedules/:id/pause`, `…/unpause` `{ note? }` → `{ schedule }`
 * - `POST /api/schedules/:id/trigger` `{ overlap? }` → `{ outcome: 'started', workflowId } |
 *   { outcome: 'skipped', running } | { outcome: 'pending' }`
 * - `DELETE /api/schedules/:id` → `{ deleted: id }`
 *
 * Errors: 400 for a bad body or a refused schedule (the message says what to fix), 404 for an
 * unknown schedule, 409 for an id that is taken.
 */
export function registerScheduleRoutes(app: Hono, client: Client, taskQueue: string): void {
  app.get('/api/schedules', async (c) => {
    const rawLimit = c.req.query('limit') ?? String(MAX_SCHEDULES_PER_LIST);
    if (!/^[1-9]\d{0,3}$/.test(rawLimit) || Number(rawLimit) > MAX_SCHEDULES_PER_LIST)
      return c.json({ error: `limit must be a whole number from 1 to ${MAX_SCHEDULES_PER_LIST}` }, 400);
    return c.json({ schedules: await listAgentSchedules(client, Number(rawLimit)) });
  });

  app.post('/api/schedules', async (c) => {
    const b = await body(c, CreateBodySchema);
    if (!b.ok) return b.res;
    const { id, input, paused, taskQueue: queue, ...settings } = b.value;
    try {
      const schedule = await createAgentSchedule(client, {
        scheduleId: id,
        input,
        taskQueue: queue ?? taskQueue,
        settings,
        paused: paused ?? false,
      });
      return c.json({ schedule }, 201);
    } catch (err) {
      return failed(c, err);
    }
  });

  app.get('/api/schedules/:id', async (c) => {
    try {
      return c.json({ schedule: await describeAgentSchedule(client, c.req.param('id')) });
    } catch (err) {
      return failed(c, err);
    }
  });

  for (const [action, change] of [
    ['pause', pauseAgentSchedule],
    ['unpause', unpauseAgentSchedule],
  ] as const) {
    app.post(`/api/schedules/:id/${action}`, async (c) => {
      const b = await body(c, NoteBodySchema);
      if (!b.ok) return b.res;
      try {
        return c.json({ schedule: await change(client, c.req.param('id'), b.value.note) });
      } catch (err) {
        return failed(c, err);
      }
    });
  }

  app.post('/api/schedules/:id/trigger', async (c) => {
    const b = await body(c, TriggerBodySchema);
    if (!b.ok) return b.res;
    try {
      return c.json(await triggerAgentSchedule(client, c.req.param('id'), b.value.overlap));
    } catch (err) {
      return failed(c, err);
    }
  });

  app.delete('/api/schedules/:id', async (c) => {
    const id = c.req.param('id');
    try {
      await deleteAgentSchedule(client, id);
      return c.json({ deleted: id });
    } catch (err) {
      return failed(c, err);
    }
  });
}
