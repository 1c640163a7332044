/**
 * What a cached agent run costs a worker. The workflow sandbox evaluates a workflow's modules once
 * per workflow; the zod schemas are built once per worker and shared (shared/schema-once.ts,
 * preloaded into the sandbox), so a run parked in the cache carries its own state only. The worker
 * here bundles workflows/ itself, as `durable-agent worker` does, and runs workflows on this thread
 * (debugMode) so that the heap measured is theirs.
 */
import { notificationDelivery } from '../../client/deliver';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Worker } from '@temporalio/worker';
import { z } from 'zod';
import { startAgentRun } from '../../client/start-run';
import type { AgentInput } from '../../shared/agent';
import { AgentInputSchema, stateQuery } from '../../shared/agent';
import { schemaOnce } from '../../shared/schema-once';
import type { WorkerTuning } from '../../workers/worker';
import { createAgentWorker } from '../../workers/worker';
import { callTurn } from '../../testkit/scripts';
import { testConfig, uid, workflowBundle } from '../../testkit/temporal';
import { useLocalEnv } from '../support/environments';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const temporal = useLocalEnv({ bundle: false });

/** A run that calls a tool, then waits for an approval that does not come: it stays cached. */
const PARKED: AgentInput = {
  task: 'park',
  tools: ['calculator', 'get_time'],
  model: {
    provider: 'scripted',
    turns: [callTurn(['calculator', { expression: '1+1' }, 'a']), callTurn(['get_time', {}, 'b'])],
  },
  policy: { maxSteps: 5, requireApproval: ['get_time'], approvalTimeout: '1 day' },
};

function settledHeap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

describe('schemaOnce', () => {
  test('builds a schema once per key and hands the same one back', () => {
    let builds = 0;
    const key = uid('schema');
    const build = () => {
      builds++;
      return z.object({ a: z.string() });
    };
    const first = schemaOnce(key, build);
    expect(schemaOnce(key, build)).toBe(first);
    expect(builds).toBe(1);
    expect(first.parse({ a: 'x' })).toEqual({ a: 'x' });
  });

  test('refuses a build that is not a zod schema, naming the key', () => {
    expect(() => schemaOnce('not-a-schema', () => ({}) as z.ZodType)).toThrow(
      'schemaOnce("not-a-schema") must build a zod schema',
    );
  });

  test('the shared schemas still validate and default as declared', () => {
    const parsed = AgentInputSchema.parse(PARKED);
    expect(parsed.policy.requireApproval).toEqual(['get_time']);
    expect(AgentInputSchema.safeParse({ ...PARKED, task: 42 }).success).toBe(false);
  });
});

test('the bundle preloads the schema cache and keeps native object spread (es2022, no helpers)', async () => {
  const { code } = await workflowBundle();
  expect(code).toMatch(/preloadModules\(\) \{\s*__webpack_require__\([^)]*schema-once/);
  // es2017 compiles `{ ...a }` to calls of these helpers, the largest cost of an inbox's updates.
  expect(code).not.toMatch(/function _object_spread(_props)?\(/);
  expect(code).toMatch(/\{\s*\.\.\.state,/);
}, 180_000);

test('a parked agent run costs the worker well under 0.5 MB of heap', async () => {
  const taskQueue = uid('memory');
  const worker: Worker = await createAgentWorker({
    connection: temporal.env.nativeConnection,
    namespace: temporal.env.namespace ?? 'default',
    config: testConfig({ taskQueue }),
    deliver: notificationDelivery(temporal.env.client, taskQueue),
    taskQueue,
    // No prebuilt bundle: the worker bundles workflows/ with its preloaded modules, as in production.
    tuning: { debugMode: true } as WorkerTuning,
  });
  await worker.runUntil(async () => {
    const park = async (count: number): Promise<void> => {
      const tag = uid('park');
      const ids = Array.from({ length: count }, (_, i) => `${tag}-${i}`);
      for (const workflowId of ids)
        await startAgentRun(temporal.env.client, PARKED, { taskQueue, workflowId });
      for (const id of ids) {
        for (;;) {
          const state = await temporal.env.client.workflow.getHandle(id).query(stateQuery);
          if (state.status === 'waiting_for_approval') break;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    await park(5);
    const before = settledHeap();
    const count = 60;
    await park(count);
    const perRun = (settledHeap() - before) / count;
    expect(worker.getStatus().numCachedWorkflows).toBeGreaterThanOrEqual(count + 5);
    // Each run built its own schemas before they were shared: about 1.6 MB.
    expect(perRun).toBeLessThan(0.5 * 1024 * 1024);
  });
}, 240_000);
