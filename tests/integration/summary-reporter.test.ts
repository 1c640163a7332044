/**
 * The suite's summary reporter on a real jest run: a file whose tests pass but whose afterAll hook
 * throws is reported with the hook's error (jest gives such a file an exec error with an empty
 * message and the error only in its stack), so a CI log's closing list says what went wrong.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../shared/project-root';
import { tempDir } from '../../testkit/temporal';

const JEST = path.join(PROJECT_ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
const REPORTER = path.join(PROJECT_ROOT, 'tests', 'support', 'summary-reporter.js');

interface Results {
  totals: { passed: number; failed: number };
  failures: { file: string; test: string; message: string }[];
}

test('a file whose afterAll hook fails is listed with the hook’s error', () => {
  const dir = tempDir('summary-reporter');
  const runDir = tempDir('summary-reporter-run');
  fs.writeFileSync(
    path.join(dir, 'after-all.check.js'),
    [
      "test('passes', () => expect(1 + 1).toBe(2));",
      "afterAll(() => { throw new Error('the server did not stop: port 7233 still held'); });",
    ].join('\n'),
  );
  fs.writeFileSync(
    path.join(dir, 'jest.config.js'),
    `module.exports = ${JSON.stringify({
      rootDir: dir,
      testEnvironment: 'node',
      testMatch: ['**/*.check.js'],
      transform: {},
      reporters: [REPORTER],
    })};`,
  );
  const env: NodeJS.ProcessEnv = { ...process.env, DURABLE_AGENT_TEST_RUN_DIR: runDir };
  delete env.DURABLE_AGENT_TEST_OWN_RUN_DIR;
  delete env.NODE_OPTIONS;
  const run = spawnSync(process.execPath, [JEST, '--config', path.join(dir, 'jest.config.js')], {
    cwd: dir,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(run.status).toBe(1);
  const written = fs.readdirSync(runDir).filter((f) => f.startsWith('results-'));
  expect(written).toHaveLength(1);
  const results = JSON.parse(fs.readFileSync(path.join(runDir, written[0] as string), 'utf8')) as Results;
  expect(results.totals.passed).toBe(1);
  expect(results.failures).toHaveLength(1);
  expect(results.failures[0]?.file).toBe('after-all.check.js');
  expect(results.failures[0]?.test).toMatch(/did not end cleanly/);
  expect(results.failures[0]?.message).toContain('the server did not stop: port 7233 still held');
}, 90_000);
