/**
 * The local model on this machine: load time, memory, generation speed, time per agent step, and
 * quality on the tuning set of bench/fixtures/local-model-tasks.ts, on the first held-out set of
 * bench/fixtures/local-model-held-out.ts (its misses were read on 2026-12-04, so it has been tuning
 * data since), on the second held-out set of bench/fixtures/local-model-held-out-2.ts (its misses were
 * read after the second round of tuning: tuning data since), on the third held-out set of
 * bench/fixtures/local-model-held-out-3.ts (written before the second round of tuning, never tuned
 * on) and on the fourth of bench/fixtures/local-model-held-out-4.ts (written before the third round
 * of tuning, never tuned on; run once after it, its misses printed then) and on the fifth of
 * bench/fixtures/local-model-held-out-5.ts (written before the fourth round, never tuned on) and on
 * the sixth of bench/fixtures/local-model-held-out-6.ts (written before the fifth round, never run),
 * beside the goals. Every task runs as a real agent
 * run (dev server, in-process worker, the real tool activities: knowledge base, sample database,
 * notifications) and is judged on its first tool call (right tool? arguments valid?) and end to end
 * (a final answer, or notification, with the expected fact; the right arguments where a task says).
 *
 *   npx tsx bench/local-model.ts [model files in models/ …] [--threads N] [--set tuning|tuning-2|held-out|held-out-2|held-out-3|held-out-4|held-out-5|held-out-6 (several with commas)|all]
 *                                [--tasks N (first N of each set)] [--only <text in the task>] [--tool <a tool the task expects>] [--steps]
 *
 * `--steps` prints every tool call of a task with its arguments and the head of its result.
 *
 * With several model files, each runs the same tasks in turn and a table compares them at the end.
 */
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { disposeLocalModels, loadLocalModel } from '../activities/model/local/runtime';
import type { AgentEvent, AgentInput, AgentResult } from '../shared/agent';
import { eventsQuery } from '../shared/agent';
import { notificationsQuery } from '../shared/notifications/messages';
import { startDevServerFixture, withDevWorker } from '../testkit/dev-server';
import { testConfig, uid } from '../testkit/temporal';
import type { BenchTask } from './fixtures/local-model-tasks';
import { HELD_OUT_TASKS } from './fixtures/local-model-held-out';
import { HELD_OUT_2_TASKS } from './fixtures/local-model-held-out-2';
import { HELD_OUT_3_TASKS } from './fixtures/local-model-held-out-3';
import { HELD_OUT_4_TASKS } from './fixtures/local-model-held-out-4';
import { HELD_OUT_5_TASKS } from './fixtures/local-model-held-out-5';
import { HELD_OUT_6_TASKS } from './fixtures/local-model-held-out-6';
import { TUNING_2_TASKS } from './fixtures/local-model-tuning-2';
import { BENCH_TASKS, BENCH_TOOLS } from './fixtures/local-model-tasks';
import { percentile, summary } from './stats';

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
}

const base = testConfig().models.local;
/** The model files named before the first flag, or the worker's default. */
function modelPaths(): string[] {
  const files: string[] = [];
  for (const arg of process.argv.slice(2)) {
    if (arg.startsWith('--')) break;
    files.push(path.resolve(base.modelsDir, arg));
  }
  return files.length ? files : [base.modelPath];
}
const THREADS = Number(flag('--threads') ?? base.threads);
const SET = flag('--set') ?? 'all';
const ONLY = flag('--only');
const STEPS = process.argv.includes('--steps');
const TOOL = flag('--tool');
const pick = (tasks: readonly BenchTask[]) =>
  tasks
    .slice(0, Number(flag('--tasks') ?? tasks.length))
    .filter((t) => (!ONLY || t.task.includes(ONLY)) && (!TOOL || t.expect.includes(TOOL)));
const ALL_SETS: [string, readonly BenchTask[]][] = [
  ['tuning', BENCH_TASKS],
  ['tuning-2', TUNING_2_TASKS],
  ['held-out', HELD_OUT_TASKS],
  ['held-out-2', HELD_OUT_2_TASKS],
  ['held-out-3', HELD_OUT_3_TASKS],
  ['held-out-4', HELD_OUT_4_TASKS],
  ['held-out-5', HELD_OUT_5_TASKS],
  ['held-out-6', HELD_OUT_6_TASKS],
];
/** The sets asked for: `all`, one name, or names separated by commas (`tuning,held-out-6`). */
const WANTED = SET === 'all' ? ALL_SETS.map(([n]) => n) : SET.split(',').map((n) => n.trim());
for (const name of WANTED) {
  if (!ALL_SETS.some(([n]) => n === name))
    throw new Error(
      `--set ${SET}: expected one or more of ${ALL_SETS.map(([n]) => n).join(', ')} (comma-separated), or all`,
    );
}
const SETS: [string, BenchTask[]][] = ALL_SETS.filter(([name]) => WANTED.includes(name)).map(
  ([name, tasks]) => [name, pick(tasks)],
);
const TASKS = SETS.flatMap(([, tasks]) => tasks);
let MODEL_PATH = base.modelPath;
let LOCAL = { ...base, threads: THREADS };

