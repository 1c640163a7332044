/**
 * Every offline example in examples/runs, run with the README's command against a real dev server
 * and a worker on examples/config.json: SQL on the sample database, the knowledge base with
 * citations, email through the test mail server, an approval, and notifications.
 */
import path from 'node:path';
import { PROJECT_ROOT } from '../../shared/project-root';
import { AGENT, requireMailServer, subjectsContaining } from '../../testkit/mail';
import { runCli, startCli } from '../../testkit/processes';
import { EXAMPLES_CONFIG, useDevServer } from '../support/environments';

const example = (name: string) => path.join('examples', 'runs', `${name}.json`);

beforeAll(() => requireMailServer());
const dev = useDevServer({
  worker: { DURABLE_AGENT_CONFIG: path.join('examples', 'config.json') },
  queue: 'examples',
  exclusive: EXAMPLES_CONFIG,
});

test('sql: the schema, then two read-only queries on the sample database', async () => {
  const out = await runCli(['run', '--input', example('sql')], dev.env);
  expect(out.stderr).toBe('');
  expect(out.code).toBe(0);
  expect(out.stdout).toMatch(/✓ sql_schema in \d+ ms: .*customers/);
  // The sample database has 400 customers (README); the top country is a two-letter code.
  expect(out.stdout).toMatch(/\nCustomers: SELECT: 1 row\.\ncolumns: \["customers"\]\n\["400"\]\n/);
  expect(out.stdout).toMatch(
    /\nMost customers by country: SELECT: 1 row\.\ncolumns: \["country","customers"\]\n\["[A-Z]{2}","\d+"\]/,
  );
}, 60_000);

test('knowledge base: two searches and an answer citing both sources', async () => {
  const out = await runCli(['run', '--input', example('knowledge-base')], dev.env);
  expect(out.code).toBe(0);
  expect(out.stdout).toMatch(/calcium shortage in the fruit \[1\]; sour espresso .* finer grind \[2\]/);
  expect(out.stdout).toContain(
    `[1] Growing Tomatoes › Blossom end rot — ${path.join(PROJECT_ROOT, 'examples/kb/garden/tomatoes.md')}`,
  );
  expect(out.stdout).toContain(path.join(PROJECT_ROOT, 'examples/kb/kitchen/espresso.md'));
}, 120_000);

test('email: sends through the test mail server and finds the message over IMAP', async () => {
  const out = await runCli(['run', '--input', example('email')], dev.env);
  expect(out.stderr).toBe('');
  expect(out.code).toBe(0);
  expect(out.stdout).toMatch(/✓ send_email in \d+ ms/);
  const sent = /Email sent to agent@example\.test \(Message-ID (<[^>]+>)\)/.exec(out.stdout)?.[1];
  expect(sent).toBeDefined();
  // The newest message with that subject is the one this run sent.
  expect(out.stdout).toContain(`Subject: Status note from the email example\nMessage-ID: ${sent}`);
  expect(out.stdout).toMatch(new RegExp(`Message-ID: ${sent}\\s+All systems go\\.`));
  expect(await subjectsContaining(AGENT, 'INBOX', 'Status note from the email example')).not.toHaveLength(0);
}, 60_000);

test('approval: the calculation waits until `approve`, then the run answers', async () => {
  const run = startCli(dev.env, ['run', '--input', example('approval')]);
  await run.waitFor('stdout', 'waits for approval (refund)');
  const id = /Started (\S+)/.exec(run.stdout())![1]!;
  const approve = await runCli(['approve', id, 'refund'], dev.env);
  expect(approve.stdout.trim()).toBe('refund: approved');
  expect(await run.exited).toBe(0);
  expect(run.stdout()).toContain('Refund: 149.7');
}, 60_000);

test('notifications: progress updated in place in the run and in inbox:examples', async () => {
  const out = await runCli(['run', '--input', example('notifications')], dev.env);
  expect(out.code).toBe(0);
  expect(out.stdout).toMatch(/✓ notify_user in \d+ ms: The notification has been sent to the user\./);
  const inbox = await runCli(['notifications', 'inbox:examples', '--json'], dev.env);
  expect(inbox.code).toBe(0);
  const list = JSON.parse(inbox.stdout) as { notifications: { id: string; type: string; message: string }[] };
  const backup = list.notifications.filter((n) => n.id === 'backup');
  expect(backup).toEqual([expect.objectContaining({ type: 'success', message: 'Backup done' })]);
}, 60_000);
