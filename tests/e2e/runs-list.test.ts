/**
 * The runs list: a forked run shows its status, step, model and task like every run, a status
 * filter finds it, and `?user=` keeps the runs that notify one inbox (what its Run filter offers).
 * A real dev server (with the agent search attributes) and worker.
 */
import { startApiServer } from '../../server/api/server';
import type { RunningApiServer } from '../../server/api/server';
import type { RunSummary } from '../../shared/api-shapes';
import { runCli } from '../../testkit/processes';
import { uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const dev = useDevServer({ worker: true, queue: 'fork-listing' });
let api: RunningApiServer;

beforeAll(async () => {
  api = await startApiServer({ client: dev.fx.client, taskQueue: dev.taskQueue, host: '127.0.0.1', port: 0 });
  dev.defer(() => api.close());
});

async function listed(status: string, id: string): Promise<RunSummary | undefined> {
  // Visibility lags a run's close by a moment.
  for (let i = 0; i < 50; i++) {
    const res = await fetch(`${api.url}/api/runs?status=${status}`);
    const body = (await res.json()) as { runs: RunSummary[] };
    const run = body.runs.find((r) => r.workflowId === id);
    if (run) return run;
    await new Promise((r) => setTimeout(r, 200));
  }
  return undefined;
}

test('a fork shows its status, step, model and task in /api/runs, and ?status=completed lists it', async () => {
  const source = uid('fork-source');
  const fork = uid('fork-of');
  const first = await runCli(['run', 'Plan my Tokyo trip budget', '--id', source], dev.env);
  expect(first.code).toBe(0);
  const forked = await runCli(['fork', source, '--from-step', '1', '--id', fork], dev.env);
  expect(forked.stdout).toContain(`Started ${fork}, forked from ${source} after step 1`);
  expect(forked.code).toBe(0);
  const run = await listed('completed', fork);
  expect(run).toEqual(
    expect.objectContaining({
      workflowId: fork,
      execution: 'COMPLETED',
      status: 'completed',
      model: 'scripted',
      task: 'Plan my Tokyo trip budget',
    }),
  );
  expect(run?.step).toBeGreaterThan(1);
}, 120_000);

test('?user= lists the runs that notify that inbox, not every run of the namespace', async () => {
  const user = uid('ana');
  const mine = uid('notifies');
  const other = uid('other');
  expect((await runCli(['run', 'hello', '--id', mine, '--notify-user', user], dev.env)).code).toBe(0);
  expect((await runCli(['run', 'hello', '--id', other], dev.env)).code).toBe(0);
  let ids: string[] = [];
  for (let i = 0; i < 50 && !ids.includes(mine); i++) {
    const res = await fetch(`${api.url}/api/runs?user=${user}`);
    expect(res.status).toBe(200);
    ids = ((await res.json()) as { runs: RunSummary[] }).runs.map((r) => r.workflowId);
    if (!ids.includes(mine)) await new Promise((r) => setTimeout(r, 200));
  }
  expect(ids).toEqual([mine]);
  const bad = await fetch(`${api.url}/api/runs?user=${encodeURIComponent('a b')}`);
  expect(bad.status).toBe(400);
  expect(((await bad.json()) as { error: string }).error).toMatch(/^user: /);
}, 120_000);