/** Load time, resident memory and plain generation speed, outside any workflow. */
async function speed(): Promise<void> {
  const rssBefore = process.memoryUsage().rss;
  const loaded = await loadLocalModel(MODEL_PATH, LOCAL);
  const rssAfter = process.memoryUsage().rss;
  console.log(
    `model ${path.basename(MODEL_PATH)}, ${THREADS} thread(s) of ${os.availableParallelism()} cores`,
  );
  console.log(
    `load ${loaded.loadMs.toFixed(0)} ms; RSS ${(rssAfter / 2 ** 20).toFixed(0)} MiB (+${((rssAfter - rssBefore) / 2 ** 20).toFixed(0)} MiB for the model and a ${LOCAL.contextSize}-token × ${LOCAL.sequences} context)`,
  );
  const rates: number[] = [];
  await loaded.pool.use(async (chat) => {
    for (let i = 0; i < 3; i++) {
      const meter = chat.sequence.tokenMeter.getState();
      const t0 = performance.now();
      await chat.generateResponse(
        [{ type: 'user', text: `Write a short story about a lighthouse keeper (${i}).` }],
        { maxTokens: 96, temperature: 0 },
      );
      const ms = performance.now() - t0;
      const used = chat.sequence.tokenMeter.diff(meter);
      rates.push((used.usedOutputTokens / ms) * 1000);
    }
  });
  console.log(`generation: ${summary(rates, 'tokens/s')} (96 tokens of free text, prompt included)`);
}

interface Outcome {
  task: BenchTask;
  firstTool?: string;
  rightTool: boolean;
  validArgs: boolean;
  endToEnd: boolean;
  steps: number;
  ms: number;
  modelMs: number[];
  note: string;
}

function judge(
  task: BenchTask,
  result: AgentResult | undefined,
  events: AgentEvent[],
  notes: string[],
): Outcome {
  const first = events.find((e) => e.kind === 'tool_started' || e.kind === 'tool_rejected');
  const rightTool = first !== undefined && task.expect.includes(first.tool ?? '');
  const answer = result?.stopReason === 'final_answer' ? (result.answer ?? '') : '';
  // A notification task's fact must reach the user in a notification; the others in the answer.
  const said = task.notification ? notes.join('\n') : answer;
  const rightCall = events.find((e) => e.kind === 'tool_started' && task.expect.includes(e.tool ?? ''));
  const endToEnd =
    result?.stopReason === 'final_answer' &&
    rightCall !== undefined &&
    (!task.args || task.args((rightCall.args ?? {}) as Record<string, unknown>)) &&
    (!task.answer || task.answer.some((re) => re.test(said)));
  return {
    task,
    firstTool: first?.tool,
    rightTool,
    validArgs: rightTool && first?.kind === 'tool_started',
    endToEnd,
    steps: result?.steps ?? 0,
    ms: 0,
    modelMs: events.filter((e) => e.kind === 'model_finished').map((e) => e.durationMs ?? 0),
    note: answer.replace(/\s+/g, ' ').slice(0, 90),
  };
}

async function quality(): Promise<Outcome[]> {
  const fx = await startDevServerFixture();
  const outcomes: Outcome[] = [];
  try {
    await withDevWorker(
      fx,
      async (taskQueue) => {
        for (const task of TASKS) {
          const input: AgentInput = {
            task: task.task,
            model: { provider: 'local' },
            tools: [...BENCH_TOOLS],
            // Nobody answers approvals here: a statement that may write (a small model's garbled SQL)
            // is refused after a second, the model told, instead of the run waiting an hour.
            policy: { maxSteps: 6, approvalTimeout: '1 second' },
          };
          const t0 = performance.now();
          const handle = await fx.client.workflow.start('agentWorkflow', {
            taskQueue,
            workflowId: uid('bench-local'),
            args: [input],
          });
          const result = await (handle.result() as Promise<AgentResult>).catch(() => undefined);
          const ms = performance.now() - t0;
          const events = await handle.query(eventsQuery, {});
          const notes = (await handle.query(notificationsQuery)).notifications.map((n) => n.message);
          const outcome = { ...judge(task, result, events, notes), ms };
          outcomes.push(outcome);
          const mark = (ok: boolean) => (ok ? '✓' : '✗');
          console.log(
            `${mark(outcome.rightTool)} tool ${mark(outcome.validArgs)} args ${mark(outcome.endToEnd)} e2e  ` +
              `${(ms / 1000).toFixed(1)} s, ${outcome.steps} steps  ${task.task}  → ${outcome.firstTool ?? '(no call)'}; ${outcome.note}`,
          );
          if (STEPS) {
            for (const e of events) {
              if (e.kind === 'tool_started') console.log(`    ${e.tool} ${JSON.stringify(e.args)}`);
              if (e.kind === 'tool_finished' || e.kind === 'tool_rejected')
                console.log(
                  `      ${e.isError ? '✗ ' : ''}${(e.text ?? '').replace(/\s+/g, ' ').slice(0, 160)}`,
                );
            }
          }
        }
      },
      { models: { ...testConfig().models, local: LOCAL } },
    );
  } finally {
    await fx.stop();
  }
  return outcomes;
}

