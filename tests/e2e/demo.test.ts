/**
 * `durable-agent demo` beside the tour's own `durable-agent worker` on the same server and task
 * queue: the demo's job is often taken by that worker before the demo's own worker has started,
 * and the demo must still exit 0. Its footer names the inbox only when the run notified it (a
 * following `notifications inbox:demo` then works), and its "Inspect it" line runs from anywhere.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../../shared/project-root';
import { runWorker } from '../../workers/run';
import { notificationDelivery } from '../../client/deliver';
import { runCli } from '../../testkit/processes';
import { tempDir, testConfig, workflowBundleFile } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

/** Scripts of the demo's model: the demo's own, and one that answers without notifying anyone. */
const scriptsDir = tempDir('demo-scripts');
fs.copyFileSync(
  path.join(PROJECT_ROOT, 'examples', 'scripts', 'demo.json'),
  path.join(scriptsDir, 'demo.json'),
);
fs.writeFileSync(
  path.join(scriptsDir, 'quiet.json'),
  JSON.stringify({ task: 'anything', turns: [{ content: 'Nothing to tell anyone.' }] }),
);

const dev = useDevServer({ worker: { DURABLE_AGENT_SCRIPTS_DIR: scriptsDir }, queue: 'demo' });

function demo(model: string) {
  return runCli(['demo', '--model', model], { ...dev.env, DURABLE_AGENT_SCRIPTS_DIR: scriptsDir });
}

test('a worker stopped before it started polling shuts down cleanly', async () => {
  const bundle = await workflowBundleFile();
  const worker = runWorker({
    config: testConfig({ taskQueue: dev.taskQueue, ...(bundle ? { workflowBundle: bundle } : {}) }),
    target: { connectionOptions: { address: dev.fx.address }, namespace: 'default' },
    deliveryFor: notificationDelivery,
    installSignalHandlers: false,
  });
  await expect(worker.stop()).resolves.toBeUndefined();
  await expect(worker.done).resolves.toBeUndefined();
});

test('the demo exits 0 when the tour worker ran its job, and names an inbox that exists', async () => {
  const out = await demo('scripted:demo');
  expect(out.stderr).toBe('');
  expect(out.code).toBe(0);
  expect(out.stdout).toContain('the trip budget is 1806.2 EUR');
  expect(out.stdout).toMatch(/^notification #\d+ \[success, priority 10\] Trip budget: /m);
  const hint = /\(also in inbox:demo — (durable-agent notifications inbox:demo)\)/.exec(out.stdout);
  expect(hint).not.toBeNull();
  const inbox = await runCli(['notifications', 'inbox:demo'], dev.env);
  expect(inbox.code).toBe(0);
  expect(inbox.stdout).toContain('Trip budget');
  // The tour worker took the job: the case where the demo's own worker is stopped before it polled.
  const id = /^Started (demo-\S+)$/m.exec(out.stdout)?.[1];
  expect(id).toBeDefined();
  const history = await dev.fx.client.workflow.getHandle(id!).fetchHistory();
  const identities = new Set(
    (history.events ?? []).flatMap((e) => e.workflowTaskStartedEventAttributes?.identity ?? []),
  );
  expect([...identities].some((i) => i.startsWith(`${dev.worker.child.pid}@`))).toBe(true);
}, 180_000);

test('a demo run that notified no one names no inbox; its Inspect line runs from any folder', async () => {
  const out = await demo('scripted:quiet');
  expect(out.code).toBe(0);
  expect(out.stdout).toContain('Nothing to tell anyone.');
  expect(out.stdout).not.toMatch(/notification #|inbox:demo/);
  const inspect = /^Inspect it: (.+)$/m.exec(out.stdout)?.[1];
  expect(inspect).toBeDefined();
  const [cmd, ...args] = inspect!.split(' ');
  const shown = spawnSync(cmd!, args, { cwd: os.tmpdir(), encoding: 'utf8' });
  expect(shown.stderr).toBe('');
  expect(shown.status).toBe(0);
  expect(shown.stdout).toContain('WorkflowExecutionCompleted');
}, 180_000);
