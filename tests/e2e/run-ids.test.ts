/**
 * Run ids at the CLI against a real dev server and a worker process: an id already used (closed or
 * running) is refused unless `--reuse`, which Temporal's id reuse/conflict policies then honour,
 * and an id with control characters is refused without a raw control character reaching the terminal.
 */
import { runCli } from '../../testkit/processes';
import { uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const dev = useDevServer({ worker: true, queue: 'run-ids', cleanExit: true });

/** Run ids (execution ids) Temporal holds under a workflow id, newest first. */
async function executions(workflowId: string): Promise<string[]> {
  const runs: string[] = [];
  for await (const w of dev.fx.client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
    runs.push(w.runId);
  return runs;
}

test('a closed run’s id is refused without --reuse, and --reuse starts a new run under it', async () => {
  const id = uid('closed');
  const args = ['run', '--id', id, '--json', '--tools', 'get_time,calculator,notify_user', 'Plan the budget'];
  const first = await runCli(args, dev.env);
  expect(first.code).toBe(0);
  expect(JSON.parse(first.stdout)).toMatchObject({ workflowId: id, outcome: 'completed' });

  const again = await runCli(args, dev.env);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain(`A run with id "${id}" already exists (running or closed)`);
  expect(again.stderr).toContain('--reuse');
  expect(await executions(id)).toHaveLength(1);

  const reused = await runCli([...args, '--reuse'], dev.env);
  expect(reused.code).toBe(0);
  expect(await executions(id)).toHaveLength(2);
}, 120_000);

test('a running run’s id is refused; with --reuse the running run is followed, not duplicated', async () => {
  const id = uid('running');
  // No worker polls this queue, so the run stays running.
  const idle = { ...dev.env, DURABLE_AGENT_TASK_QUEUE: uid('nobody-polls') };
  const args = ['run', '--id', id, '--no-wait', 'stay running'];
  const first = await runCli(args, idle);
  expect(first.code).toBe(0);
  expect(first.stdout.trim()).toBe(id);

  const again = await runCli(args, idle);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('already exists');

  const reused = await runCli([...args, '--reuse'], idle);
  expect(reused.code).toBe(0);
  expect(await executions(id)).toHaveLength(1);
  await dev.fx.client.workflow.getHandle(id).terminate('test over');
}, 120_000);

test('control characters in an id are refused and shown escaped, never raw', async () => {
  const hostile = 'evil\u001b[2J\u001b]0;owned\u0007\u202eid';
  for (const args of [
    ['run', '--id', hostile, 'x'],
    ['status', hostile],
    ['notifications', `inbox:${hostile}`],
  ]) {
    const out = await runCli(args, dev.env);
    expect(out.code).toBe(1);
    // eslint-disable-next-line no-control-regex -- the point of the test
    expect(`${out.stdout}${out.stderr}`).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u202a-\u202e]/);
    expect(out.stderr).toContain('\\u001b');
  }
}, 60_000);
