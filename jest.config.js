/**
 * `npm test` runs each local-model integration test file in a jest process of its own: node-llama-cpp is an ES
 * module loaded by a native import(), and in a process where other test files ran first, Node 20
 * can hand that import to the loader of an earlier, discarded test context.
 * @type {import('jest').Config}
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' } }] },
  // Generous: tests start dev servers and worker processes, slow on a busy 2-core machine.
  testTimeout: 240000,
  // A driver pool left open by a failing test must not keep CI waiting after the run.
  forceExit: true,
  reporters: ['default', '<rootDir>/tests/support/summary-reporter.js'],
  // Test files are isolated (own servers, ports, task queues, schemas, mail tokens), so two run at
  // a time, one per core of the 2-core machines the suite runs on; the longest start first.
  maxWorkers: 2,
  testSequencer: '<rootDir>/tests/support/sequencer.js',
  globalSetup: '<rootDir>/tests/support/global-setup.ts',
  globalTeardown: '<rootDir>/tests/support/global-teardown.ts',
};
