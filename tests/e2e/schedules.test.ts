/**
 * Recurring agent runs on Temporal Schedules, on a real dev server with a worker process: the
 * time-skipping test server does not implement the schedule service (CreateSchedule answers
 * UNIMPLEMENTED), so firings are real, every second. A schedule's firings are ordinary runs
 * (completed, listed by /api/runs, read by `status`, notifying their inbox, under the input's run
 * limits); the overlap policy skips firings while a run is still going; a paused schedule fires
 * nothing until unpaused; and mistakes get messages that say what to fix, from the CLI and the API.
 * The runs page lists schedules and its buttons act on them (chromium). The tests run at once
 * (each on its own schedule), which keeps the file short.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startApiServer } from '../../server/api/server';
import type { RunningApiServer } from '../../server/api/server';
import type { RunSummary, ScheduleDetails, ScheduleSummary } from '../../shared/api-shapes';
import { runCli } from '../../testkit/processes';
import { tempDir, uid } from '../../testkit/temporal';
import { launchChromium } from '../support/browser';
import { useDevServer } from '../support/environments';

const dev = useDevServer({ worker: true, queue: 'schedules' });
let api: RunningApiServer;
const dir = tempDir('schedules');

beforeAll(async () => {
  api = await startApiServer({ client: dev.fx.client, taskQueue: dev.taskQueue, host: '127.0.0.1', port: 0 });
  dev.defer(() => api.close());
});

/** The demo script's own task, so the CLI adds no note about it. */
const DEMO_TASK =
  'Plan my Tokyo trip budget: 4 hotel nights at 182.50 EUR, a 912 EUR flight, plus a 10% reserve. What time is it there now?';

/** Writes a run input file, as `run --input` takes it. */
function inputFile(input: Record<string, unknown>): string {
  const file = path.join(dir, `${uid('input')}.json`);
  fs.writeFileSync(file, JSON.stringify(input));
  return file;
}

