/**
 * The `durable-agent` CLI against a real dev server and a worker process: a run with live progress,
 * its activities as Temporal records them (read with the real `temporal` binary), status, bad input,
 * and structured output (`run --json` and `transcript` show the parsed output; answers that never
 * match end the run failed with `OutputValidationError`).
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { temporalBinary } from '../../workers/binaries';
import { runCli } from '../../testkit/processes';
import { uid } from '../../testkit/temporal';
import { scheduledActivityTypes, workflowTaskFailures } from '../../testkit/history';
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

  const tool = await runCli(['run', '--tools', 'calculator,Format Disk', 'x'], dev.env);
  expect(tool.stderr).toMatch(
    /unknown tool "Format Disk"; known tools: get_time, calculator, wait, notify_user/,
  );
  // A well-formed name may be a tool of a worker's own: the run asks its worker, and fails at once.
  const own = await runCli(['run', '--tools', 'calculator,format_disk', 'x'], dev.env);
  expect(own.code).toBe(1);
  expect(own.stderr).toMatch(
    /unknown tool "format_disk": this worker's own tools are \(none: register tools with the plugin, or start the worker with --tools-module\); built-in tools are get_time, calculator/,
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

test('run --json prints the output the answer parsed to (after a repair turn); transcript shows it', async () => {
  const id = uid('cli-output');
  const input = path.join('examples', 'runs', 'structured-output.json');
  const out = await runCli(['run', '--json', '--id', id, '--input', input], dev.env);
  expect(out.code).toBe(0);
  expect(JSON.parse(out.stdout)).toMatchObject({
    outcome: 'completed',
    result: {
      output: { expression: '2480*17.5/100', value: 434 },
      outputRepairs: 1,
      stopReason: 'final_answer',
      steps: 3,
    },
  });
  const transcript = await runCli(['transcript', id], dev.env);
  expect(transcript.code).toBe(0);
  expect(transcript.stdout).toContain('value: expected number, got string');
  expect(transcript.stdout).toContain('output: {"expression":"2480*17.5/100","value":434}');
}, 60_000);

test('a model that never answers valid JSON: run --json ends failed with OutputValidationError naming the fields, no workflow task failure', async () => {
  const id = uid('cli-output-never');
  const input = path.join('examples', 'runs', 'structured-output-never-valid.json');
  const began = Date.now();
  const out = await runCli(['run', '--json', '--id', id, '--input', input], dev.env);
  const wall = Date.now() - began;
  expect(out.code).toBe(1);
  const printed = JSON.parse(out.stdout) as { outcome: string; errorType?: string; error?: string };
  expect(printed).toMatchObject({ outcome: 'failed', errorType: 'OutputValidationError' });
  // The last answer's misses, each field by name, after the two repair turns the policy allows.
  expect(printed.error).toMatch(/after 2 repair turns/);
  expect(printed.error).toMatch(/expression: is required/);
  expect(printed.error).toMatch(/value: expected number, got string/);
  expect(printed.error).toMatch(/unit: is not a field of the schema/);
  const handle = dev.fx.client.workflow.getHandle(id);
  const history = await handle.fetchHistory();
  // Failed at once (never stuck retrying a workflow task): three model calls, then the failure.
  expect(workflowTaskFailures([history])).toEqual({});
  expect(scheduledActivityTypes(history)).toEqual(['callModel', 'callModel', 'callModel']);
  const events = history.events ?? [];
  const failed = events.at(-1)?.workflowExecutionFailedEventAttributes;
  expect(failed?.failure?.applicationFailureInfo).toMatchObject({
    type: 'OutputValidationError',
    nonRetryable: true,
  });
  expect((await handle.describe()).status.name).toBe('FAILED');
  // Figures for docs/structured-output.md (not asserted: the machine is shared).
  const ms = (e: (typeof events)[number] | undefined) =>
    Number(e?.eventTime?.seconds ?? 0) * 1000 + Math.floor((e?.eventTime?.nanos ?? 0) / 1e6);
  console.log(
    `OutputValidationError run: started → failed ${ms(events.at(-1)) - ms(events[0])} ms (server clock); ` +
      `\`run --json\` ${wall} ms end to end`,
  );
}, 60_000);

test('the research-team example: two typed sub-agents, their answers in the parent’s, status shows each child’s cost', async () => {
  const id = uid('cli-team');
  const input = path.join('examples', 'runs', 'research-team.json');
  const out = await runCli(['run', '--id', id, '--input', input], dev.env);
  expect(out.code).toBe(0);
  expect(out.stdout).toContain(`↳ sub-agent analyst started as run ${id}:agent:figures (figures)`);
  expect(out.stdout).toMatch(/↲ sub-agent analyst completed after 2 steps, \$0\.\d{4}/);
  expect(out.stdout).toContain('Figures: {"order_eur":2480,"saving_eur":372,"to_pay_eur":2108}');
  expect(out.stdout).toContain(
    'Note: {"title":"Your discount","note":"Good news: your 15% discount saves you 372 EUR',
  );
  const status = await runCli(['status', id], dev.env);
  expect(status.code).toBe(0);
  expect(status.stdout).toMatch(/cost: \$0\.\d{4} \(sub-agents included\)/);
  expect(status.stdout).toMatch(
    new RegExp(
      `sub-agent analyst figures: completed, 2 steps, \\d+\\+\\d+ tokens, \\$0\\.\\d{4} \\(run ${id}:agent:figures\\)`,
    ),
  );
  expect(status.stdout).toContain(`sub-agent writer note: completed, 1 step, `);
  // The parent's step budget counts the children's steps: 3 of its own, 3 of theirs.
  expect(status.stdout).toContain('budget: 6 of 12 steps (50 %)');
  // transcript and replay show the tree: the parent, then each child under it.
  const transcript = await runCli(['transcript', id], dev.env);
  expect(transcript.code).toBe(0);
  const figures = transcript.stdout.indexOf(`  ── sub-agent run ${id}:agent:figures ──`);
  const note = transcript.stdout.indexOf(`  ── sub-agent run ${id}:agent:note ──`);
  expect(figures).toBeGreaterThan(0);
  expect(note).toBeGreaterThan(figures);
  expect(transcript.stdout.slice(figures, note)).toContain('2480*15/100');
  const replay = await runCli(['replay', id], dev.env);
  expect(replay).toMatchObject({ code: 0 });
  expect(replay.stdout).toBe(`OK ${id}\n  ↳ OK ${id}:agent:figures\n  ↳ OK ${id}:agent:note\n`);
}, 60_000);
