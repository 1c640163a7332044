// Prints the plain closing line "N passed, N failed, N skipped" after jest's own summary.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stdout.write(`\n${results.numPassedTests} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
module.exports = SummaryReporter;