/** Polls `fn` until it returns something other than undefined, or fails saying what it waited for. */
async function eventually<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function call<T>(method: string, p: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${api.url}${p}`, {
    method,
    ...(body !== undefined
      ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
      : {}),
  });
  return { status: res.status, body: (await res.json()) as T };
}

const describeSchedule = async (id: string) =>
  (await call<{ schedule: ScheduleDetails }>('GET', `/api/schedules/${id}`)).body.schedule;

/** Deletes the schedule and ends the runs it left going, so nothing fires into the next test. */
async function cleanUp(id: string): Promise<void> {
  const d = await describeSchedule(id);
  await dev.fx.client.schedule.getHandle(id).delete();
  await Promise.all(
    d.runningRuns.map((run) =>
      dev.fx.client.workflow
        .getHandle(run)
        .terminate('test over')
        .catch(() => undefined),
    ),
  );
}

test.concurrent(
  'each firing is an ordinary run: it completes, notifies its inbox, keeps its limits, and /api/runs and status list it',
  async () => {
    const id = uid('every-second');
    const user = uid('sched');
    const file = inputFile({
      task: DEMO_TASK,
      model: { provider: 'scripted', script: 'demo' },
      policy: { maxSteps: 10 },
      notify: { user },
    });
    const created = await runCli(['schedule', 'create', id, '--every', '1s', '--input', file], dev.env);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.stdout).toContain(
      `Created schedule ${id}\n${id}: active\n  fires: every 1s; overlap skip; catch-up window 5m`,
    );
    expect(created.stdout).toContain(`on task queue "${dev.taskQueue}", model scripted`);

    // Two firings' runs completed, listed like any run (visibility lags a run's close by a moment).
    const completed = await eventually('two completed scheduled runs', async () => {
      const { body } = await call<{ runs: RunSummary[] }>('GET', '/api/runs?status=completed&limit=50');
      const mine = body.runs.filter((r) => r.workflowId.startsWith(`${id}-`));
      return mine.length >= 2 ? mine : undefined;
    });
    await runCli(['schedule', 'pause', id], dev.env);
    // A firing started before the pause may still be going: its progress notification would update
    // the inbox's notification in place while the test reads it.
    await eventually(
      'the firings under way at the pause to end',
      async () => ((await describeSchedule(id)).runningRuns.length ? undefined : true),
      30_000,
    );
    for (const run of completed) {
      expect(run.workflowId).toMatch(new RegExp(`^${id}-\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$`));
      expect(run).toEqual(
        expect.objectContaining({
          execution: 'COMPLETED',
          status: 'completed',
          model: 'scripted',
          task: DEMO_TASK,
        }),
      );
    }
    const first = completed[0]!.workflowId;
    const [status, inbox, described, listed] = await Promise.all([
      runCli(['status', first], dev.env),
      call<{ notifications: { message: string }[] }>('GET', `/api/notifications?target=inbox:${user}`),
      runCli(['schedule', 'describe', id, '--json'], dev.env),
      runCli(['schedule', 'list'], dev.env),
    ]);
    expect(status.code).toBe(0);
    // The input's own limit (10 steps, not the default 25) applies to every firing's run.
    expect(status.stdout).toContain(`${first}: completed (workflow COMPLETED), step 3/10`);
    // The runs notified the inbox named in the input, as a run started by `run` does (the demo
    // script's progress notification updates in place: one per inbox, whatever the runs).
    expect(inbox.status).toBe(200);
    expect(inbox.body.notifications.map((n) => n.message)).toEqual([
      expect.stringMatching(/^Budget ready: /),
    ]);
    const d = JSON.parse(described.stdout) as ScheduleDetails;
    expect(d).toEqual(
      expect.objectContaining({ scheduleId: id, paused: true, timing: 'every 1s', task: DEMO_TASK }),
    );
    expect(d.counts.started).toBeGreaterThanOrEqual(2);
    expect(d.recentRuns.map((r) => r.workflowId)).toEqual(
      expect.arrayContaining(completed.map((r) => r.workflowId)),
    );
    expect(listed.stdout).toMatch(new RegExp(`^${id}  paused  every 1s  last ${id}-`, 'm'));
    const deleted = await runCli(['schedule', 'delete', id], dev.env);
    expect(deleted.stdout).toBe(`Deleted schedule ${id}\n`);
    // It is gone for every door (the CLI's own answer to an unknown id is checked below).
    expect((await call('GET', `/api/schedules/${id}`)).status).toBe(404);
  },
  60_000,
);

test.concurrent(
  'overlap skip: while a run is still going, firings and triggers start nothing and are counted',
  async () => {
    const id = uid('skip');
    // No worker polls this queue: the first run stays running, so every later firing overlaps it.
    const queue = uid('no-worker');
    const created = await runCli(
      ['schedule', 'create', id, 'hello', '--every', '1s', '--task-queue', queue, '--json'],
      dev.env,
    );
    expect(created.code).toBe(0);
    expect((JSON.parse(created.stdout) as ScheduleDetails).overlap).toBe('skip');
    try {
      const d = await eventually('a skipped firing', async () => {
        const s = await describeSchedule(id);
        return s.counts.skippedOverlap >= 1 ? s : undefined;
      });
      expect(d.counts.started).toBe(1);
      expect(d.runningRuns).toEqual([d.recentRuns[0]?.workflowId]);
      const skipped = await runCli(['schedule', 'trigger', id], dev.env);
      expect(skipped.code).toBe(2);
      expect(skipped.stderr).toContain(
        `Skipped: ${d.runningRuns[0]} is still going and the overlap policy skips`,
      );
      // A trigger may override the policy for itself: then a second run goes alongside the first.
      const forced = await runCli(['schedule', 'trigger', id, '--overlap', 'allow-all', '--json'], dev.env);
      expect(forced.code).toBe(0);
      const r = JSON.parse(forced.stdout) as { outcome: string; workflowId: string };
      expect(r.outcome).toBe('started');
      expect(r.workflowId).not.toBe(d.runningRuns[0]);
      expect((await dev.fx.client.workflow.getHandle(r.workflowId).describe()).status.name).toBe('RUNNING');
    } finally {
      await cleanUp(id);
    }
  },
  60_000,
);

test.concurrent(
  'pause over the API: a paused schedule fires nothing until unpaused; trigger still fires it',
  async () => {
    const id = uid('paused');
    const input = {
      task: 'hello',
      model: { provider: 'scripted', script: 'demo' },
      tools: ['get_time', 'calculator', 'notify_user'],
    };
    const created = await call<{ schedule: ScheduleDetails }>('POST', '/api/schedules', {
      id,
      input,
      every: '1s',
      paused: true,
      note: 'not yet',
    });
    expect(created.status).toBe(201);
    expect(created.body.schedule).toEqual(
      expect.objectContaining({ paused: true, note: 'not yet', nextRuns: [] }),
    );
    try {
      await new Promise((r) => setTimeout(r, 1_500));
      expect((await describeSchedule(id)).counts.started).toBe(0);
      const listed = await call<{ schedules: ScheduleSummary[] }>('GET', '/api/schedules');
      expect(listed.body.schedules.find((s) => s.scheduleId === id)).toEqual(
        expect.objectContaining({ paused: true, note: 'not yet', timing: 'every 1s', task: 'hello' }),
      );

      const unpaused = await call<{ schedule: ScheduleDetails }>('POST', `/api/schedules/${id}/unpause`);
      expect(unpaused.status).toBe(200);
      expect(unpaused.body.schedule.paused).toBe(false);
      await eventually('a firing after unpause', async () =>
        (await describeSchedule(id)).counts.started >= 1 ? true : undefined,
      );

      const paused = await call<{ schedule: ScheduleDetails }>('POST', `/api/schedules/${id}/pause`, {
        note: 'enough',
      });
      expect(paused.body.schedule).toEqual(expect.objectContaining({ paused: true, note: 'enough' }));
      const startedWhenPaused = (await describeSchedule(id)).counts.started;
      await new Promise((r) => setTimeout(r, 1_500));
      expect((await describeSchedule(id)).counts.started).toBe(startedWhenPaused);

      const triggered = await call<{ outcome: string; workflowId: string }>(
        'POST',
        `/api/schedules/${id}/trigger`,
        {
          overlap: 'allow-all',
        },
      );
      expect(triggered.body.outcome).toBe('started');
      expect(triggered.body.workflowId.startsWith(`${id}-`)).toBe(true);
      const run = await call<{ workflowId: string; task: string }>(
        'GET',
        `/api/runs/${encodeURIComponent(triggered.body.workflowId)}`,
      );
      expect(run.body).toEqual(
        expect.objectContaining({ workflowId: triggered.body.workflowId, task: 'hello' }),
      );
    } finally {
      await cleanUp(id);
    }
    const deleted = await call<{ error: string }>('DELETE', `/api/schedules/${id}`);
    expect(deleted).toEqual({
      status: 404,
      body: { error: `No schedule with id "${id}" in this namespace`, code: 'not_found' },
    });
  },
  60_000,
);

test.concurrent(
  'mistakes are refused with what to fix, from the CLI and the API',
  async () => {
    const id = uid('dup');
    const missing = path.join(dir, 'no-such-input.json');
    const cli = (args: string[]) => runCli(['schedule', ...args], dev.env);
    const [first, overlap, cron, noFile, noTiming, badId, huge, unknown, unknownTrigger] = await Promise.all([
      cli(['create', id, 'hello', '--cron', '0 9 * * *', '--paused']),
      cli(['create', uid('x'), 'hello', '--every', '1h', '--overlap', 'never']),
      cli(['create', uid('x'), 'hello', '--cron', '61 * * * *']),
      cli(['create', uid('x'), '--every', '1h', '--input', missing]),
      cli(['create', uid('x'), 'hello']),
      cli(['create', 'bad id', 'hello', '--every', '1h']),
      cli(['create', uid('x'), '--every', '1h', '--input', inputFile({ task: 'x'.repeat(200 * 1024) })]),
      cli(['pause', 'no-such-schedule']),
      cli(['trigger', 'no-such-schedule']),
    ]);
    expect(first.code).toBe(0);
    expect(overlap.stderr).toContain(
      'unknown overlap policy "never": use one of skip, buffer-one, buffer-all, cancel-other, terminate-other, allow-all',
    );
    expect(cron.stderr).toContain(
      'error: Invalid schedule: cron "61 * * * *": Minute is not in range [0-59]\n',
    );
    expect(noFile.stderr).toBe(`error: --input ${missing}: no such file\n`);
    expect(noTiming.stderr).toBe('error: Say when it fires: --cron "0 9 * * *" or --every 1h\n');
    expect(badId.stderr).toMatch(
      /^error: Invalid schedule id: schedule id "bad id" may contain only ASCII letters/,
    );
    // The run input's own checks apply (here its task's budget), before anything is created.
    expect(huge.stderr).toMatch(/^error: Invalid run: task/);
    for (const r of [unknown, unknownTrigger]) {
      expect(r.code).toBe(1);
      expect(r.stderr).toBe('error: No schedule with id "no-such-schedule" in this namespace\n');
    }
    for (const r of [overlap, cron, noFile, noTiming, badId, huge]) expect(r.code).not.toBe(0);

    const again = await cli(['create', id, 'hello', '--every', '1h']);
    expect(again.stderr).toContain(
      `error: A schedule with id "${id}" already exists: choose another id, or delete it first`,
    );

    const input = { task: 'hello', model: { provider: 'scripted', script: 'demo' } };
    const [dup, badOverlap, extra, secret, notFound] = await Promise.all([
      call('POST', '/api/schedules', { id, input, every: '1h' }),
      call('POST', '/api/schedules', { id: uid('x'), input, every: '1h', overlap: 'never' }),
      call('POST', '/api/schedules', { id: uid('x'), input, every: '1h', cronn: '* * * * *' }),
      call('POST', '/api/schedules', {
        id: uid('x'),
        input: { ...input, system: 'Bearer abcdefghijklmnop' },
        every: '1h',
      }),
      call('POST', '/api/schedules/no-such-schedule/trigger'),
    ]);
    expect(dup.status).toBe(409);
    expect(badOverlap).toEqual({
      status: 400,
      body: { error: expect.stringContaining('overlap must be one of skip, buffer-one') },
    });
    expect(extra.status).toBe(400);
    expect(JSON.stringify(extra.body)).toContain('cronn');
    expect(secret).toEqual({
      status: 400,
      body: {
        error: expect.stringMatching(/^Invalid run: the run input holds what looks like a credential/),
        code: 'invalid',
      },
    });
    expect(notFound).toEqual({
      status: 404,
      body: { error: 'No schedule with id "no-such-schedule" in this namespace', code: 'not_found' },
    });
    await dev.fx.client.schedule.getHandle(id).delete();
  },
  60_000,
);

test.concurrent(
  'the runs page lists a schedule; its Unpause and Run now buttons act on it',
  async () => {
    const id = uid('web');
    const input = {
      task: 'hello from the page',
      model: { provider: 'scripted', script: 'demo' },
      tools: ['get_time', 'calculator', 'notify_user'],
    };
    const created = await call('POST', '/api/schedules', {
      id,
      input,
      every: '1d',
      paused: true,
      note: 'set up',
    });
    expect(created.status).toBe(201);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(`${api.url}/runs`);
      const row = page.locator(`tr[data-schedule="${id}"]`);
      await row.waitFor();
      expect(await page.locator('section.schedules').isVisible()).toBe(true);
      expect(await row.locator('td[data-label="State"]').textContent()).toBe('paused');
      expect(await row.locator('td[data-label="Fires"]').textContent()).toBe('every 1d');
      expect(await row.locator('td[data-label="Task"]').textContent()).toBe('hello from the page');

      await row.getByRole('button', { name: 'Unpause', exact: true }).click();
      await row.getByRole('button', { name: 'Pause', exact: true }).waitFor();
      expect(await row.locator('td[data-label="State"]').textContent()).toBe('active');
      expect((await describeSchedule(id)).paused).toBe(false);

      await row.getByRole('button', { name: 'Run now' }).click();
      const link = row.locator('td[data-label="Last run"] a');
      await link.waitFor();
      const runId = (await link.textContent()) ?? '';
      expect(runId.startsWith(`${id}-`)).toBe(true);
      expect(await link.getAttribute('href')).toBe(`/runs/${encodeURIComponent(runId)}`);
      expect((await describeSchedule(id)).counts.started).toBe(1);
    } finally {
      await browser.close();
      await cleanUp(id);
    }
  },
  60_000,
);
