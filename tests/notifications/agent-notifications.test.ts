/**
 * notify_user end to end on the real dev server: the run's own notifications, the user's inbox,
 * markRead / clearNotifications, outside clients through the real `temporal` binary, and a worker
 * killed mid-run.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { temporalBinary } from '../../workers/binaries';
import type { AgentInput, AgentResult } from '../../shared/agent';
import { eventsQuery, transcriptQuery } from '../../shared/agent';
import {
  clearNotificationsSignal,
  inboxWorkflowId,
  markReadSignal,
  notificationsQuery,
  notificationsSinceQuery,
  notifySignal,
  unreadCountQuery,
} from '../../shared/notifications/messages';
import type { NotificationHistory } from '../../shared/notifications/reads';
import { withDevWorker } from '../../testkit/dev-server';
import { startWorkerProcess } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { tempDir, uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const dev = useDevServer();

const SENT = 'The notification has been sent to the user.';

async function noWorkflowTaskFailures(handle: WorkflowHandle): Promise<void> {
  const history = await handle.fetchHistory();
  expect((history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
}

test('notify_user: contract messages, progress updated in place, same state in the run and the inbox', async () => {
  const user = uid('user');
  await withDevWorker(dev.fx, async (taskQueue) => {
    const input: AgentInput = {
      task: 'import data and keep me posted',
      tools: ['notify_user', 'calculator'],
      notify: { user },
      model: {
        provider: 'scripted',
        turns: [
          callTurn(
            ['notify_user', { message: 'Starting the import', type: 'info', priority: 10 }, 'start'],
            [
              'notify_user',
              { message: '0%', type: 'progress', id: 'import', priority: 10, title: 'Import' },
              'p0',
            ],
          ),
          callTurn(
            [
              'notify_user',
              { message: '50%', type: 'progress', id: 'import', priority: 10, title: 'Import' },
              'p50',
            ],
            ['notify_user', { message: 'x', type: 'critical' }, 'badtype'],
            ['notify_user', { message: 'x', type: 'critical', priority: 15 }, 'badboth'],
            ['notify_user', { message: 'x', priority: 15 }, 'badprio'],
            ['notify_user', { type: 'info' }, 'nomsg'],
            ['notify_user', { message: '   ', type: 'warning' }, 'blank'],
            [
              'notify_user',
              { message: 'Disk almost full', type: 'warning', priority: '20', detail: '<b>93%</b>' },
              'warn',
            ],
          ),
          callTurn([
            'notify_user',
            { message: 'Import finished', type: 'success', id: 'import', title: 'Import' },
            'p100',
          ]),
          answerTurn('Imported everything.'),
        ],
      },
    };
    const handle = await dev.fx.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('notify'),
      args: [input],
    });
    const result = (await handle.result()) as AgentResult;
    // The notifications never replace the final answer.
    expect(result.answer).toBe('Imported everything.');

    const transcript = (await handle.query(transcriptQuery)).entries;
    const reply = (id: string) => transcript.find((t) => t.role === 'tool' && t.toolCallId === id)?.text;
    expect(reply('badtype')).toBe('Invalid notification type: critical');
    expect(reply('badboth')).toBe('Invalid notification type: critical');
    expect(reply('badprio')).toBe('Invalid notification priority: 15');
    expect(reply('nomsg')).toBe('Message is required');
    expect(reply('blank')).toBe('Message is required');
    for (const id of ['start', 'p0', 'p50', 'warn', 'p100']) expect(reply(id)).toBe(SENT);
    // Rejected calls never reached an activity.
    const events = await handle.query(eventsQuery, {});
    const started = events.filter((e) => e.kind === 'tool_started').map((e) => e.toolCallId);
    expect(started.sort()).toEqual(['p0', 'p100', 'p50', 'start', 'warn']);

    const run = await handle.query(notificationsQuery);
    expect(run.count).toBe(3);
    expect(run.notifications.map((n) => n.no)).toEqual([0, 1, 2]);
    // Notifications are delivered in the order the model sent them, also within one turn.
    expect(run.notifications.map((n) => (n.id === 'import' ? 'import' : n.message))).toEqual([
      'Starting the import',
      'import',
      'Disk almost full',
    ]);
    const byMessage = (m: string) => run.notifications.find((n) => n.message === m);
    const start = byMessage('Starting the import');
    const progress = run.notifications.find((n) => n.id === 'import');
    const warn = byMessage('Disk almost full');
    expect(start).toMatchObject({ type: 'info', priority: 10, display_time: 30, read: false });
    expect(start?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // One progress item, updated in place: the last update's fields, the agent's default priority (HIGH).
    expect(progress).toMatchObject({
      type: 'success',
      priority: 20,
      message: 'Import finished',
      title: 'Import',
    });
    expect(warn?.no).toBe(2);
    expect(warn).toMatchObject({ type: 'warning', priority: 20, detail: '<b>93%</b>' });
    expect(run.updates).toHaveLength(5);

    const inbox = dev.fx.client.workflow.getHandle(inboxWorkflowId(user));
    const box = await inbox.query(notificationsQuery);
    const strip = (h: NotificationHistory) => h.notifications.map(({ timestamp: _t, ...rest }) => rest);
    expect(strip(box)).toEqual(strip(run));
    await noWorkflowTaskFailures(handle);
  });
}, 120_000);

test('markRead, notificationsSince and clearNotifications behave per contract', async () => {
  const user = uid('user');
  const inbox = await dev.fx.client.workflow.signalWithStart('inboxWorkflow', {
    workflowId: inboxWorkflowId(user),
    taskQueue: uid('no-worker-needed-for-signals'),
    args: [{}],
    signal: notifySignal,
    signalArgs: [{ message: 'one', id: 'a' }],
  });
  await withDevWorker(dev.fx, async () => undefined);
  // The inbox above has no worker on its queue; re-create it on a polled queue.
  await inbox.terminate('test setup');
  await withDevWorker(dev.fx, async (taskQueue) => {
    const h = await dev.fx.client.workflow.signalWithStart('inboxWorkflow', {
      workflowId: inboxWorkflowId(user),
      taskQueue,
      args: [{}],
      signal: notifySignal,
      signalArgs: [{ message: 'one', id: 'a' }],
    });
    await h.signal(notifySignal, { message: 'two', id: 'b', display_time: -5 });
    await h.signal(notifySignal, { message: 'three', id: 'c', display_time: 'soon' } as never);
    const first = await h.query(notificationsQuery);
    expect(first.count).toBe(3);
    // API defaults: NORMAL priority, 3 s, and bad display times fall back to 3 s.
    expect(first.notifications.map((n) => [n.priority, n.display_time])).toEqual([
      [10, 3],
      [10, 3],
      [10, 3],
    ]);
    expect(await h.query(unreadCountQuery)).toBe(3);
    const mark = first.update;

    await h.signal(markReadSignal, { ids: ['b', 'nope'] });
    expect(await h.query(unreadCountQuery)).toBe(2);
    const changed = await h.query(notificationsSinceQuery, { updateNo: mark, guid: first.guid });
    expect(changed.reset).toBe(false);
    expect(changed.notifications.map((n) => [n.id, n.read])).toEqual([['b', true]]);

    await h.signal(notifySignal, { message: 'two again', id: 'b' });
    expect((await h.query(notificationsQuery)).notifications[1]).toMatchObject({
      id: 'b',
      no: 1,
      read: false,
      message: 'two again',
    });

    await h.signal(markReadSignal, { all: true });
    expect(await h.query(unreadCountQuery)).toBe(0);

    await h.signal(clearNotificationsSignal);
    const cleared = await h.query(notificationsQuery);
    expect(cleared.count).toBe(0);
    expect(cleared.guid).not.toBe(first.guid);
    const after = await h.query(notificationsSinceQuery, { updateNo: mark, guid: first.guid });
    expect(after.reset).toBe(true);
    await noWorkflowTaskFailures(h);
  });
}, 120_000);

test('outside clients: the real `temporal` binary queries notifications and signals markRead', async () => {
  const user = uid('cli-user');
  await withDevWorker(dev.fx, async (taskQueue) => {
    const h = await dev.fx.client.workflow.signalWithStart('inboxWorkflow', {
      workflowId: inboxWorkflowId(user),
      taskQueue,
      args: [{}],
      signal: notifySignal,
      signalArgs: [{ message: 'from the SDK', id: 'sdk', type: 'warning' }],
    });
    // Asynchronous: the worker runs in this process, and a synchronous exec would stall it.
    const run = promisify(execFile);
    const temporal = async (...args: string[]) =>
      (await run(temporalBinary('temporal'), [...args, '--address', dev.fx.address], { encoding: 'utf8' }))
        .stdout;
    await temporal(
      'workflow',
      'signal',
      '-w',
      inboxWorkflowId(user),
      '--name',
      'notify',
      '--input',
      '{"message":"from the CLI","id":"cli","priority":20}',
    );
    const queried = JSON.parse(
      await temporal(
        'workflow',
        'query',
        '-w',
        inboxWorkflowId(user),
        '--type',
        'notifications',
        '--output',
        'json',
      ),
    ) as { queryResult: NotificationHistory[] };
    const hist = queried.queryResult[0] as NotificationHistory;
    expect(hist.count).toBe(2);
    expect(hist.notifications.map((n) => [n.id, n.message, n.priority, n.read])).toEqual([
      ['sdk', 'from the SDK', 10, false],
      ['cli', 'from the CLI', 20, false],
    ]);
    await temporal(
      'workflow',
      'signal',
      '-w',
      inboxWorkflowId(user),
      '--name',
      'markRead',
      '--input',
      '{"all":true}',
    );
    expect(await h.query(unreadCountQuery)).toBe(0);
    const unread = JSON.parse(
      await temporal(
        'workflow',
        'query',
        '-w',
        inboxWorkflowId(user),
        '--type',
        'unreadCount',
        '--output',
        'json',
      ),
    ) as {
      queryResult: number[];
    };
    expect(unread.queryResult).toEqual([0]);
  });
}, 120_000);

test('bad signal payloads create nothing and fail no workflow task', async () => {
  const user = uid('bad-user');
  await withDevWorker(dev.fx, async (taskQueue) => {
    const h = await dev.fx.client.workflow.signalWithStart('inboxWorkflow', {
      workflowId: inboxWorkflowId(user),
      taskQueue,
      args: [{}],
      signal: notifySignal,
      signalArgs: [{ message: 'valid' }],
    });
    const bad: unknown[] = [
      { message: 'x', type: 'critical' },
      { message: 'x', priority: 15 },
      { message: '' },
      {},
      { message: 42 },
      { message: 'x', title: ['not', 'a', 'string'] },
      { message: 'x', detail: 'd'.repeat(50_001) },
      'just a string',
      null,
    ];
    for (const payload of bad) await h.signal(notifySignal, payload as never);
    await h.signal(markReadSignal, { ids: 'not-a-list' } as never);
    await h.signal(markReadSignal, {});
    const state = await h.query(notificationsQuery);
    expect(state.count).toBe(1);
    expect(state.notifications[0]).toMatchObject({ message: 'valid', read: false });
    await noWorkflowTaskFailures(h);
  });
}, 120_000);

test('a worker killed mid-run loses no notification and duplicates none', async () => {
  const user = uid('kill-user');
  const scriptsDir = tempDir('notify-scripts');
  fs.writeFileSync(
    path.join(scriptsDir, 'notify-kill.json'),
    JSON.stringify({
      turns: [
        callTurn(
          ['notify_user', { message: 'step 1 of 3', type: 'progress', id: 'job' }, 'n1'],
          ['notify_user', { message: 'hello' }, 'n2'],
        ),
        callTurn(['wait', { seconds: 4 }, 'w']),
        callTurn(
          ['notify_user', { message: 'step 3 of 3', type: 'progress', id: 'job' }, 'n3'],
          ['notify_user', { message: 'bye' }, 'n4'],
        ),
        answerTurn('done'),
      ],
    }),
  );
  const env = {
    TEMPORAL_ADDRESS: dev.fx.address,
    DURABLE_AGENT_TASK_QUEUE: uid('kill'),
    DURABLE_AGENT_SCRIPTS_DIR: scriptsDir,
  };
  const first = await startWorkerProcess(env);
  const workflowId = uid('kill-run');
  const handle = await dev.fx.client.workflow.start('agentWorkflow', {
    taskQueue: env.DURABLE_AGENT_TASK_QUEUE,
    workflowId,
    args: [
      {
        task: 't',
        tools: ['notify_user', 'wait'],
        notify: { user },
        model: { provider: 'scripted', script: 'notify-kill' },
      },
    ],
  });
  for (let i = 0; i < 200; i++) {
    const events = await handle.query(eventsQuery, {}).catch(() => []);
    if (events.some((e) => e.kind === 'tool_started' && e.tool === 'wait')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 1000));
  first.child.kill('SIGKILL');
  await first.exited;
  const second = await startWorkerProcess(env);
  try {
    expect(((await handle.result()) as AgentResult).answer).toBe('done');
    for (const target of [workflowId, inboxWorkflowId(user)]) {
      const h = await dev.fx.client.workflow.getHandle(target).query(notificationsQuery);
      // n1/n2 ran in parallel (either order), then n3 updated n1's item in place, then n4.
      expect(h.notifications.map((n) => n.no)).toEqual([0, 1, 2]);
      expect(
        h.notifications
          .slice(0, 2)
          .map((n) => n.message)
          .sort(),
      ).toEqual(['hello', 'step 3 of 3']);
      expect(h.notifications[2]?.message).toBe('bye');
      expect(h.notifications.find((n) => n.id === 'job')?.type).toBe('progress');
    }
  } finally {
    second.child.kill('SIGTERM');
    await second.exited;
  }
}, 180_000);
