/**
 * `run` and `status` when no worker polls the task queue: they say so with the command that starts
 * one, `run` keeps waiting, and a worker started later picks the runs up. Ctrl-C on `run` leaves the
 * run going (and says how to cancel it) or, with --cancel-on-exit, cancels it.
 */
import { stopDevServer } from '../../workers/dev-server';
import { startDevServerOnFreePort } from '../../testkit/dev-server';
import type { WorkerProcess } from '../../testkit/processes';
import { runCli, startCli, startWorkerProcess } from '../../testkit/processes';
import { uid } from '../../testkit/temporal';

let dataDir: string;
let port: number;
let env: Record<string, string>;
let worker: WorkerProcess | undefined;

beforeAll(async () => {
  ({ dataDir, port } = await startDevServerOnFreePort());
  env = { TEMPORAL_ADDRESS: `127.0.0.1:${port}`, DURABLE_AGENT_TASK_QUEUE: uid('nw') };
}, 120_000);

afterAll(async () => {
  worker?.child.kill('SIGTERM');
  if (worker) await worker.exited;
  await stopDevServer({ dataDir, port });
});

test('without a worker run and status say so; Ctrl-C detaches or cancels; a later worker picks the runs up', async () => {
  const queue = env.DURABLE_AGENT_TASK_QUEUE!;
  const start = `start one with: DURABLE_AGENT_TASK_QUEUE=${queue} npx durable-agent --address 127.0.0.1:${port} worker`;
  const task = ['--tools', 'get_time,calculator,notify_user', 'Plan my Tokyo trip'];

  const waiting = startCli(env, ['run', '--id', uid('waits'), ...task]);
  await waiting.waitFor('stderr', `No worker polls task queue "${queue}"`);
  expect(waiting.stderr()).toContain(start);
  const waitingId = /Started (\S+)/.exec(waiting.stdout())![1]!;

  const status = await runCli(['status', waitingId], env);
  expect(status.code).toBe(1);
  expect(status.stdout).toContain(`${waitingId}: workflow RUNNING; No worker polls task queue "${queue}"`);
  expect(status.stdout).toContain(start);

  const detached = startCli(env, ['run', ...task]);
  await detached.waitFor('stderr', 'No worker polls task queue');
  const detachedId = /Started (\S+)/.exec(detached.stdout())![1]!;
  detached.child.kill('SIGINT');
  const detachedCode = await detached.exited;
  expect({ code: detachedCode, signal: detached.child.signalCode, stderr: detached.stderr() }).toMatchObject({
    code: 3,
  });
  expect(detached.stderr()).toContain(`the run goes on; cancel it with: durable-agent cancel ${detachedId}`);

  const cancelling = startCli(env, ['run', '--cancel-on-exit', ...task]);
  await cancelling.waitFor('stderr', 'No worker polls task queue');
  cancelling.child.kill('SIGINT');
  await cancelling.waitFor('stderr', 'Cancelling ');

  worker = await startWorkerProcess(env);

  expect(await waiting.exited).toBe(0);
  expect(waiting.stderr()).toContain(`A worker polls task queue "${queue}" now; the run goes on.`);
  expect(waiting.stdout()).toContain('the trip budget is 1806.2 EUR');
  expect({ code: await cancelling.exited, stderr: cancelling.stderr() }).toMatchObject({ code: 130 });
  expect(cancelling.stdout()).not.toContain('the trip budget');

  // The detached run went on without its command.
  const deadline = Date.now() + 60_000;
  let detachedStatus: { workflowStatus?: string } = {};
  while (detachedStatus.workflowStatus !== 'COMPLETED' && Date.now() < deadline) {
    const s = await runCli(['status', detachedId, '--json'], env);
    detachedStatus = JSON.parse(s.stdout) as { workflowStatus?: string };
    await new Promise((r) => setTimeout(r, 250));
  }
  expect(detachedStatus).toMatchObject({ workflowStatus: 'COMPLETED', status: 'completed' });
}, 240_000);
