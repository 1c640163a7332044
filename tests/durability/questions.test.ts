/**
 * A question waiting across failures, on the real dev server: the worker killed with SIGKILL while
 * the run waits for an answer, and the server itself stopped and started again while it waits.
 * Neither loses the question, its deadline, its notification or the answer: a new worker (or the
 * same one, reconnected) takes the answer and the run goes on with it.
 */
import { NativeConnection } from '@temporalio/worker';
import { devServerStatus, startDevServer } from '../../workers/dev-server';
import { startDevServerFixture } from '../../testkit/dev-server';
import type { AgentInput, AgentResult, AgentStateView } from '../../shared/agent';
import { stateQuery } from '../../shared/agent';
import type { Client } from '@temporalio/client';
import { answerQuestion, listQuestions } from '../../client/questions';
import { notificationDelivery } from '../../client/deliver';
import { createAgentWorker } from '../../workers/worker';
import { startWorkerProcess } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { testConfig, uid, workflowBundle } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const dev = useDevServer();

function input(): AgentInput {
  return {
    task: 'ask across failures',
    tools: ['ask_user', 'calculator'],
    model: {
      provider: 'scripted',
      turns: [
        callTurn(['ask_user', { question: 'How many?', schema: { type: 'integer', minimum: 1 } }, 'q']),
        callTurn(['calculator', { expression: '{{result:q}} * 10' }, 'c']),
        answerTurn('{{result:q}} × 10 = {{result:c}}'),
      ],
    },
  };
}

async function waitingState(client: Client, workflowId: string): Promise<AgentStateView> {
  for (let i = 0; i < 600; i++) {
    const s = await client.workflow
      .getHandle(workflowId)
      .query(stateQuery)
      .catch(() => null);
    if (s?.questions?.length) return s;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${workflowId} never asked`);
}

test('SIGKILL of the worker while a question waits: a new worker takes the answer, nothing asked twice', async () => {
  const taskQueue = uid('ask-crash');
  const env = { TEMPORAL_ADDRESS: dev.fx.address, DURABLE_AGENT_TASK_QUEUE: taskQueue };
  const first = await startWorkerProcess(env);
  const workflowId = uid('ask-crash-run');
  const handle = await dev.fx.client.workflow.start('agentWorkflow', {
    taskQueue,
    workflowId,
    args: [input()],
  });
  const before = await waitingState(dev.fx.client, workflowId);
  first.child.kill('SIGKILL');
  await first.exited;

  // The new worker rebuilds the run from its history: the same question, the same deadline.
  const second = await startWorkerProcess(env);
  try {
    const open = await listQuestions(dev.fx.client, { workflowId });
    expect(open.map((q) => [q.toolCallId, q.deadline])).toEqual([['q', before.questions?.[0]?.deadline]]);
    await answerQuestion(dev.fx.client, workflowId, 'q', 4, { by: 'test' });
    const result = (await handle.result()) as AgentResult;
    expect(result.answer).toBe('4 × 10 = 40');
    const history = await handle.fetchHistory();
    const asked = (history.events ?? []).filter(
      (e) =>
        e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'answerQuestion',
    );
    expect(asked).toHaveLength(1);
  } finally {
    second.child.kill('SIGTERM');
    await second.exited;
  }
}, 180_000);

test('the dev server stopped and started again while a question waits: the answer after it is taken', async () => {
  const fx = await startDevServerFixture();
  try {
    const server = { dataDir: fx.dataDir, port: fx.port };
    const taskQueue = uid('ask-restart');
    const connection = await NativeConnection.connect({ address: fx.address });
    const worker = await createAgentWorker({
      connection,
      namespace: 'default',
      config: testConfig({ taskQueue }),
      deliver: notificationDelivery(fx.client, taskQueue),
      taskQueue,
      workflowBundle: await workflowBundle(),
    });
    const running = worker.run();
    try {
      const workflowId = uid('ask-restart-run');
      await fx.client.workflow.start('agentWorkflow', { taskQueue, workflowId, args: [input()] });
      const before = await waitingState(fx.client, workflowId);
      const { pid } = await devServerStatus(server);
      if (pid === null) throw new Error('the dev server of this test is not running');
      process.kill(pid, 'SIGKILL');
      while ((await devServerStatus(server)).pid !== null) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 1000));
      await startDevServer({ ...server, headless: true });

      const after = await waitingState(fx.client, workflowId);
      expect(after.questions).toEqual(before.questions);
      expect(after.status).toBe('waiting_for_input');
      await answerQuestion(fx.client, workflowId, 'q', 7);
      const result = (await fx.client.workflow.getHandle(workflowId).result()) as AgentResult;
      expect(result.answer).toBe('7 × 10 = 70');
    } finally {
      worker.shutdown();
      await running;
      await connection.close();
    }
  } finally {
    await fx.stop();
  }
}, 180_000);
