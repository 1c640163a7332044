/**
 * Replay and debugging from the command line against a real dev server: a history exported by the
 * real `temporal` binary replays with `replay --file`; a deliberately changed copy of the workflow
 * code is caught and the diverging step named; `transcript` reads a run back; `fork` continues a run
 * from a step without running earlier tools again.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../shared/project-root';
import { temporalBinary } from '../../workers/binaries';
import { readHistoryFile } from '../../client/debug/history';
import { buildTimeline } from '../../client/debug/timeline';
import { runCli } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { tempDir, uid } from '../../testkit/temporal';
import { scheduledActivityTypes } from '../../testkit/history';
import { useDevServer } from '../support/environments';

const run = promisify(execFile);
const scriptsDir = tempDir('debug-scripts');
const work = tempDir('debug-work');
const contentDir = tempDir('debug-content');

/** Six steps: five tool turns, then an answer quoting every result. */
const SIX_STEPS = {
  turns: [
    callTurn(['calculator', { expression: '1+1' }, 's1']),
    callTurn(['calculator', { expression: '2+2' }, 's2'], ['get_time', { timezone: 'UTC' }, 's2b']),
    callTurn(['calculator', { expression: '3+3' }, 's3']),
    callTurn(['calculator', { expression: '4+4' }, 's4']),
    callTurn(['calculator', { expression: '5+5' }, 's5']),
    answerTurn('{{result:s1}} {{result:s2}} {{result:s3}} {{result:s4}} {{result:s5}}'),
  ],
};

/** A result over the inline budget (kept by reference), then a quick step, then an answer quoting it. */
const LARGE = {
  turns: [
    callTurn(['sql_query', { sql: 'SELECT repeat(chr(67), 6000) AS big' }, 'q']),
    callTurn(['calculator', { expression: '1+1' }, 'c']),
    answerTurn('{{result:q}}'),
  ],
};

beforeAll(() => {
  fs.writeFileSync(path.join(scriptsDir, 'six.json'), JSON.stringify(SIX_STEPS));
  fs.writeFileSync(path.join(scriptsDir, 'large.json'), JSON.stringify(LARGE));
});
const dev = useDevServer({
  worker: { DURABLE_AGENT_SCRIPTS_DIR: scriptsDir, DURABLE_AGENT_CONTENT_STORE: contentDir },
  queue: 'debug',
});

async function sixStepRun(): Promise<string> {
  const id = uid('six');
  const out = await runCli(
    ['run', '--id', id, '--model', 'scripted:six', '--tools', 'calculator,get_time', 'six steps'],
    dev.env,
  );
  expect(out.code).toBe(0);
  expect(out.stdout).toContain('2 4 6 8 10');
  return id;
}

test('a history exported by `temporal workflow show --output json` replays; a changed copy is caught by step', async () => {
  const id = await sixStepRun();
  const file = path.join(work, `${id}.json`);
  const { stdout } = await run(
    temporalBinary('temporal'),
    ['workflow', 'show', '--address', dev.fx.address, '-w', id, '--output', 'json'],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  fs.writeFileSync(file, stdout);

  const ok = await runCli(['replay', '--file', file], dev.env);
  expect(ok.stdout).toMatch(/^OK /);
  expect(ok.code).toBe(0);

  // `export` writes the same format: it replays too and has the same events.
  const exported = path.join(work, `${id}-export.json`);
  expect((await runCli(['export', id, '-o', exported], dev.env)).code).toBe(0);
  expect(readHistoryFile(exported).events?.length).toBe(readHistoryFile(file).events?.length);
  expect((await runCli(['replay', '--file', exported], dev.env)).code).toBe(0);
  // And with the modules evaluated for this history alone, as a worker does.
  const isolated = await runCli(['replay', '--file', exported, '--isolate-modules'], dev.env);
  expect(isolated.stdout).toMatch(/^OK /);
  expect(isolated.code).toBe(0);

  // A scratch copy of the workflow code where step 3 sleeps before calling the model.
  const scratch = tempDir('scratch');
  for (const dir of ['workflows', 'shared', 'prompts', 'activities']) {
    fs.cpSync(path.join(PROJECT_ROOT, dir), path.join(scratch, dir), { recursive: true });
  }
  fs.symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(scratch, 'node_modules'));
  const agentFile = path.join(scratch, 'workflows', 'agent.ts');
  const source = fs.readFileSync(agentFile, 'utf8');
  const withSleep = /^ {2}sleep,$/m.test(source)
    ? source
    : source.replace('  setHandler,\n', '  setHandler,\n  sleep,\n');
  // Before the model call's line (`out = await callModel(…)`, or its local twin).
  const changed = withSleep.replace(
    /\n(\s*)(out = await [^\n]*callModel)/,
    "\n$1if (this.step === 3) await sleep('1 second');\n$1$2",
  );
  expect(changed).not.toBe(source);
  fs.writeFileSync(agentFile, changed);

  const diverged = await runCli(
    ['replay', '--file', file, '--workflows-path', path.join(scratch, 'workflows')],
    dev.env,
  );
  expect(diverged.code).toBe(1);
  expect(diverged.stdout).toMatch(
    /DIVERGED .* at step 3 \(history event \d+\): history has activity callModel, the code now does timer/,
  );
}, 180_000);

