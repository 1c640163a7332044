/**
 * A run started by someone else's code, not by this project's start function: by a plain Temporal
 * client, or as the child of a user's own workflow. It has no memo and no search attributes from
 * its starter, so the workflow sets them itself, and the runs list (`/api/runs`, what the web UI's
 * runs page reads) and `/api/runs/:id` show its status, step, model and task like any run's. A
 * `--model local` run is listed with the file name of the worker's local model. A real dev server
 * (with the agent search attributes) and a worker process.
 */
import path from 'node:path';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { startApiServer } from '../../server/api/server';
import type { RunningApiServer } from '../../server/api/server';
import type { AgentInput } from '../../shared/agent';
import type { RunSummary } from '../../shared/api-shapes';
import { runCli } from '../../testkit/processes';
import { tempDir, uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

/** The worker's local model: a file that is not there, so a local run fails at its first model call. */
const localModel = path.join(tempDir('models'), 'my-model.gguf');
const dev = useDevServer({ worker: { DURABLE_AGENT_LOCAL_MODEL: localModel }, queue: 'self-described' });
let api: RunningApiServer;

beforeAll(async () => {
  api = await startApiServer({ client: dev.fx.client, taskQueue: dev.taskQueue, host: '127.0.0.1', port: 0 });
  dev.defer(() => api.close());
});

function tripInput(user: string): AgentInput {
  return {
    task: 'Plan my Tokyo trip budget',
    model: { provider: 'scripted', script: 'demo' },
    tools: ['get_time', 'calculator', 'notify_user'],
    notify: { user },
  };
}

/** The run's summary in `/api/runs?<query>`, once visibility (which lags a moment) has it. */
async function listed(query: string, id: string): Promise<RunSummary | undefined> {
  for (let i = 0; i < 50; i++) {
    const res = await fetch(`${api.url}/api/runs?${query}`);
    expect(res.status).toBe(200);
    const run = ((await res.json()) as { runs: RunSummary[] }).runs.find((r) => r.workflowId === id);
    if (run) return run;
    await new Promise((r) => setTimeout(r, 200));
  }
  return undefined;
}

async function expectDescribed(id: string, user: string): Promise<void> {
  expect(await listed('status=completed', id)).toEqual(
    expect.objectContaining({
      workflowId: id,
      execution: 'COMPLETED',
      status: 'completed',
      step: 3,
      model: 'scripted',
      task: 'Plan my Tokyo trip budget',
    }),
  );
  // The memo names the run's user, so the inbox's run filter (`?user=`) finds it.
  expect(await listed(`user=${user}`, id)).toBeDefined();
  const one = (await (await fetch(`${api.url}/api/runs/${id}`)).json()) as { task: string | null };
  expect(one.task).toBe('Plan my Tokyo trip budget');
}

test('a run started by a plain Temporal client lists its status, step, model and task', async () => {
  const id = uid('plain');
  const user = uid('plain-user');
  const handle = await dev.fx.client.workflow.start('agentWorkflow', {
    taskQueue: dev.taskQueue,
    workflowId: id,
    args: [tripInput(user)],
  });
  await handle.result();
  await expectDescribed(id, user);
}, 120_000);

test('an agent run as the child of a user’s own workflow lists its status, step, model and task', async () => {
  const parentQueue = uid('user-workflows');
  const connection = await NativeConnection.connect({ address: dev.fx.address });
  const id = uid('child');
  const user = uid('child-user');
  try {
    const worker = await Worker.create({
      connection,
      taskQueue: parentQueue,
      workflowBundle: await bundleWorkflowCode({
        workflowsPath: require.resolve('../fixtures/user-workflows'),
        logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
      }),
    });
    await worker.runUntil(
      dev.fx.client.workflow.execute('tripPlanner', {
        taskQueue: parentQueue,
        workflowId: uid('planner'),
        args: [dev.taskQueue, id, tripInput(user)],
      }),
    );
  } finally {
    await connection.close();
  }
  await expectDescribed(id, user);
}, 120_000);

test('a --model local run is listed with the file name of the worker’s local model', async () => {
  const id = uid('local');
  const out = await runCli(['run', '--model', 'local', '--id', id, 'How many customers?'], dev.env);
  expect(out.code).toBe(1);
  const run = await listed('status=failed', id);
  expect(run?.model).toBe('local:my-model.gguf');
}, 120_000);
