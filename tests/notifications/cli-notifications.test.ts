/**
 * The notification CLI commands against a real dev server and a worker process: notify, list (table
 * and JSON), mark-read, clear, --watch (live, across a clear and a continue-as-new), unknown targets,
 * and bad input through this door.
 */
import { spawn } from 'node:child_process';
import type { WorkflowHandle } from '@temporalio/client';
import { inboxWorkflowId, notificationsQuery, notifySignal } from '../../shared/notifications/messages';
import { runCli } from '../../testkit/processes';
import { CLI, uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const dev = useDevServer({ worker: true, queue: 'cli-notify' });

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface ListJson {
  target: string;
  guid: string;
  count: number;
  unread: number;
  notifications: {
    no: number;
    id: string;
    type: string;
    priority: number;
    read: boolean;
    message: string;
    title: string;
    detail: string;
    display_time: number;
  }[];
}

async function list(target: string, ...flags: string[]): Promise<ListJson> {
  const out = await runCli(['notifications', target, '--json', ...flags], dev.env);
  expect(out.stderr).toBe('');
  expect(out.code).toBe(0);
  return JSON.parse(out.stdout) as ListJson;
}

async function noWorkflowTaskFailures(handle: WorkflowHandle): Promise<void> {
  const history = await handle.fetchHistory();
  expect((history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
}

test('notify → notifications (table, --json) → mark-read → --unread → update in place → clear', async () => {
  const inbox = inboxWorkflowId(uid('alice'));
  const first = await runCli(
    [
      'notify',
      inbox,
      'Backup started',
      '--type',
      'progress',
      '--title',
      'Backup',
      '--detail',
      '<b>0%</b>',
      '--id',
      'backup',
      '--group',
      'nightly',
    ],
    dev.env,
  );
  expect(first.stderr).toBe('');
  expect(first.code).toBe(0);
  expect(first.stdout.trim()).toBe(
    `Sent notification backup to ${inbox} as #0; the list holds 1 notification`,
  );

  const second = await runCli(
    ['notify', inbox, 'Disk almost full', '--type', 'warning', '--priority', '20', '--json'],
    dev.env,
  );
  expect(second.code).toBe(0);
  const secondId = (JSON.parse(second.stdout) as { id: string; target: string }).id;
  expect(secondId).toMatch(UUID_V4);
  // A negative display time falls back to the API default of 3 s.
  expect((await runCli(['notify', inbox, 'Hello', '--display-time', '-5'], dev.env)).code).toBe(0);

  const all = await list(inbox);
  expect(all).toMatchObject({ target: inbox, count: 3, unread: 3 });
  expect(all.notifications).toEqual([
    expect.objectContaining({
      no: 0,
      id: 'backup',
      type: 'progress',
      priority: 10,
      title: 'Backup',
      detail: '<b>0%</b>',
      display_time: 3,
      read: false,
    }),
    expect.objectContaining({
      no: 1,
      id: secondId,
      type: 'warning',
      priority: 20,
      message: 'Disk almost full',
      display_time: 3,
    }),
    expect.objectContaining({ no: 2, type: 'info', priority: 10, message: 'Hello', display_time: 3 }),
  ]);

  const table = await runCli(['notifications', inbox], dev.env);
  expect(table.code).toBe(0);
  const lines = table.stdout.trim().split('\n');
  expect(lines[0]).toMatch(/^no\s+type\s+priority\s+read\s+title\s+message\s+timestamp\s+id$/);
  expect(lines[1]).toMatch(/^0\s+progress\s+10\s+no\s+Backup\s+Backup started\s+\S+Z\s+backup$/);
  expect(lines[2]).toMatch(
    new RegExp(`^1\\s+warning\\s+20\\s+no\\s+Disk almost full\\s+\\S+Z\\s+${secondId}$`),
  );
  expect(lines.at(-1)).toBe('3 notifications, 3 unread');

  const marked = await runCli(['mark-read', inbox, '--ids', `backup,${secondId},unknown-id`], dev.env);
  // The known ones are marked; the unknown one is named, and the command fails.
  expect(marked.stderr).toContain(`holds no notification with id "unknown-id"`);
  expect(marked.code).toBe(1);
  expect(marked.stdout.trim()).toBe(`Marked read in ${inbox}; 1 unread left`);
  const unread = await list(inbox, '--unread');
  expect(unread.notifications.map((n) => n.message)).toEqual(['Hello']);
  expect(unread).toMatchObject({ count: 3, unread: 1 });

  // Same id again: updated in place, keeps its number, unread again.
  expect(
    (await runCli(['notify', inbox, 'Backup done', '--type', 'success', '--id', 'backup'], dev.env)).code,
  ).toBe(0);
  const afterUpdate = await list(inbox, '--unread');
  expect(afterUpdate.notifications.map((n) => [n.no, n.id, n.type, n.message])).toEqual([
    [0, 'backup', 'success', 'Backup done'],
    [2, expect.stringMatching(UUID_V4), 'info', 'Hello'],
  ]);

  expect((await runCli(['mark-read', inbox, '--all'], dev.env)).stdout.trim()).toBe(
    `Marked read in ${inbox}; 0 unread left`,
  );
  const cleared = await runCli(['clear-notifications', inbox], dev.env);
  expect(cleared.stdout.trim()).toBe(`Cleared the notifications of ${inbox}`);
  const empty = await list(inbox);
  expect(empty.count).toBe(0);
  expect(empty.guid).not.toBe(all.guid);
  expect((await runCli(['notifications', inbox], dev.env)).stdout).toContain('No notifications.');
}, 120_000);

test('unknown targets are clear errors and create nothing', async () => {
  const run = uid('no-such-run');
  const cases: [string[], RegExp][] = [
    [['notifications', run], new RegExp(`No run with id "${run}" in this namespace`)],
    [['notify', run, 'hi'], new RegExp(`No run with id "${run}" in this namespace`)],
    [['mark-read', run, '--all'], new RegExp(`No run with id "${run}" in this namespace`)],
    [['clear-notifications', run], new RegExp(`No run with id "${run}" in this namespace`)],
    [
      ['notifications', 'inbox:nobody-yet'],
      /No inbox for user "nobody-yet" yet: an inbox is created by its first notification/,
    ],
    [['mark-read', 'inbox:nobody-yet', '--all'], /No inbox for user "nobody-yet" yet/],
  ];
  const outs = await Promise.all(cases.map(([args]) => runCli(args, dev.env)));
  outs.forEach((out, i) => {
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(cases[i]![1]);
  });
  // mark-read never creates an inbox.
  await expect(dev.fx.client.workflow.getHandle('inbox:nobody-yet').describe()).rejects.toThrow(/not found/i);
}, 60_000);

test('bad input through the CLI door: exact contract messages, nothing created, nothing lost', async () => {
  const inbox = inboxWorkflowId(uid('bad-cli'));
  expect((await runCli(['notify', inbox, 'keep me', '--id', 'keep'], dev.env)).code).toBe(0);
  const before = await list(inbox);

  const cases: [string[], string][] = [
    [['notify', inbox, 'x', '--type', 'critical'], 'error: Invalid notification type: critical'],
    // Type is checked before priority, priority before message (the contract's order).
    [
      ['notify', inbox, '', '--type', 'critical', '--priority', '15'],
      'error: Invalid notification type: critical',
    ],
    [['notify', inbox, 'x', '--priority', '15'], 'error: Invalid notification priority: 15'],
    [['notify', inbox, '', '--priority', '15'], 'error: Invalid notification priority: 15'],
    [['notify', inbox, 'x', '--priority', 'high'], 'error: Invalid notification priority: high'],
    [['notify', inbox, ''], 'error: Message is required'],
    [['notify', inbox, '   '], 'error: Message is required'],
    [
      ['notify', inbox, 'x', '--detail', 'd'.repeat(50_001)],
      'error: detail must be at most 50000 characters',
    ],
    [['notify', inbox, 'x', '--title', 't'.repeat(201)], 'error: title must be at most 200 characters'],
    [['notify', inbox, 'x', '--id', 'i'.repeat(201)], 'error: id must be at most 200 characters'],
    [['notify', 'inbox:', 'x'], 'error: target inbox: needs a user name, e.g. inbox:alice'],
    [['mark-read', inbox], 'error: Give exactly one of --ids a,b or --all'],
    [['mark-read', inbox, '--ids', 'keep', '--all'], 'error: Give exactly one of --ids a,b or --all'],
  ];
  const outs = await Promise.all(cases.map(([args]) => runCli(args, dev.env)));
  outs.forEach((out, i) => {
    expect([out.code, out.stderr.trim()]).toEqual([1, cases[i]![1]]);
  });
  const missing = await runCli(['notify', inbox], dev.env);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toMatch(/missing required argument 'message'/);
  const emptyIds = await runCli(['mark-read', inbox, '--ids', ' , '], dev.env);
  expect(emptyIds.code).toBe(1);
  expect(emptyIds.stderr).toMatch(/give at least one id/);

  const after = await list(inbox);
  expect(after).toEqual(before);
  await noWorkflowTaskFailures(dev.fx.client.workflow.getHandle(inbox));
}, 120_000);

/** A `notifications --watch` child whose output the test reads as it arrives. */
function startWatch(args: string[]) {
  const child = spawn(CLI[0]!, [CLI[1]!, 'notifications', ...args, '--watch', '--interval', '100'], {
    env: { ...process.env, ...dev.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waitFor = async (pattern: RegExp, from = 0): Promise<number> => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const m = pattern.exec(stdout.slice(from));
      if (m) return from + m.index + m[0].length;
      if (child.exitCode !== null || Date.now() > deadline) {
        throw new Error(`watch output never matched ${pattern}; stdout: ${stdout}; stderr: ${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return { child, exited, waitFor, output: () => stdout };
}

test('--watch prints new and updated notifications live, then the list replaced after a clear', async () => {
  const inbox = inboxWorkflowId(uid('watcher'));
  expect((await runCli(['notify', inbox, 'already there', '--id', 'old'], dev.env)).code).toBe(0);
  const watch = startWatch([inbox]);
  try {
    let at = await watch.waitFor(/^1 notification, 1 unread\n/m);
    expect(watch.output()).toMatch(/^0\s+info\s+10\s+no\s+already there/m);

    expect(
      (await runCli(['notify', inbox, 'Deploying', '--type', 'progress', '--id', 'deploy'], dev.env)).code,
    ).toBe(0);
    at = await watch.waitFor(/^new\s+1\s+progress\s+10\s+no\s+Deploying\s+\S+\s+deploy$/m, at);
    expect(
      (await runCli(['notify', inbox, 'Deployed', '--type', 'success', '--id', 'deploy'], dev.env)).code,
    ).toBe(0);
    at = await watch.waitFor(/^updated\s+1\s+success\s+10\s+no\s+Deployed\s+\S+\s+deploy$/m, at);
    expect((await runCli(['mark-read', inbox, '--ids', 'old'], dev.env)).code).toBe(0);
    at = await watch.waitFor(/^updated\s+0\s+info\s+10\s+yes\s+already there/m, at);

    expect((await runCli(['clear-notifications', inbox], dev.env)).code).toBe(0);
    at = await watch.waitFor(/— list replaced \(cleared or resynced\): 0 notifications —/, at);
    expect((await runCli(['notify', inbox, 'after the clear'], dev.env)).code).toBe(0);
    // Numbers restart at 0 after a clear, and the watcher follows the new list.
    await watch.waitFor(/^new\s+0\s+info\s+10\s+no\s+after the clear/m, at);
  } finally {
    watch.child.kill('SIGTERM');
  }
  expect(await watch.exited).toBe(0);
}, 120_000);

test('--watch --json follows an inbox across continue-as-new', async () => {
  const inbox = inboxWorkflowId(uid('can-watch'));
  // Started directly so the inbox continues as new every 3 signals.
  const handle = await dev.fx.client.workflow.start('inboxWorkflow', {
    workflowId: inbox,
    taskQueue: dev.env.DURABLE_AGENT_TASK_QUEUE!,
    args: [{ continueAsNewAfter: 3 }],
  });
  await handle.signal(notifySignal, { message: 'm0', id: 'id0' });
  const firstRun = (await handle.describe()).runId;
  const watch = startWatch([inbox, '--json']);
  try {
    await watch.waitFor(/"event":"snapshot"/);
    for (let i = 1; i < 8; i++) await handle.signal(notifySignal, { message: `m${i}`, id: `id${i}` });
    await watch.waitFor(/"id":"id7"/);
    const events = watch
      .output()
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as { event: string; added?: { id: string; no: number }[]; notifications?: unknown[] },
      );
    expect(events[0]).toMatchObject({ event: 'snapshot', count: 1 });
    // Nothing reset across the runs: every notification arrived once, as new, in order.
    expect(events.slice(1).every((e) => e.event === 'changes')).toBe(true);
    expect(events.flatMap((e) => e.added ?? []).map((n) => [n.no, n.id])).toEqual(
      [1, 2, 3, 4, 5, 6, 7].map((i) => [i, `id${i}`]),
    );
  } finally {
    watch.child.kill('SIGTERM');
  }
  expect(await watch.exited).toBe(0);
  expect((await handle.describe()).runId).not.toBe(firstRun);
  expect((await dev.fx.client.workflow.getHandle(inbox).query(notificationsQuery)).count).toBe(8);
}, 120_000);