test('transcript: every model turn, tool call and result in order, with durations, matching the history', async () => {
  const id = await sixStepRun();
  const json = await runCli(['transcript', id, '--format', 'json'], dev.env);
  expect(json.code).toBe(0);
  const entries = JSON.parse(json.stdout) as ReturnType<typeof buildTimeline>;
  const file = path.join(work, `${id}-t.json`);
  expect((await runCli(['export', id, '-o', file], dev.env)).code).toBe(0);
  const scheduled = scheduledActivityTypes(readHistoryFile(file));
  const timeline = entries
    .filter((e) => e.kind === 'model' || e.kind === 'tool')
    .map((e) => (e.kind === 'model' ? 'callModel' : e.tool));
  expect(timeline).toEqual(scheduled);
  const models = entries.filter((e) => e.kind === 'model');
  expect(models.map((m) => m.step)).toEqual([1, 2, 3, 4, 5, 6]);
  for (const e of entries)
    if (e.kind === 'model' || e.kind === 'tool') expect(typeof e.durationMs).toBe('number');
  const tools = entries.filter((e) => e.kind === 'tool');
  expect(tools.map((t) => [t.step, t.toolCallId, t.result])).toEqual([
    [1, 's1', '2'],
    [2, 's2', '4'],
    [2, 's2b', expect.stringContaining('UTC')],
    [3, 's3', '6'],
    [4, 's4', '8'],
    [5, 's5', '10'],
  ]);
  expect(entries.at(-1)).toMatchObject({ kind: 'end', status: 'completed', answer: '2 4 6 8 10' });

  const text = await runCli(['transcript', id], dev.env);
  expect(text.stdout).toMatch(/step 3 tool calculator \(s3\) \d+ (ms|\.\d s)/);
  const md = await runCli(['transcript', id, '--format', 'markdown'], dev.env);
  expect(md.stdout).toMatch(/^- \*\*.*start agentWorkflow/m);
}, 120_000);

test('fork --from-step 3 re-executes no tool of steps 1–3 and goes on from there', async () => {
  const id = await sixStepRun();
  const forkId = uid('fork');
  const fork = await runCli(['fork', id, '--from-step', '3', '--id', forkId], dev.env);
  expect(fork.stderr).toBe('');
  expect(fork.code).toBe(0);
  expect(fork.stdout).toContain(`forked from ${id} after step 3`);
  expect(fork.stdout).toContain('2 4 6 8 10');

  const file = path.join(work, `${forkId}.json`);
  expect((await runCli(['export', forkId, '-o', file], dev.env)).code).toBe(0);
  const timeline = buildTimeline(readHistoryFile(file));
  const tools = timeline.filter((e) => e.kind === 'tool');
  expect(tools.map((t) => t.toolCallId)).toEqual(['s4', 's5']);
  expect(timeline.filter((e) => e.kind === 'model').map((m) => m.step)).toEqual([4, 5, 6]);
  expect(timeline[0]).toMatchObject({
    kind: 'start',
    forkedFrom: { workflowId: id, step: 3 },
    resumedAtStep: 4,
  });

  const transcript = await runCli(['transcript', forkId], dev.env);
  expect(transcript.stdout).toContain(`forked from ${id}`);
  // It says where it goes on, and its first turn is that step.
  expect(transcript.stdout).toMatch(/resumes at step 4\n.* step 4 model turn/);

  const bad = await runCli(['fork', id, '--from-step', '6'], dev.env);
  expect(bad.code).toBe(1);
  expect(bad.stderr).toMatch(/--from-step must be between 1 and 5/);
}, 120_000);

