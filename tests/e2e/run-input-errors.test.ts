/**
 * `durable-agent run` reports the input's own mistakes first (a misspelt tool, a missing task), and
 * refuses a script that does not exist before it starts anything. Nothing here reaches a server:
 * TEMPORAL_ADDRESS points at a port where none listens, so a command that tried would fail otherwise.
 */
import fs from 'node:fs';
import path from 'node:path';
import { runCli } from '../../testkit/processes';
import { tempDir } from '../../testkit/temporal';

const dir = tempDir('run-input');
const env = { TEMPORAL_ADDRESS: '127.0.0.1:9', DURABLE_AGENT_TASK_QUEUE: 'run-input-errors' };
const file = (name: string, json: unknown) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, JSON.stringify(json));
  return p;
};

test('a misspelt tool in --approve is reported, not the demo script’s tools', async () => {
  const out = await runCli(['run', 'hello', '--approve', 'send_emial', '--tools', 'send_email'], env);
  expect(out.code).toBe(1);
  expect(out.stderr).toContain('policy.requireApproval: unknown tool "send_emial"');
  expect(out.stderr).not.toContain('The scripted model');
}, 60_000);

test('an --input file without a task says the task is missing', async () => {
  const out = await runCli(['run', '--input', file('no-task.json', { tools: ['calculator'] })], env);
  expect(out.code).toBe(1);
  expect(out.stderr).toContain('task: the task is required');
  expect(out.stderr).not.toContain('The scripted model');
}, 60_000);

test('an invalid --input file prints its error and no note about the demo script', async () => {
  const out = await runCli(
    ['run', '--input', file('invalid.json', { task: 'x', tools: ['Calculatr'] })],
    env,
  );
  expect(out.code).toBe(1);
  expect(out.stderr).toContain('tools: unknown tool "Calculatr"');
  expect(out.stderr).not.toContain('note:');
}, 60_000);

test('an unknown script is refused before a run starts, naming the scripts there are', async () => {
  const out = await runCli(['run', 'hello', '--model', 'scripted:nosuch', '--no-wait'], env);
  expect(out.code).toBe(1);
  expect(out.stdout).not.toContain('Started');
  expect(out.stderr).toMatch(/Script "nosuch" not found in .*examples\/scripts; available: demo/);
}, 60_000);
