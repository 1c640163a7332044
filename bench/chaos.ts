/**
 * Chaos and flood: agent jobs with real side effects (PostgreSQL writes, mail through Postfix,
 * notifications, 60 KB tool results) on the script's own dev server and worker processes, while
 * workers are SIGKILLed at seeded random moments, the dev server restarts once, and an inbox and
 * running jobs are flooded with maximum-size notifications. Prints runs finished / lost / stuck,
 * workflow task failures by cause, duplicate or missing side effects and notifications lost, and
 * exits non-zero when any of them is not zero.
 *
 *   npx tsx bench/chaos.ts --runs 50 --kills 20 --flood-rate 17 --flood-seconds 60 --seed 1 --server-restart
 *
 * Needs PostgreSQL on 127.0.0.1:5432 and the test mail server (`bash scripts/mail-server.sh start`).
 */
import { Command, InvalidArgumentError } from 'commander';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { requireMailServer } from '../testkit/mail';
import { chaosFailures, formatReport, runChaos } from './chaos/run';

function count(name: string, min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min) throw new InvalidArgumentError(`${name} must be a number ≥ ${min}`);
    return n;
  };
}

async function main(): Promise<void> {
  const o = new Command('chaos')
    .option('--runs <n>', 'agent jobs', count('--runs', 1), 50)
    .option('--kills <n>', 'worker SIGKILLs', count('--kills', 0), 20)
    .option('--flood-rate <n>', 'flood notifications per second (0: no flood)', count('--flood-rate', 0), 17)
    .option('--flood-seconds <n>', 'how long the flood lasts', count('--flood-seconds', 0), 60)
    .option(
      '--flood-door <door>',
      'how the flood is sent: update (as the CLI and API send) or signal (raw signals, the hostile case)',
      (value: string) => {
        if (value !== 'update' && value !== 'signal')
          throw new InvalidArgumentError('--flood-door must be update or signal');
        return value;
      },
      'update',
    )
    .option(
      '--seed <n>',
      'seed of the plan (job timing, kill moments, restart moment)',
      count('--seed', 0),
      1,
    )
    .option('--server-restart', 'restart the dev server once (same data file)', false)
    .option('--workers <n>', 'worker processes', count('--workers', 1), 2)
    .option(
      '--window <s>',
      'seconds over which starts, kills and the restart are spread',
      count('--window', 5),
    )
    .option(
      '--settle <s>',
      'seconds to wait for the runs afterwards before calling them stuck',
      count('--settle', 10),
      240,
    )
    .parse()
    .opts<{
      runs: number;
      kills: number;
      floodRate: number;
      floodSeconds: number;
      floodDoor: 'update' | 'signal';
      seed: number;
      serverRestart: boolean;
      workers: number;
      window?: number;
      settle: number;
    }>();
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  await requireMailServer();
  const report = await runChaos({
    runs: o.runs,
    kills: o.kills,
    floodRate: o.floodRate,
    floodSeconds: o.floodSeconds,
    floodDoor: o.floodDoor,
    seed: o.seed,
    serverRestart: o.serverRestart,
    workers: o.workers,
    ...(o.window !== undefined ? { windowSeconds: o.window } : {}),
    settleSeconds: o.settle,
    log: (line) => console.error(line),
  });
  console.log(formatReport(report));
  process.exitCode = chaosFailures(report).length ? 1 : 0;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 2;
});
