/**
 * `GET /api/runs/:id/stream`: a run as it happens, as server-sent events. Live tokens come from the
 * run's channel (activities/streaming), never from workflow history; the run's own events come
 * from its `events` query. Each event's id says where both stand (`<event seq>|<frame id>`), so a
 * client that reconnects with `Last-Event-ID` (EventSource does it by itself) gets what it missed
 * and nothing twice, even from another API process after a restart.
 *
 *   event: partial  the newest model call's answer so far, for a client that joins mid-answer
 *   event: token    one frame: `start` of a call attempt (a retry's text replaces the failed
 *                   attempt's), `text`, `tool` (tool-call arguments), `end`, `cut`
 *   event: run      one of the run's events (model_started, tool_finished, final_answer, …)
 *   event: end      the run closed: { status }
 */
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import { RunNotFoundError } from '../../client/temporal-errors';
import type { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { StreamChannel } from '../../activities/streaming';
import { eventsQuery } from '../../shared/agent';
import type { LiveEvent } from '../../client/live-tokens';
import { followLiveTokens } from '../../client/live-tokens';
import { startSseHeartbeat } from './sse-heartbeat';

/** Settings of the stream route. */
export interface RunStreamOptions {
  /** The live-token channel; null: the stream carries the run's events only. */
  channel: StreamChannel | null;
  /** How often the run's events are read (ms). */
  pollMs?: number;
  /** A comment line after this long without an event keeps proxies from closing the stream (ms). */
  heartbeatMs?: number;
}

/** Reads a `Last-Event-ID` of this route back: the run event seq and the frame id. */
export function parseStreamEventId(id: string | undefined): { seq: number; frame: string | null } {
  const m = /^(\d{1,15})\|(.*)$/.exec(id ?? '');
  if (!m) return { seq: 0, frame: null };
  return { seq: Number(m[1]), frame: m[2] ? m[2] : null };
}

export function registerRunStreamRoute(app: Hono, client: Client, opts: RunStreamOptions): void {
  const pollMs = opts.pollMs ?? 250;
  const heartbeatMs = opts.heartbeatMs ?? 15_000;
  app.get('/api/runs/:id/stream', async (c) => {
    const workflowId = c.req.param('id');
    if (!workflowId || workflowId.length > 1000)
      return c.json({ error: 'id must be a workflow id of 1–1000 characters' }, 400);
    const handle = client.workflow.getHandle(workflowId);
    try {
      await handle.describe();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError)
        return c.json({ error: new RunNotFoundError(workflowId).message }, 404);
      throw err;
    }
    const resume = parseStreamEventId(c.req.header('Last-Event-ID') ?? c.req.query('lastEventId'));
    return streamSSE(c, async (stream) => {
      const stop = new AbortController();
      stream.onAbort(() => stop.abort());
      let seq = resume.seq;
      let frame = resume.frame ?? '';
      const heartbeat = startSseHeartbeat(
        (t) => stream.write(t),
        heartbeatMs,
        () => stop.abort(),
      );
      // One write at a time: tokens and run events interleave, never tear.
      let writing: Promise<void> = Promise.resolve();
      const write = (event: string, data: unknown): Promise<void> => {
        writing = writing
          .then(async () => {
            if (stop.signal.aborted) return;
            heartbeat.wrote();
            await stream.writeSSE({ event, id: `${seq}|${frame}`, data: JSON.stringify(data) });
          })
          .catch(() => stop.abort());
        return writing;
      };
      const live = opts.channel
        ? followLiveTokens(opts.channel, workflowId, {
            after: resume.frame,
            onEvent: (e: LiveEvent) => {
              frame = e.id;
              return e.type === 'partial' ? write('partial', e.answer) : write('token', e.frame);
            },
          })
        : null;
      try {
        let closed: string | null = null;
        let lastDescribe = 0;
        while (!stop.signal.aborted) {
          try {
            for (const e of await handle.query(eventsQuery, { since: seq })) {
              seq = Math.max(seq, e.seq);
              await write('run', e);
            }
          } catch {
            // Between executions of a continue-as-new chain, or no worker yet: the next poll asks again.
          }
          if (closed) break;
          if (Date.now() - lastDescribe >= 1000) {
            lastDescribe = Date.now();
            const status = (await handle.describe().catch(() => undefined))?.status.name;
            // One more read of the events after the close, then the end.
            if (status && status !== 'RUNNING') closed = status;
          }
          if (!closed) await new Promise((r) => setTimeout(r, pollMs));
        }
        // Tokens still on their way (the end frame follows the answer) get a moment to arrive.
        if (closed) {
          await new Promise((r) => setTimeout(r, 200));
          await write('end', { status: closed });
        }
      } finally {
        live?.stop();
        heartbeat.stop();
        await writing;
      }
    });
  });
}
