/**
 * The `durable-agent` CLI against a real dev server and a worker process: a run with live progress,
 * its activities as Temporal records them (read with the real `temporal` binary), status, and bad input.
 */
import { execFileSync } from 'node:child_process';
import { temporalBinary } from '../../workers/binaries';
import { runCli } from '../../testkit/processes';
import { uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const dev = useDevServer({ worker: true, queue: 'cli', cleanExit: true });

test('run shows progress, prints the final answer, and each tool call is its own activity', async () => {
  const id = uid('cli-run');
  const out = await runCli(
    [
      'run',
      '--id',
      id,
      '--model',
      'scripted:demo',
      '--tools',
      'get_time,calculator,notify_user',
      'Plan the Tokyo budget',
    ],
    dev.env,
  );
  // The one line on stderr says that the scripted model does not read this task.
  expect(out.stderr).toMatch(
    /^note: the scripted model "demo" replays a fixed script written for "[^"]+"; it does not read your task\./,
  );
  expect(out.stderr.trim().split('\n')).toHaveLength(1);
  expect(out.code).toBe(0);
  expect(out.stdout).toContain(`Started ${id}`);
  expect(out.stdout).toMatch(/\[step 1\] → get_time \{"timezone":"Asia\/Tokyo"\} \(time_tokyo\)/);
  expect(out.stdout).toMatch(/\[step 2\] ✓ calculator in \d+ ms: 1806\.2/);
  expect(out.stdout).toContain('the trip budget is 1806.2 EUR');
  expect(out.stdout).toMatch(/3 steps, 5 tool calls/);

  const history = JSON.parse(
    execFileSync(
      temporalBinary('temporal'),
      ['workflow', 'show', '--address', dev.env.TEMPORAL_ADDRESS!, '-w', id, '--output', 'json'],
      {
        encoding: 'utf8',
      },
    ),
  ) as { events: { activityTaskScheduledEventAttributes?: { activityType: { name: string } } }[] };
  const activities = history.events
    .map((e) => e.activityTaskScheduledEventAttributes?.activityType.name)
    .filter(Boolean);
  expect(activities).toEqual([
    'callModel',
    'get_time',
    'calculator',
    'notify_user',
    'callModel',
    'calculator',
    'notify_user',
    'callModel',
  ]);

  const status = await runCli(['status', id, '--json'], dev.env);
  expect(status.code).toBe(0);
  expect(JSON.parse(status.stdout)).toMatchObject({
    workflowStatus: 'COMPLETED',
    status: 'completed',
    step: 3,
  });
}, 120_000);

test('run --json prints one machine-readable outcome; a budget stop exits 2', async () => {
  const out = await runCli(
    ['run', '--json', '--max-steps', '1', '--model', 'scripted:demo', 'budget'],
    dev.env,
  );
  expect(out.code).toBe(2);
  expect(JSON.parse(out.stdout)).toMatchObject({
    outcome: 'stopped',
    // The model's summary turn (without tools) answers.
    result: { stopReason: 'max_steps', answer: expect.any(String), budget: '1 of 1 steps (100 %)' },
  });
}, 60_000);

test('a missing script fails the run with a clear error and exit code 1', async () => {
  const out = await runCli(['run', '--model', 'scripted:no-such-script', 'x'], dev.env);
  expect(out.code).toBe(1);
  expect(out.stderr).toMatch(/Script "no-such-script" not found in .*; available: demo/);
}, 60_000);

test('bad input is refused before anything starts, naming what to fix', async () => {
  const empty = await runCli(['run', '  '], dev.env);
  expect(empty.code).toBe(1);
  expect(empty.stderr).toMatch(/task: the task must not be empty/);

  const tool = await runCli(['run', '--tools', 'calculator,format_disk', 'x'], dev.env);
  expect(tool.stderr).toMatch(
    /unknown tool "format_disk"; known tools: get_time, calculator, wait, notify_user/,
  );

  const model = await runCli(['run', '--model', 'gpt4', 'x'], dev.env);
  expect(model.stderr).toMatch(
    /--model "gpt4": use scripted:<script>, openai:<model>, anthropic:<model>, local or local:<file>/,
  );

  const steps = await runCli(['run', '--max-steps', '0', 'x'], dev.env);
  expect(steps.stderr).toMatch(/--max-steps.*must be a whole number/);

  const missing = await runCli(['status', 'no-such-run'], dev.env);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toMatch(/No run with id "no-such-run"/);

  const unreachable = await runCli(['status', 'x'], { TEMPORAL_ADDRESS: '127.0.0.1:1' });
  expect(unreachable.stderr).toMatch(/Cannot reach Temporal at 127\.0\.0\.1:1.*durable-agent server start/);
}, 120_000);
