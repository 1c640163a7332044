/**
 * The folder one `npm test` run shares between its jest commands (scripts/test.ts makes it and
 * names it in DURABLE_AGENT_TEST_RUN_DIR): the workflow bundle, built once for all of them, and the
 * results each command's summary reporter (tests/support/summary-reporter.js) writes there, so the
 * run can close with one list of the slowest test files and one count.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Names the run folder (set by scripts/test.ts; the global setup makes one when it is unset). */
export const RUN_DIR_ENV = 'DURABLE_AGENT_TEST_RUN_DIR';

/** The workflow bundle's file in a run folder. */
export function runBundleFile(runDir: string): string {
  return path.join(runDir, 'workflow-bundle.js');
}

/** How long one test file took. */
export interface FileTiming {
  /** Path from the checkout, e.g. tests/durability/chaos.test.ts. */
  file: string;
  ms: number;
}

/** Test counts of one jest command, or of all of them. */
export interface RunTotals {
  passed: number;
  failed: number;
  skipped: number;
}

/** One failed test (or a test file that could not run), its message cut short. */
export interface TestFailure {
  file: string;
  test: string;
  message: string;
}

/** What one jest command's summary reporter writes: `results-<pid>.json` in the run folder. */
export interface CommandResults {
  files: FileTiming[];
  totals: RunTotals;
  failures?: TestFailure[];
}

/** The results of every jest command of the run, merged. */
export function readRunResults(runDir: string): {
  timings: FileTiming[];
  totals: RunTotals;
  failures: TestFailure[];
} {
  const timings: FileTiming[] = [];
  const failures: TestFailure[] = [];
  const totals: RunTotals = { passed: 0, failed: 0, skipped: 0 };
  for (const name of fs.readdirSync(runDir)) {
    if (!/^results-\d+\.json$/.test(name)) continue;
    const r = JSON.parse(fs.readFileSync(path.join(runDir, name), 'utf8')) as CommandResults;
    timings.push(...r.files);
    failures.push(...(r.failures ?? []));
    totals.passed += r.totals.passed;
    totals.failed += r.totals.failed;
    totals.skipped += r.totals.skipped;
  }
  return { timings, totals, failures };
}
