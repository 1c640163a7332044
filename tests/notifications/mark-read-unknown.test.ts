/**
 * `mark-read --ids` with an id the list does not hold marks the others and fails, naming it: a
 * typo is not silently ignored. The HTTP API answers the same field. A real dev server and worker.
 */
import { inboxWorkflowId } from '../../shared/notifications/messages';
import { runCli } from '../../testkit/processes';
import { uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const dev = useDevServer({ worker: true, queue: 'mark-read-unknown' });

test('an unknown id is named and the command exits 1; the known one is marked read', async () => {
  const inbox = inboxWorkflowId(uid('bea'));
  const sent = await runCli(['notify', inbox, 'Report ready', '--id', 'w2'], dev.env);
  expect(sent.code).toBe(0);

  const out = await runCli(['mark-read', inbox, '--ids', 'w2,nonexistent'], dev.env);
  expect(out.stdout).toContain(`Marked read in ${inbox}; 0 unread left`);
  expect(out.stderr).toContain(`${inbox} holds no notification with id "nonexistent"`);
  expect(out.code).toBe(1);

  const list = await runCli(['notifications', inbox, '--json'], dev.env);
  const parsed = JSON.parse(list.stdout) as { notifications: { id: string; read: boolean }[] };
  expect(parsed.notifications).toEqual([expect.objectContaining({ id: 'w2', read: true })]);

  const again = await runCli(['mark-read', inbox, '--ids', 'w2'], dev.env);
  expect(again.code).toBe(0);
  expect(again.stderr).toBe('');
}, 120_000);

test('notify to a run that has ended says so, like the other commands; an unknown run says there is none', async () => {
  const run = uid('ended');
  const done = await runCli(['run', 'hello', '--id', run], dev.env);
  expect(done.code).toBe(0);
  const out = await runCli(['notify', run, 'too late'], dev.env);
  expect(out.code).toBe(1);
  expect(out.stderr).toContain(
    `Run "${run}" has already ended (COMPLETED); it takes no notifications any more`,
  );
  const none = await runCli(['notify', 'agent-nope', 'hi'], dev.env);
  expect(none.code).toBe(1);
  expect(none.stderr).toContain('No run with id "agent-nope" in this namespace');
}, 120_000);
