/**
 * `npm test` after its pretest: the suite's jest commands, every one run to its end even when one
 * before it failed, then one closing summary (the 10 slowest test files of all commands, each failed
 * test with the start of its message, passed / failed / skipped counts) and exit code 1 when any
 * command failed.
 *
 *   - the suite: every test file but the local-model ones, in the two jest workers of
 *     jest.config.js (test files are isolated: own servers, ports, task queues, schemas, mail tokens);
 *   - each local-model integration file in a jest process of its own (see jest.config.js).
 *
 * The commands share one run folder (DURABLE_AGENT_TEST_RUN_DIR): the workflow bundle, built by the
 * first test file that needs it, and each command's per-file timings. `npm test -- <jest arguments>` runs one jest command with
 * those arguments instead.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../shared/project-root';
import type { FileTiming, RunTotals, TestFailure } from '../testkit/test-run';
import { RUN_DIR_ENV, failureReport, readRunResults } from '../testkit/test-run';

const JEST = path.join(PROJECT_ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
/** Test files that need a jest process of their own (node-llama-cpp's native import; jest.config.js). */
const OWN_PROCESS = ['integration/local-model-runtime', 'integration/local-model-real'];
/** Matches both: the suite leaves them out. */
const OWN_PROCESS_PATTERN = 'integration/local-model-';
const SLOWEST = 10;

interface JestCommand {
  name: string;
  args: string[];
}

function commands(extra: string[]): JestCommand[] {
  if (extra.length) return [{ name: 'jest', args: extra }];
  return [
    {
      name: 'suite',
      args: ['--testPathIgnorePatterns', OWN_PROCESS_PATTERN],
    },
    ...OWN_PROCESS.map((p) => ({ name: path.basename(p), args: ['--runInBand', p] })),
  ];
}

/** Runs one jest command with the terminal as its output; resolves to its exit code. */
function runJest(command: JestCommand, runDir: string): Promise<number> {
  const nodeOptions = ['--experimental-vm-modules', process.env.NODE_OPTIONS].filter(Boolean).join(' ');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [JEST, ...command.args], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, NODE_OPTIONS: nodeOptions, [RUN_DIR_ENV]: runDir },
      stdio: 'inherit',
    });
    child.once('error', (err) => {
      console.error(`jest (${command.name}) did not start: ${err.message}`);
      resolve(1);
    });
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

function printSummary(
  timings: FileTiming[],
  totals: RunTotals,
  failures: TestFailure[],
  failedCommands: string[],
): void {
  const files = [...timings].sort((a, b) => b.ms - a.ms);
  const all = files.reduce((sum, f) => sum + f.ms, 0);
  console.log(`\nSlowest test files (of ${files.length}, ${(all / 1000).toFixed(0)} s in all):`);
  for (const f of files.slice(0, SLOWEST))
    console.log(`  ${(f.ms / 1000).toFixed(1).padStart(6)} s  ${f.file}`);
  for (const line of failureReport(failures, failures.length > 3 ? 6 : 12)) console.log(line);
  if (failedCommands.length) console.log(`\nFailed: jest ${failedCommands.join(', jest ')}`);
  console.log(`\n${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
}

async function main(): Promise<number> {
  const started = Date.now();
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-tests-'));
  const failed: string[] = [];
  try {
    for (const command of commands(process.argv.slice(2))) {
      console.log(`\n== jest ${command.args.join(' ')}`);
      if ((await runJest(command, runDir)) !== 0) failed.push(command.name);
    }
    const { timings, totals, failures } = readRunResults(runDir);
    printSummary(timings, totals, failures, failed);
  } finally {
    fs.rmSync(runDir, { recursive: true, force: true });
  }
  console.log(`npm test: ${((Date.now() - started) / 1000).toFixed(0)} s for the jest commands`);
  return failed.length ? 1 : 0;
}

void main().then((code) => process.exit(code));
