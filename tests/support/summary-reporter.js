// Prints the plain closing line "N passed, N failed, N skipped" after jest's own summary, and the
// slowest test files, so where the suite's time goes is visible in every CI log.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    const files = results.testResults
      .map((r) => ({ file: r.testFilePath, ms: r.perfStats.end - r.perfStats.start }))
      .filter((f) => Number.isFinite(f.ms))
      .sort((a, b) => b.ms - a.ms);
    if (files.length > 1) {
      const total = files.reduce((sum, f) => sum + f.ms, 0);
      process.stdout.write(
        `\nSlowest test files (of ${files.length}, ${(total / 1000).toFixed(0)} s in all):\n`,
      );
      for (const f of files.slice(0, 12)) {
        const name = f.file.slice(f.file.lastIndexOf('/tests/') + 1);
        process.stdout.write(`  ${(f.ms / 1000).toFixed(1).padStart(6)} s  ${name}\n`);
      }
    }
    process.stdout.write(`\n${results.numPassedTests} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
module.exports = SummaryReporter;
