/**
 * What the CLI says when something is off, against a real dev server and worker: the default tools
 * and the demo script agree, a scripted run that lacks a tool is refused before it starts, bad
 * `--input` files and ids name the fix, and commands on a run that has ended say so.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AGENT_WORKFLOW_TYPE } from '../../shared/agent';
import { runCli } from '../../testkit/processes';
import { tempDir, uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const files = tempDir('climsg-files');
const dev = useDevServer({ worker: true, queue: 'climsg', cleanExit: true });

function file(name: string, text: string): string {
  const f = path.join(files, name);
  fs.writeFileSync(f, text);
  return f;
}

test('the README offline example runs clean: the demo script gets its tools, and says it does not read the task', async () => {
  const out = await runCli(['run', '--model', 'scripted:demo', 'Plan my trip'], dev.env);
  expect(out.code).toBe(0);
  expect(out.stdout).not.toContain('✗');
  expect(out.stdout).toMatch(/✓ notify_user in \d+ ms/);
  expect(out.stdout).toContain('the trip budget is 1806.2 EUR');
  expect(out.stderr).toContain(
    'note: the scripted model "demo" replays a fixed script written for "Plan my Tokyo trip budget',
  );
  expect(out.stderr).toContain('For an answer to it use --model local (offline)');
}, 60_000);

test('a scripted run whose script calls a tool the run does not enable is refused before it starts', async () => {
  const out = await runCli(
    ['run', 'How many customers are there?', '--tools', 'sql_schema,sql_query'],
    dev.env,
  );
  expect(out.code).toBe(1);
  expect(out.stdout).toBe('');
  expect(out.stderr).toBe(
    'error: The scripted model "demo" calls get_time, calculator, notify_user, but this run does not enable ' +
      'get_time, calculator, notify_user: add them to --tools, or use a model that reads the task ' +
      '(--model local, openai:<model> or anthropic:<model>)\n',
  );
}, 60_000);

test('--input files: bad ones name the file and the fix; one without a model uses --model', async () => {
  const cases: [string, string][] = [
    [
      file('null.json', 'null'),
      'must hold a JSON object (the workflow input, e.g. {"task": "…"}); it holds null',
    ],
    [
      file('string.json', '"plan my trip"'),
      'must hold a JSON object (the workflow input, e.g. {"task": "…"}); it holds a string',
    ],
    [file('broken.json', '{"task": "x"'), 'is not valid JSON: '],
    [path.join(files, 'missing.json'), ': no such file'],
  ];
  for (const [f, message] of cases) {
    const out = await runCli(['run', '--input', f], dev.env);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain(`error: --input ${f}`);
    expect(out.stderr).toContain(message);
    expect(out.stderr.split('\n')).toHaveLength(2);
  }

  const noModel = file(
    'no-model.json',
    JSON.stringify({ task: 'Plan my trip', tools: ['get_time', 'calculator', 'notify_user'] }),
  );
  const out = await runCli(['run', '--input', noModel], dev.env);
  expect(out.code).toBe(0);
  expect(out.stdout).toContain('the trip budget is 1806.2 EUR');
}, 120_000);

test('--id "" is refused with the fix', async () => {
  const out = await runCli(['run', '--id', '', 'x'], dev.env);
  expect(out.code).toBe(1);
  expect(out.stderr).toContain('--id');
  expect(out.stderr).toContain('must not be empty (leave --id out for agent-<uuid>)');
}, 30_000);

test('message, approve and cancel on a run that has ended say so and exit 1', async () => {
  const id = uid('ended');
  expect((await runCli(['run', '--id', id, '--json', 'Plan my trip'], dev.env)).code).toBe(0);
  const expectEnded = async (args: string[], consequence: string) => {
    const out = await runCli(args, dev.env);
    expect(out.code).toBe(1);
    expect(out.stderr).toBe(
      `error: Run "${id}" has already ended (COMPLETED); ${consequence}. See its outcome with: durable-agent status ${id}\n`,
    );
  };
  await expectEnded(['message', id, 'Use EUR'], 'it takes no more messages');
  await expectEnded(['approve', id, 'call_1'], 'no tool call of it waits for approval any more');
  await expectEnded(['cancel', id], 'there is nothing to cancel');
}, 60_000);

test('status of a run whose input failed validation says why it ended', async () => {
  const id = uid('invalid');
  const handle = await dev.fx.client.workflow.start(AGENT_WORKFLOW_TYPE, {
    taskQueue: dev.env.DURABLE_AGENT_TASK_QUEUE!,
    workflowId: id,
    args: [{ task: '', model: { provider: 'scripted', script: 'demo' } }],
  });
  await expect(handle.result()).rejects.toThrow();
  const out = await runCli(['status', id], dev.env);
  expect(out.code).toBe(1);
  expect(out.stdout).toMatch(
    new RegExp(`^${id}: workflow FAILED; it ended before it could answer \\(failed: .*task`),
  );
  expect(out.stdout).not.toContain('did not register a handler');
}, 60_000);

test('kb add of a missing path names it', async () => {
  const missing = path.join(files, 'no-such-folder');
  const out = await runCli(['kb', 'add', missing, '--data-dir', path.join(files, 'kb')], dev.env);
  expect(out.code).toBe(1);
  expect(out.stderr).toBe(
    `error: kb add ${missing}: no such file or folder (${missing}); give a folder or a Markdown, text or HTML file\n`,
  );
}, 30_000);