/** The goals of the local model's quality (docs/local-model.md). */
const GOALS = { rightTool: 0.9, endToEnd: 0.8, stepP50Ms: 3000 };

/** The figures of one set, beside the goals. */
interface SetFigures {
  name: string;
  tasks: number;
  rightTool: number;
  validArgs: number;
  endToEnd: number;
}

function figures(name: string, outcomes: Outcome[]): SetFigures {
  const count = (f: (o: Outcome) => boolean) => outcomes.filter(f).length;
  return {
    name,
    tasks: outcomes.length,
    rightTool: count((o) => o.rightTool),
    validArgs: count((o) => o.validArgs),
    endToEnd: count((o) => o.endToEnd),
  };
}

const pct = (n: number, of: number) => `${n}/${of} (${of ? ((100 * n) / of).toFixed(0) : 0} %)`;
const vsGoal = (n: number, of: number, goal: number) =>
  `   goal ≥ ${(100 * goal).toFixed(0)} % ${of && n / of >= goal ? 'met' : 'missed'}`;

function report(f: SetFigures): void {
  console.log(`\n${f.name} set (${f.tasks} tasks)`);
  console.log(
    `  right tool first:  ${pct(f.rightTool, f.tasks)}${vsGoal(f.rightTool, f.tasks, GOALS.rightTool)}`,
  );
  console.log(`  valid arguments:   ${pct(f.validArgs, f.tasks)}`);
  console.log(
    `  end-to-end:        ${pct(f.endToEnd, f.tasks)}${vsGoal(f.endToEnd, f.tasks, GOALS.endToEnd)}`,
  );
}

/** The p50 that `summary` prints, 0 for no samples. */
const median = (values: number[]) => (values.length ? percentile(values, 50) : 0);

async function main() {
  const rows: { model: string; sets: SetFigures[]; stepP50: number; modelP50: number }[] = [];
  for (const modelPath of modelPaths()) {
    MODEL_PATH = modelPath;
    LOCAL = { ...base, modelPath, threads: THREADS };
    console.log(`\n=== ${path.basename(modelPath)}`);
    await speed();
    const outcomes = await quality();
    await disposeLocalModels();
    const sets = SETS.map(([name, tasks]) =>
      figures(
        name,
        outcomes.filter((o) => tasks.includes(o.task)),
      ),
    );
    sets.forEach(report);
    const steps = outcomes.flatMap((o) => (o.steps ? [o.ms / o.steps] : []));
    const stepP50 = median(steps);
    console.log(`\nmodel call:        ${summary(outcomes.flatMap((o) => o.modelMs))}`);
    console.log(`  first decision:  ${summary(outcomes.flatMap((o) => o.modelMs.slice(0, 1)))}`);
    console.log(`  later decisions: ${summary(outcomes.flatMap((o) => o.modelMs.slice(1)))}`);
    console.log(
      `agent step (wall): ${summary(steps)}   goal p50 ≤ ${GOALS.stepP50Ms} ms ${stepP50 <= GOALS.stepP50Ms ? 'met' : 'missed'}`,
    );
    rows.push({
      model: path.basename(modelPath),
      sets,
      stepP50,
      modelP50: median(outcomes.flatMap((o) => o.modelMs)),
    });
  }
  if (rows.length < 2) return;
  console.log(
    '\n=== side by side (goals: right first tool ≥ 90 %, end to end ≥ 80 % on each set, step p50 ≤ 3 s)',
  );
  for (const row of rows) {
    const sets = row.sets
      .map(
        (f) => `${f.name}: first tool ${pct(f.rightTool, f.tasks)}, end to end ${pct(f.endToEnd, f.tasks)}`,
      )
      .join('; ');
    console.log(
      `${row.model}: ${sets}; step p50 ${(row.stepP50 / 1000).toFixed(1)} s, model call p50 ${(row.modelP50 / 1000).toFixed(1)} s`,
    );
  }
}

// The runtime's native threads and the worker's connection would keep the process alive.
main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
