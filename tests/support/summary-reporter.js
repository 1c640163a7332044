// Prints the plain closing line "N passed, N failed, N skipped" after jest's own summary, and the
// 10 slowest test files, so where the suite's time goes is visible in every CI log. Under `npm test`
// (scripts/test.ts names a run folder in DURABLE_AGENT_TEST_RUN_DIR) it writes the files' times and
// the counts there instead of the list, and the run closes with one list of all its jest commands
// (testkit/test-run.ts reads them).
const fs = require('node:fs');
const path = require('node:path');

const SLOWEST = 10;
/** How much of each failure's message the closing list keeps (the full one is in jest's own report above). */
const FAILURE_CHARS = 800;

/** Strips terminal colours and cuts a failure message to its first FAILURE_CHARS characters. */
function shortMessage(text) {
  // eslint-disable-next-line no-control-regex
  const plain = String(text ?? '')
    .replace(/\u001b\[[0-9;]*m/g, '')
    .split('\n')
    // Stack frames inside dependencies say nothing about which line of ours failed.
    .filter((line) => !/^\s*at .*(node_modules|node:internal)/.test(line))
    .join('\n')
    .trim();
  return plain.length > FAILURE_CHARS ? `${plain.slice(0, FAILURE_CHARS)}…` : plain;
}

/** Every failed test and every test file that could not run, with where and why. */
function failuresOf(rootDir, results) {
  const failures = [];
  for (const r of results.testResults) {
    const file = path.relative(rootDir, r.testFilePath);
    if (r.testExecError) {
      // An afterAll hook's error or an error thrown while no test ran comes with an empty message and
      // the errors in its stack: the file's tests may have passed, the file did not end cleanly.
      const { message, stack } = r.testExecError;
      const ran = (r.testResults ?? []).length > 0;
      failures.push({
        file,
        test: ran
          ? '(the file did not end cleanly: an afterAll hook or an error outside its tests)'
          : '(the file did not run)',
        message: shortMessage(message || stack),
      });
    }
    for (const a of r.testResults ?? []) {
      if (a.status === 'failed')
        failures.push({ file, test: a.fullName, message: shortMessage((a.failureMessages ?? [])[0]) });
    }
  }
  return failures;
}

/** The closing list of failures, so a CI log's tail says which test failed and why. */
function printFailures(failures) {
  if (!failures.length) return;
  process.stdout.write(`\nFailed tests (${failures.length}):\n`);
  for (const f of failures) {
    process.stdout.write(`  ✕ ${f.file} › ${f.test}\n`);
    for (const line of f.message.split('\n').slice(0, 12)) process.stdout.write(`      ${line}\n`);
  }
}

class SummaryReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    const files = results.testResults
      .map((r) => ({
        file: path.relative(this.rootDir, r.testFilePath),
        ms: r.perfStats.end - r.perfStats.start,
      }))
      .filter((f) => Number.isFinite(f.ms))
      .sort((a, b) => b.ms - a.ms);
    // A run folder of this jest run's own (global-setup.ts) has no `npm test` to read it.
    const runDir = process.env.DURABLE_AGENT_TEST_OWN_RUN_DIR
      ? undefined
      : process.env.DURABLE_AGENT_TEST_RUN_DIR;
    if (runDir) {
      const totals = { passed: results.numPassedTests, failed, skipped };
      fs.writeFileSync(
        path.join(runDir, `results-${process.pid}.json`),
        JSON.stringify({ files, totals, failures: failuresOf(this.rootDir, results) }),
      );
    } else if (files.length > 1) {
      const total = files.reduce((sum, f) => sum + f.ms, 0);
      process.stdout.write(
        `\nSlowest test files (of ${files.length}, ${(total / 1000).toFixed(0)} s in all):\n`,
      );
      for (const f of files.slice(0, SLOWEST)) {
        process.stdout.write(`  ${(f.ms / 1000).toFixed(1).padStart(6)} s  ${f.file}\n`);
      }
    }
    if (!runDir) printFailures(failuresOf(this.rootDir, results));
    process.stdout.write(`\n${results.numPassedTests} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
module.exports = SummaryReporter;
