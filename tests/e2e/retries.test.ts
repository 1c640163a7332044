/**
 * While the server retries a model call (an OpenAI-compatible endpoint where nothing listens),
 * `run`, `status` and the run's API answer (what the run page draws) say so: the activity, the
 * attempt, the last error, when the next attempt is due. A real dev server and worker process.
 */
import { startApiServer } from '../../server/api/server';
import type { RunningApiServer } from '../../server/api/server';
import type { RetryingActivityView } from '../../shared/api-shapes';
import { runCli, startCli } from '../../testkit/processes';
import { useDevServer } from '../support/environments';

const dev = useDevServer({
  queue: 'retries',
  // Port 9 (discard) has no listener here, and fetch refuses it at once: every attempt fails fast.
  worker: { OPENAI_API_KEY: 'sk-test-retries', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' },
});
let api: RunningApiServer;

beforeAll(async () => {
  api = await startApiServer({ client: dev.fx.client, taskQueue: dev.taskQueue, host: '127.0.0.1', port: 0 });
  dev.defer(() => api.close());
});

test('a model call being retried shows its attempt, last error and next attempt in run, status and the API', async () => {
  const run = startCli(dev.env, ['run', 'hello', '--model', 'openai:gpt-test', '--id', 'retries-run']);
  try {
    await run.waitFor('stdout', 'callModel is being retried: attempt');
    const line =
      run
        .stdout()
        .split('\n')
        .find((l) => l.includes('is being retried')) ?? '';
    expect(line).toMatch(
      /↻ callModel is being retried: attempt \d+ \(the last failed: OpenAI API at http:\/\/127\.0\.0\.1:9 could not be reached/,
    );
    expect(line).toMatch(/next attempt (in \d+ s|now)/);

    const status = await runCli(['status', 'retries-run'], dev.env);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/↻ callModel is being retried: attempt \d+/);

    const res = await fetch(`${api.url}/api/runs/retries-run`);
    expect(res.status).toBe(200);
    const detail = (await res.json()) as { retrying: RetryingActivityView[] };
    expect(detail.retrying).toEqual([
      expect.objectContaining({
        activity: 'callModel',
        lastError: expect.stringContaining('could not be reached'),
      }),
    ]);
    expect(detail.retrying[0]!.attempt).toBeGreaterThan(1);
  } finally {
    await runCli(['cancel', 'retries-run'], dev.env);
    run.child.kill('SIGINT');
    await run.exited;
  }
}, 120_000);
