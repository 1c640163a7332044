/**
 * Prometheus metrics: a worker process with DURABLE_AGENT_METRICS=prometheus runs two of the
 * offline examples (an approval, and notifications to an inbox) while a real Prometheus server
 * (Debian's, scripts/prometheus.sh) scrapes it every second; its HTTP API then answers for the
 * agent's series and the SDK's own worker metrics, on the same endpoint. No series carries the
 * run's id, its task or anything else the runs were given.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../shared/project-root';
import type { PrometheusServer, Sample } from '../../testkit/prometheus';
import { startPrometheus } from '../../testkit/prometheus';
import type { WorkerProcess } from '../../testkit/processes';
import { freePort, runCli, startCli, startWorkerProcess } from '../../testkit/processes';
import { useDevServer } from '../support/environments';

const example = (name: string) => path.join('examples', 'runs', `${name}.json`);

const dev = useDevServer({ queue: 'metrics' });
let address: string;
let prometheus: PrometheusServer;
let worker: WorkerProcess;
/** The runs' workflow ids, which no series may carry. */
const runIds: string[] = [];

beforeAll(async () => {
  address = `127.0.0.1:${await freePort()}`;
  const metricsEnv = { DURABLE_AGENT_METRICS: 'prometheus', DURABLE_AGENT_METRICS_ADDRESS: address };
  // Started side by side; whichever started is stopped when the file ends, even if the other failed.
  const [started, startedWorker] = await Promise.allSettled([
    startPrometheus([address]),
    startWorkerProcess({ ...dev.env, ...metricsEnv }),
  ]);
  if (startedWorker.status === 'fulfilled') {
    worker = startedWorker.value;
    dev.defer(async () => {
      worker.child.kill('SIGTERM');
      // Serving metrics must not keep the worker from draining and exiting cleanly.
      expect(await worker.exited).toBe(0);
    });
  }
  if (started.status === 'fulfilled') {
    prometheus = started.value;
    dev.defer(() => prometheus.stop());
  }
  for (const s of [started, startedWorker]) if (s.status === 'rejected') throw s.reason;

  // Both examples at once: the approval waits while the notifications run goes on.
  const approval = startCli(dev.env, ['run', '--input', example('approval')]);
  const notifications = runCli(['run', '--input', example('notifications')], dev.env);
  await approval.waitFor('stdout', 'waits for approval (refund)');
  const id = /Started (\S+)/.exec(approval.stdout())![1]!;
  expect((await runCli(['approve', id, 'refund'], dev.env)).stdout.trim()).toBe('refund: approved');
  expect(await approval.exited).toBe(0);
  const notified = await notifications;
  expect(notified.code).toBe(0);
  runIds.push(id, /Started (\S+)/.exec(notified.stdout)![1]!);
}, 180_000);

/** The value of the one sample of `samples`, or NaN when there is none. */
const only = (samples: Sample[]) => (samples.length === 1 ? samples[0]!.value : NaN);
const q = () => `taskQueue="${dev.taskQueue}"`;

test('agent steps, model calls and tokens of the scripted runs', async () => {
  // approval: 2 model turns; notifications: 3.
  await prometheus.until(`sum(durable_agent_steps_total{${q()}})`, (s) => only(s) === 5);
  expect(only(await prometheus.query(`sum(durable_agent_runs_started_total{${q()}})`))).toBe(2);
  const finished = await prometheus.until(
    `durable_agent_runs_finished_total{${q()}}`,
    (s) => s.length === 1 && s[0]!.value === 2,
  );
  expect(finished[0]!.labels).toMatchObject({ status: 'completed', workflowType: 'agentWorkflow' });
  const calls = await prometheus.query(`durable_agent_model_calls_total{${q()}}`);
  expect(calls.map((s) => [s.labels.provider, s.labels.model, s.labels.outcome, s.value])).toEqual([
    ['scripted', 'inline', 'ok', 5],
  ]);
  const tokens = await prometheus.query(`sum by (direction) (durable_agent_model_tokens_total{${q()}})`);
  expect(tokens.map((s) => s.labels.direction).sort()).toEqual(['input', 'output']);
  expect(tokens.every((s) => s.value > 0)).toBe(true);
});

