/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' } }] },
  testTimeout: 120000,
  reporters: ['default', '<rootDir>/tests/support/summary-reporter.js'],
  globalSetup: '<rootDir>/tests/support/global-setup.ts',
};
