/**
 * `npm run check` (and `npm test`'s pretest): typecheck, lint and format check at the same time, one
 * per core, each one's output printed whole when it ends; exit code 1 when any of them failed.
 * Each still runs on its own as `npm run typecheck`, `npm run lint`, `npm run format:check`.
 */
import { spawn } from 'node:child_process';
import { PROJECT_ROOT } from '../shared/project-root';

const CHECKS = ['typecheck', 'lint', 'format:check'] as const;

interface Outcome {
  name: string;
  code: number;
  output: string;
  ms: number;
}

function runScript(name: string): Promise<Outcome> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', name], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', (err) => resolve({ name, code: 1, output: `did not start: ${err.message}`, ms: 0 }));
    child.once('close', (code, signal) =>
      resolve({ name, code: code ?? (signal ? 1 : 0), output, ms: Date.now() - started }),
    );
  });
}

async function main(): Promise<number> {
  const outcomes = await Promise.all(
    CHECKS.map(async (name) => {
      const outcome = await runScript(name);
      const verdict = outcome.code === 0 ? 'ok' : `FAILED (exit ${outcome.code})`;
      console.log(`== npm run ${name}: ${verdict} in ${(outcome.ms / 1000).toFixed(1)} s`);
      if (outcome.output.trim()) console.log(outcome.output.trimEnd());
      return outcome;
    }),
  );
  const failed = outcomes.filter((o) => o.code !== 0).map((o) => o.name);
  if (failed.length) console.log(`\nFailed: npm run ${failed.join(', npm run ')}`);
  return failed.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