test('replay --all replays every run a visibility query finds, with a summary', async () => {
  await sixStepRun();
  const out = await runCli(
    ['replay', '--all', '--query', "WorkflowType='agentWorkflow' AND ExecutionStatus='Completed'"],
    dev.env,
  );
  expect(out.code).toBe(0);
  const m = /(\d+) runs replayed: (\d+) OK, 0 diverged or failed/.exec(out.stdout);
  expect(m).not.toBeNull();
  expect(Number(m?.[1])).toBeGreaterThanOrEqual(1);
  expect(m?.[1]).toBe(m?.[2]);
  expect(out.stderr).toMatch(/\[#+\] \d+\/\d+/);
  // Throughput over what was replayed: every run, each at least a one-step run's 11 events.
  const t =
    /^Throughput: (\d+) histories \(([\d,]+) events\) in ([\d.]+) s: ([\d.]+) histories\/s, ([\d,]+) events\/s$/m.exec(
      out.stdout,
    );
  expect(t).not.toBeNull();
  expect(t?.[1]).toBe(m?.[1]);
  expect(Number(t?.[2]?.replace(/,/g, ''))).toBeGreaterThanOrEqual(11 * Number(m?.[1]));
  expect(Number(t?.[4])).toBeGreaterThan(0);
}, 120_000);

test('a run with a large result: export --with-content bundles it; transcript --file reads it whole; fork goes on from it', async () => {
  const id = uid('large');
  const out = await runCli(
    ['run', '--id', id, '--model', 'scripted:large', '--tools', 'sql_query,calculator', 'big'],
    dev.env,
  );
  expect(out.code).toBe(0);
  expect(out.stdout).toContain('C'.repeat(6000));

  const file = path.join(work, `${id}.json`);
  const exported = await runCli(['export', id, '-o', file, '--with-content'], dev.env);
  expect(exported.code).toBe(0);
  expect(exported.stderr).toMatch(/Wrote \d+ stored values to .*\.content\.json$/m);
  // History keeps a preview; the bundle holds the whole result.
  const tool = buildTimeline(readHistoryFile(file)).find((e) => e.kind === 'tool' && e.toolCallId === 'q');
  expect(tool).toMatchObject({ resultRef: expect.stringMatching(/^sha256:/) });
  expect((tool as { result: string }).result.length).toBeLessThan(1100);

  // Another machine: an empty content store, only the exported files.
  const elsewhere = { ...dev.env, DURABLE_AGENT_CONTENT_STORE: tempDir('empty-store') };
  const whole = await runCli(['transcript', '--file', file, '--format', 'json'], elsewhere);
  const entries = JSON.parse(whole.stdout) as ReturnType<typeof buildTimeline>;
  expect(entries.find((e) => e.kind === 'tool' && e.toolCallId === 'q')).toMatchObject({
    result: expect.stringContaining('C'.repeat(6000)),
  });
  fs.rmSync(file.replace(/\.json$/, '.content.json'));
  const previews = await runCli(['transcript', '--file', file], elsewhere);
  expect(previews.code).toBe(0);
  expect(previews.stdout).toMatch(/result: .*\[5\.\d KiB in the content store\]/);

  // The fork's first model call reads the stored conversation: it quotes the result of step 1.
  const fork = await runCli(['fork', id, '--from-step', '1', '--id', uid('fork-large')], dev.env);
  expect(fork.code).toBe(0);
  expect(fork.stdout).toContain('C'.repeat(6000));
}, 180_000);
