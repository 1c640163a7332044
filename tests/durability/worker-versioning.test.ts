/**
 * Worker Versioning on the real dev server: two worker processes of one deployment, builds A and B
 * (the same code), roll out from A to B and roll back, as docs/versioning.md tells an operator.
 * Agent runs and inboxes (AUTO_UPGRADE) move to the current build at their next workflow task; a
 * tool-call run (PINNED) finishes on the build it started on; new runs start on the current build.
 * A run started on an unversioned worker before the first build became current moves to it, and an
 * inbox goes back to the unversioned worker when versioning is turned off.
 * Where each run ran is read from its history (the build stamped on every completed workflow task),
 * from its description (`status --json`) and from which worker process ran its activities.
 */
import { Hono } from 'hono';
import type { AgentInput, AgentResult } from '../../shared/agent';
import { stateQuery } from '../../shared/agent';
import type { ToolResult } from '../../shared/tools/define';
import { inboxWorkflowId } from '../../shared/notifications/messages';
import { decideApproval } from '../../client/approval-client';
import { prepareNotification, sendNotification } from '../../client/notification-client';
import { runBuild } from '../../client/run-build';
import { startAgentRun } from '../../client/start-run';
import { registerRunRoutes } from '../../server/api/runs';
import { workflowTaskBuilds } from '../../testkit/history';
import type { WorkerProcess } from '../../testkit/processes';
import { runCli, startWorkerProcess } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { uid } from '../../testkit/temporal';
import { setCurrentBuild, temporalCli } from '../../testkit/worker-versioning';
import { useDevServer } from '../support/environments';

const dev = useDevServer({ queue: 'versioning' });
const deploymentName = uid('agents');

/** An agent run whose one tool call waits for approval: it sits between workflow tasks until decided. */
const approvalRun: AgentInput = {
  task: 'multiply',
  tools: ['calculator'],
  policy: { requireApproval: ['calculator'] },
  model: {
    provider: 'scripted',
    turns: [callTurn(['calculator', { expression: '6*7' }, 'c1']), answerTurn('c1={{result:c1}}')],
  },
};

type Build = 'A' | 'B' | 'unversioned';
const workers: Record<Build, WorkerProcess | undefined> = {
  A: undefined,
  B: undefined,
  unversioned: undefined,
};

beforeAll(async () => {
  const start = (buildId: Build) =>
    startWorkerProcess(
      buildId === 'unversioned'
        ? dev.env
        : { ...dev.env, DURABLE_AGENT_DEPLOYMENT_NAME: deploymentName, DURABLE_AGENT_BUILD_ID: buildId },
    ).then((w) => {
      workers[buildId] = w;
      dev.defer(async () => {
        w.child.kill('SIGTERM');
        await w.exited;
      });
    });
  await Promise.all([start('A'), start('B'), start('unversioned')]);
}, 300_000);