test('tool calls and their latency by tool; the approval, its wait and the inbox', async () => {
  const byTool = await prometheus.until(
    `sum by (tool, outcome) (durable_agent_tool_calls_total{${q()}})`,
    (s) => s.length === 3,
  );
  expect(Object.fromEntries(byTool.map((s) => [`${s.labels.tool}/${s.labels.outcome}`, s.value]))).toEqual({
    'calculator/ok': 1,
    'notify_user/ok': 2,
    'wait/ok': 1,
  });
  // The `wait` tool sleeps 1 s: its one attempt is past the 0.5 s bucket.
  const slow = await prometheus.query(
    `sum(durable_agent_tool_call_duration_seconds_bucket{${q()},tool="wait",le="0.5"})`,
  );
  expect(only(slow)).toBe(0);
  const waitSum = await prometheus.query(
    `sum(durable_agent_tool_call_duration_seconds_sum{${q()},tool="wait"})`,
  );
  expect(only(waitSum)).toBeGreaterThanOrEqual(1);

  expect(
    only(await prometheus.query(`sum(durable_agent_approvals_requested_total{${q()},tool="calculator"})`)),
  ).toBe(1);
  const resolved = await prometheus.query(`durable_agent_approvals_resolved_total{${q()}}`);
  expect(resolved.map((s) => [s.labels.tool, s.labels.outcome, s.value])).toEqual([
    ['calculator', 'approved', 1],
  ]);
  expect(only(await prometheus.query(`sum(durable_agent_approval_wait_seconds_count{${q()}})`))).toBe(1);
  // Two notifications, the second updating the first in place: the inbox holds one after each.
  const inbox = await prometheus.query(`sum(durable_agent_inbox_notifications_count{${q()}})`);
  expect(only(inbox)).toBe(2);
  expect(only(await prometheus.query(`sum(durable_agent_inbox_notifications_sum{${q()}})`))).toBe(2);
  // Counted by Temporal's visibility every 15 s: none waits any more (a count made while the
  // approval waited says 1 until the next).
  await prometheus.until(
    `max(durable_agent_runs_waiting_for_approval{${q()}})`,
    (s) => only(s) === 0,
    20_000,
  );
  const stored = await prometheus.query(`sum(durable_agent_content_store_put_bytes_total{${q()}})`);
  expect(only(stored)).toBeGreaterThan(0);
});

test('a content store collection sets the store size the worker reports', async () => {
  // A dry run: it measures the store (the checkout's) and removes nothing.
  const report = (await dev.fx.client.workflow.execute('contentGcWorkflow', {
    taskQueue: dev.taskQueue,
    workflowId: `content-gc-dry-${dev.taskQueue}`,
    args: [{ dryRun: true }],
  })) as { storeBytes: number; dryRun: boolean };
  expect(report.dryRun).toBe(true);
  expect(report.storeBytes).toBeGreaterThan(0);
  await prometheus.until(
    `max(durable_agent_content_store_bytes{${q()}})`,
    (s) => only(s) === report.storeBytes,
  );
});

test("the SDK's own worker metrics come from the same endpoint", async () => {
  const slots = await prometheus.query(`temporal_worker_task_slots_available{task_queue="${dev.taskQueue}"}`);
  expect(slots.map((s) => s.labels.worker_type).sort()).toEqual([
    'ActivityWorker',
    'LocalActivityWorker',
    'WorkflowWorker',
  ]);
  const scheduled = await prometheus.query(
    `sum(temporal_workflow_task_schedule_to_start_latency_count{task_queue="${dev.taskQueue}"})`,
  );
  expect(only(scheduled)).toBeGreaterThan(0);
  expect(await prometheus.query(`temporal_sticky_cache_size{task_queue="${dev.taskQueue}"}`)).toHaveLength(1);
});

test('every query of the Grafana dashboard evaluates, and has data where the runs made its series', async () => {
  const dashboard = JSON.parse(
    fs.readFileSync(path.join(PROJECT_ROOT, 'docs', 'grafana-dashboard.json'), 'utf8'),
  ) as { panels: { targets?: { expr: string }[] }[] };
  const exprs = dashboard.panels.flatMap((p) =>
    (p.targets ?? []).map((t) =>
      t.expr.replaceAll('$task_queue', dev.taskQueue).replaceAll('$__rate_interval', '1m'),
    ),
  );
  expect(exprs.length).toBeGreaterThan(25);
  // What these runs never do: fail a tool, stop for a budget, continue as new, price a model, miss the cache, remove content (the collection is a dry one).
  const neverMade =
    /failed\|tool_error|tool_errors|budget_stops|continue_as_new|cost_usd|sticky_cache_miss|removed_bytes/;
  for (const expr of exprs) {
    // A query that does not parse fails here, naming itself. A rate needs two scrapes of a series,
    // and a counter appears at its first count: the newest ones take a second more.
    if (neverMade.test(expr)) await prometheus.query(expr);
    else await prometheus.until(expr, (s) => s.length > 0, 10_000);
  }
});

test("no series carries a run's id, its task or what the model and tools were given", async () => {
  const text = await (await fetch(`http://${address}/metrics`)).text();
  const series = await prometheus.query(`{__name__=~"durable_agent_.+", ${q()}}`);
  expect(series.length).toBeGreaterThan(20);
  const labelValues = series.flatMap((s) => Object.values(s.labels)).join('\n');
  // Ids, words of the tasks, the tool call ids, arguments and results, the notifications.
  for (const marker of [...runIds, 'refund', '49.90', '149.7', 'photos', 'backup', 'Backup']) {
    expect(text).not.toContain(marker);
    expect(labelValues).not.toContain(marker);
  }
});

test('a second worker on the same metrics address stops, naming the variable', async () => {
  await expect(
    startWorkerProcess({
      ...dev.env,
      DURABLE_AGENT_METRICS: 'prometheus',
      DURABLE_AGENT_METRICS_ADDRESS: address,
    }),
  ).rejects.toThrow(/DURABLE_AGENT_METRICS_ADDRESS=127\.0\.0\.1:\d+: cannot serve metrics there .*in use/);
});
