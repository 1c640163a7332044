// Prints the plain closing line "N passed, N failed, N skipped" after jest's own summary, and the
// 10 slowest test files, so where the suite's time goes is visible in every CI log. Under `npm test`
// (scripts/test.ts names a run folder in DURABLE_AGENT_TEST_RUN_DIR) it writes the files' times and
// the counts there instead of the list, and the run closes with one list of all its jest commands
// (testkit/test-run.ts reads them).
const fs = require('node:fs');
const path = require('node:path');

const SLOWEST = 10;

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
      fs.writeFileSync(path.join(runDir, `results-${process.pid}.json`), JSON.stringify({ files, totals }));
    } else if (files.length > 1) {
      const total = files.reduce((sum, f) => sum + f.ms, 0);
      process.stdout.write(
        `\nSlowest test files (of ${files.length}, ${(total / 1000).toFixed(0)} s in all):\n`,
      );
      for (const f of files.slice(0, SLOWEST)) {
        process.stdout.write(`  ${(f.ms / 1000).toFixed(1).padStart(6)} s  ${f.file}\n`);
      }
    }
    process.stdout.write(`\n${results.numPassedTests} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
module.exports = SummaryReporter;
