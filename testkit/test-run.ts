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

/** Above this many failures, the closing list ends with an index of one line per failure. */
const INDEX_ABOVE = 3;
/** Characters of the first message line an index line keeps. */
const INDEX_CHARS = 160;

/**
 * The closing list of failed tests, so the tail of a long CI log names each one and why: each with
 * up to `detailLines` lines of its message, and, when there are more than a few, a one-line index of
 * all of them after that (a log cut in the middle keeps its tail, and the tail then names them all).
 */
export function failureReport(failures: TestFailure[], detailLines = 12): string[] {
  if (!failures.length) return [];
  const lines = ['', `Failed tests (${failures.length}):`];
  for (const f of failures) {
    lines.push(`  ✕ ${f.file} › ${f.test}`);
    for (const line of f.message.split('\n').slice(0, detailLines)) lines.push(`      ${line}`);
  }
  if (failures.length > INDEX_ABOVE) {
    lines.push('', `Failed tests, one line each (${failures.length}):`);
    for (const f of failures) {
      const first = f.message.split('\n').find((l) => l.trim()) ?? '';
      const cut = first.trim().length > INDEX_CHARS ? `${first.trim().slice(0, INDEX_CHARS)}…` : first.trim();
      lines.push(`  ✕ ${f.file} › ${f.test}${cut ? ` — ${cut}` : ''}`);
    }
  }
  return lines;
}