function worker(b: Build): WorkerProcess {
  const w = workers[b];
  if (!w) throw new Error(`worker ${b} did not start`);
  return w;
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const current = (buildId: 'A' | 'B' | null) =>
  setCurrentBuild({
    client: dev.fx.client,
    address: dev.fx.address,
    deploymentName,
    buildId,
    taskQueue: dev.taskQueue,
  });

/** The build of every completed workflow task of a run, in order. */
async function builds(workflowId: string): Promise<string[]> {
  const history = await dev.fx.client.workflow.getHandle(workflowId).fetchHistory();
  return workflowTaskBuilds(history).map((t) => `${t.buildId}:${t.behavior}`);
}

async function buildOf(workflowId: string) {
  return runBuild(await dev.fx.client.workflow.getHandle(workflowId).describe());
}

/** Activity types that worker process `b` completed for a run. */
function activitiesOn(b: Build, workflowId: string): string[] {
  return worker(b)
    .lines.filter((l) => l.msg === 'activity completed' && l.workflowId === workflowId)
    .map((l) => String(l.activityType));
}

async function waitingForApproval(workflowId: string): Promise<void> {
  await until(`${workflowId} to wait for approval`, async () => {
    const s = await dev.fx.client.workflow.getHandle(workflowId).query(stateQuery);
    return (s.approvals ?? []).length > 0;
  });
}

async function notifyInbox(user: string, message: string): Promise<void> {
  const prepared = prepareNotification({ message });
  if (!prepared.ok) throw new Error(prepared.error);
  await sendNotification(dev.fx.client, dev.taskQueue, inboxWorkflowId(user), prepared.notification);
}

test('roll out from build A to B and back, then turn versioning off: pinned runs stay, auto-upgrade runs move, new runs start on the current build', async () => {
  const { client } = dev.fx;
  const { taskQueue } = dev;
  // Both builds poll; a versioned worker gets no task until its build is current, and says so.
  expect(worker('A').stderr.join('')).toContain(
    `Worker Versioning on: build "A" of deployment "${deploymentName}"`,
  );
  // Until then the unversioned worker takes the work, as before Worker Versioning was turned on.
  const before = uid('before');
  const beforeRun = await startAgentRun(client, approvalRun, { workflowId: before, taskQueue });
  await waitingForApproval(before);
  expect(await buildOf(before)).toBeNull();

  await current('A');
  // A run from before versioning moves to the current build with its next task, and declares then.
  await decideApproval(client, before, { toolCallId: 'c1', approve: true });
  expect(((await beforeRun.result()) as AgentResult).answer).toBe('c1=42');
  const beforeBuilds = await builds(before);
  expect(beforeBuilds[0]).toBe('unversioned:UNSPECIFIED');
  expect(beforeBuilds.at(-1)).toBe('A:AUTO_UPGRADE');
  expect(activitiesOn('unversioned', before).filter((t) => t === 'callModel')).toHaveLength(1);
  expect(activitiesOn('A', before)).toContain('calculator');

  // On A: an agent run waiting for approval, a user's inbox, and a tool call that takes a while.
  const waiting = uid('waits');
  const waitingRun = await startAgentRun(client, approvalRun, { workflowId: waiting, taskQueue });
  const user = uid('ana');
  const inbox = inboxWorkflowId(user);
  await notifyInbox(user, 'before the deploy');
  const toolCall = uid('tool-call');
  const toolCallRun = await client.workflow.start('toolCallWorkflow', {
    taskQueue,
    workflowId: toolCall,
    args: [{ tool: 'wait', args: { seconds: 8 } }],
  });
  await waitingForApproval(waiting);
  await until('the tool call’s activity to start', async () => {
    const d = await toolCallRun.describe();
    return (d.raw.pendingActivities ?? []).some((a) => a.lastStartedTime);
  });
  expect(await buildOf(waiting)).toEqual({ deploymentName, buildId: 'A', behavior: 'AUTO_UPGRADE' });
  expect(await buildOf(inbox)).toMatchObject({ buildId: 'A', behavior: 'AUTO_UPGRADE' });
  expect(await buildOf(toolCall)).toMatchObject({ buildId: 'A', behavior: 'PINNED' });

  // Roll out B.
  await current('B');
  // The tool call is still running: what follows shows where its next task went.
  expect((await toolCallRun.describe()).status.name).toBe('RUNNING');

  // The waiting run moves to B with its next workflow task: the approval.
  await decideApproval(client, waiting, { toolCallId: 'c1', approve: true });
  expect(((await waitingRun.result()) as AgentResult).answer).toBe('c1=42');
  const waitingBuilds = await builds(waiting);
  expect(waitingBuilds[0]).toBe('A:AUTO_UPGRADE');
  expect(waitingBuilds.at(-1)).toBe('B:AUTO_UPGRADE');
  expect(waitingBuilds.indexOf('B:AUTO_UPGRADE')).toBeGreaterThan(0);
  // Its approved tool call and its last model call ran in B's process, the first model call in A's
  // (the approval's notice, `deliverNotification`, goes wherever it was dispatched meanwhile).
  const modelAndTool = (b: 'A' | 'B') =>
    activitiesOn(b, waiting).filter((t) => t === 'callModel' || t === 'calculator');
  expect(modelAndTool('A')).toEqual(['callModel']);
  expect(modelAndTool('B')).toEqual(['calculator', 'callModel']);

  // The pinned tool call finishes on A: every one of its workflow tasks, and its activity.
  expect(((await toolCallRun.result()) as ToolResult).content).toBe('Waited 8 s.');
  expect(new Set(await builds(toolCall))).toEqual(new Set(['A:PINNED']));
  expect(activitiesOn('A', toolCall)).toEqual(['wait']);
  expect(activitiesOn('B', toolCall)).toEqual([]);

  // The inbox moves with its next notification; a new run starts on B (status shows where).
  await notifyInbox(user, 'after the deploy');
  expect((await builds(inbox)).at(-1)).toBe('B:AUTO_UPGRADE');
  expect(await buildOf(inbox)).toMatchObject({ buildId: 'B' });
  const started = uid('new');
  const startedRun = await startAgentRun(client, approvalRun, { workflowId: started, taskQueue });
  await waitingForApproval(started);
  expect(new Set(await builds(started))).toEqual(new Set(['B:AUTO_UPGRADE']));
  const status = await runCli(['status', started, '--json'], dev.env);
  expect(JSON.parse(status.stdout)).toMatchObject({
    build: { deploymentName, buildId: 'B', behavior: 'AUTO_UPGRADE' },
  });
  const text = await runCli(['status', started], dev.env);
  expect(text.stdout).toContain(`on build B of deployment ${deploymentName} (auto-upgrade)`);
  const api = new Hono();
  registerRunRoutes(api, client);
  const detail = (await (await api.request(`/api/runs/${started}`)).json()) as { build: unknown };
  expect(detail.build).toEqual({ deploymentName, buildId: 'B', behavior: 'AUTO_UPGRADE' });

  // Roll back to A: the run started on B finishes on A, the inbox goes back, new runs start on A.
  await current('A');
  await decideApproval(client, started, { toolCallId: 'c1', approve: true });
  expect(((await startedRun.result()) as AgentResult).answer).toBe('c1=42');
  expect((await builds(started)).at(-1)).toBe('A:AUTO_UPGRADE');
  expect(activitiesOn('A', started)).toContain('calculator');
  await notifyInbox(user, 'after the rollback');
  expect((await builds(inbox)).at(-1)).toBe('A:AUTO_UPGRADE');
  const after = uid('after');
  const afterRun = await startAgentRun(client, approvalRun, { workflowId: after, taskQueue });
  await waitingForApproval(after);
  expect(new Set(await builds(after))).toEqual(new Set(['A:AUTO_UPGRADE']));
  // An operator pins one run to its build, as docs/versioning.md shows; its description says so.
  await temporalCli(dev.fx.address, [
    ...['workflow', 'update-options', '--workflow-id', after, '--versioning-override-behavior', 'pinned'],
    ...['--versioning-override-deployment-name', deploymentName, '--versioning-override-build-id', 'A'],
  ]);
  expect(await buildOf(after)).toEqual({
    deploymentName,
    buildId: 'A',
    behavior: 'PINNED',
    override: 'PINNED',
  });
  await afterRun.terminate('done');

  // Versioning off again: the unversioned workers become current, the versioned ones stop (a run
  // a versioned worker keeps in its cache stays with it until then), and the inbox goes to the
  // unversioned worker, which declares no behaviour.
  await current(null);
  for (const b of ['A', 'B'] as const) {
    worker(b).child.kill('SIGTERM');
    await worker(b).exited;
  }
  await notifyInbox(user, 'versioning off');
  expect((await builds(inbox)).at(-1)).toBe('unversioned:UNSPECIFIED');
  expect(await buildOf(inbox)).toBeNull();
}, 300_000);
