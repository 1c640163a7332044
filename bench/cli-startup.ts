/**
 * How long a CLI command takes from `node` starting to its exit: `--help`, `status <id>` of a
 * finished run and `notify inbox:<user>`, against a dev server of its own with a worker, beside
 * `node -e 0` (Node's own start on this machine). Each command runs from the CLI's bundles
 * (bin/cli-entry.js, what `durable-agent` runs) and through tsx from the sources
 * (DURABLE_AGENT_CLI_BUNDLE=off); `npx durable-agent status` adds npm's own start. The median and
 * the fastest of `runs` runs are printed, the commands taking turns so that a busy moment of the
 * machine falls on all of them alike, after one unrecorded run of each (which builds the bundles
 * and their code caches). Goal: ≤ 300 ms for `--help`, `status` and `notify` from the bundles.
 *
 *   npx tsx bench/cli-startup.ts [runs=15] [another checkout's bin/durable-agent.js]
 *
 * The second argument measures that CLI too (e.g. a copy of the commit before, for a before/after).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { PROJECT_ROOT } from '../shared/project-root';
import { startDevServerFixture } from '../testkit/dev-server';
import { runCli, startWorkerProcess } from '../testkit/processes';
import { CLI, uid } from '../testkit/temporal';
import { percentile } from './stats';

const RUNS = Number(process.argv[2] ?? 15);
const OTHER = process.argv[3] ? path.resolve(process.argv[3]) : undefined;
const GOAL_MS = 300;

interface Case {
  label: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  goal?: boolean;
}

/** Wall time of one run, in ms; throws when the command fails, so a broken CLI is not timed. */
function timed(c: Case, env: Record<string, string>): number {
  const started = performance.now();
  const r = spawnSync(c.command, c.args, {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env, ...c.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const ms = performance.now() - started;
  if (r.status !== 0) throw new Error(`${c.label} exited ${r.status ?? r.signal}: ${String(r.stderr)}`);
  return ms;
}

async function main(): Promise<void> {
  const fx = await startDevServerFixture();
  const env = { TEMPORAL_ADDRESS: fx.address, DURABLE_AGENT_TASK_QUEUE: uid('cli-startup') };
  const worker = await startWorkerProcess(env);
  try {
    const runId = uid('bench-run');
    const run = await runCli(['run', '--model', 'scripted:demo', '--id', runId, 'Plan my trip'], env);
    if (run.code !== 0) throw new Error(`the run failed: ${run.stderr}`);
    const node = process.execPath;
    const bin = CLI[1] as string;
    const cli = (label: string, args: string[], extra: Partial<Case> = {}): Case[] => [
      { label: `${label} (bundle)`, command: node, args: [bin, ...args], goal: true, ...extra },
      {
        label: `${label} (tsx)`,
        command: node,
        args: [bin, ...args],
        env: { DURABLE_AGENT_CLI_BUNDLE: 'off' },
      },
      ...(OTHER ? [{ label: `${label} (${OTHER})`, command: node, args: [OTHER, ...args] }] : []),
    ];
    const cases: Case[] = [
      { label: 'node -e 0', command: node, args: ['-e', '0'] },
      ...cli('--help', ['--help']),
      ...cli(`status <id>`, ['status', runId]),
      ...cli('notify', ['notify', 'inbox:bench', 'hello']),
      { label: 'npx durable-agent status <id>', command: 'npx', args: ['durable-agent', 'status', runId] },
    ];
    for (const c of cases) timed(c, env);
    const times = new Map<Case, number[]>(cases.map((c) => [c, []]));
    for (let i = 0; i < RUNS; i++) for (const c of cases) times.get(c)?.push(timed(c, env));

    console.log(
      `CLI start-up to exit, ${RUNS} runs each (median, fastest), goal ≤ ${GOAL_MS} ms from the bundles`,
    );
    const width = Math.max(...cases.map((c) => c.label.length));
    for (const c of cases) {
      const t = times.get(c) ?? [];
      const median = percentile(t, 50);
      const verdict = c.goal ? (median <= GOAL_MS ? '  ✓ goal' : '  ✗ over the goal') : '';
      console.log(
        `  ${c.label.padEnd(width)}  ${median.toFixed(0).padStart(5)} ms  ${Math.min(...t)
          .toFixed(0)
          .padStart(5)} ms${verdict}`,
      );
    }
  } finally {
    worker.child.kill('SIGTERM');
    await worker.exited;
    await fx.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
