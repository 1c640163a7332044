/**
 * `durable-agent content gc|stats|schedule`: the content store's garbage collection
 * (client/content.ts; docs/content-retention.md). `gc` collects from this process, with the same
 * collector the worker's schedule runs; `--dry-run` says what it would remove and removes nothing.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { Client } from '@temporalio/client';
import type { ContentGcReport } from '../shared/content-gc';
import { contentGcScheduleId } from '../shared/content-gc';
import { localTime } from '../shared/local-time';
import { MIN_INTERVAL_MS, durationMs, formatDuration } from '../shared/schedule-spec';
import { formatBytes } from '../shared/temporal-limits';
import type { TemporalTarget } from '../workers/connect';
import type * as Config from '../workers/config';
import type * as StoreContent from '../client/content';
import type * as TracedClient from '../client/traced-client';

/** What the commands run, loaded when one runs. */
function load() {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand */
  return {
    ...(require('../workers/config') as typeof Config),
    ...(require('../client/content') as typeof StoreContent),
    ...(require('../client/traced-client') as typeof TracedClient),
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** A duration option: `7d`, `36h`, `90m`. */
function duration(value: string): number {
  const ms = durationMs(value);
  if (ms === null) throw new InvalidArgumentError('must be a duration such as 7d, 36h or 90m');
  return ms;
}

/** An interval option: a duration of 1s or more. */
function interval(value: string): number {
  const ms = duration(value);
  if (ms < MIN_INTERVAL_MS) throw new InvalidArgumentError('must be 1s or more, e.g. 1h');
  return ms;
}

/** The lines `content gc` prints. */
export function reportLines(r: ContentGcReport): string[] {
  const what = `${r.removed} value(s), ${formatBytes(r.removedBytes)}`;
  const oldest = r.oldestRemoved ? `, oldest written ${localTime(r.oldestRemoved)}` : '';
  const lines = [
    r.dryRun ? `Dry run: would remove ${what}${oldest}` : `Removed ${what}${oldest}`,
    `  kept: everything written since ${localTime(r.cutoff)} (grace ${formatDuration(r.graceMs)}; ` +
      `namespace retention ${formatDuration(r.retentionMs)}) and everything an open or retained run claims`,
    `  runs judged: ${r.claimants} claiming older content, ${r.deadClaimants} gone or closed before the cutoff` +
      (r.unjudged ? `, ${r.unjudged} in namespaces this server does not know (kept)` : ''),
  ];
  if (r.graceNote) lines.push(`  note: ${r.graceNote}`);
  if (r.legacyKept)
    lines.push(
      `  kept ${r.legacyKept} value(s), ${formatBytes(r.legacyKeptBytes)}, stored before claims were recorded ` +
        '(--include-legacy removes them once no run from before the upgrade needs them)',
    );
  lines.push(
    `  store ${r.dryRun ? 'holds' : 'now holds'} ${r.storeValues} value(s), ${formatBytes(r.storeBytes)}`,
  );
  return lines;
}

/** Registers `content` and its subcommands. */
export function registerContentCommands(program: Command, target: () => TemporalTarget): void {
  const content = program
    .command('content')
    .description('The content store (large tool results, conversations): its size and garbage collection');

  function withStore<T>(fn: (client: Client, config: Config.WorkerConfig) => Promise<T>, command: string) {
    const { closeContentStores, loadWorkerConfig, withCommandClient } = load();
    const config = loadWorkerConfig();
    return withCommandClient(target(), command, (client) => fn(client, config)).finally(closeContentStores);
  }

  content
    .command('gc')
    .description(
      'Remove content no open run and no retained history references, now (the worker’s schedule does it every hour)',
    )
    .option('--dry-run', 'print what would be removed; remove nothing')
    .option(
      '--grace <duration>',
      'keep content this long after its last write and its runs’ close (never less than the namespace’s retention)',
      duration,
    )
    .option('--include-legacy', 'also remove unclaimed content stored before claims were recorded')
    .option('--list', 'print each value removed (or that would be): reference, size, last written')
    .option('--json', 'print the report as JSON')
    .action(
      async (o: {
        dryRun?: boolean;
        grace?: number;
        includeLegacy?: boolean;
        list?: boolean;
        json?: boolean;
      }) => {
        const { collectContentNow } = load();
        const report = await withStore(
          (client, config) =>
            collectContentNow(
              client,
              config.contentStore,
              {
                dryRun: o.dryRun === true,
                ...(o.grace !== undefined ? { graceMs: o.grace } : {}),
                ...(o.includeLegacy ? { includeLegacy: true } : {}),
              },
              o.list
                ? (e) =>
                    console.log(`${e.ref}  ${formatBytes(e.bytes)}  ${localTime(e.writtenAt.toISOString())}`)
                : undefined,
            ),
          o.dryRun ? 'content gc --dry-run' : 'content gc',
        );
        console.log(o.json ? JSON.stringify(report) : reportLines(report).join('\n'));
      },
    );

  content
    .command('stats')
    .description('What the content store holds: values, bytes, the oldest, claims')
    .option('--json', 'JSON output')
    .action(async (o: { json?: boolean }) => {
      const { closeContentStores, contentStoreStats, loadWorkerConfig } = load();
      const config = loadWorkerConfig();
      const s = await contentStoreStats(config.contentStore).finally(closeContentStores);
      if (o.json) {
        console.log(JSON.stringify(s));
        return;
      }
      console.log(
        [
          `${s.values} value(s), ${formatBytes(s.bytes)}${s.oldest ? `, oldest written ${localTime(s.oldest.toISOString())}` : ''}`,
          `  ${s.claims} claim(s) by ${s.claimants} run(s)`,
          ...(s.legacy
            ? [`  ${s.legacy} value(s), ${formatBytes(s.legacyBytes)}, stored before claims were recorded`]
            : []),
        ].join('\n'),
      );
    });

  content
    .command('schedule')
    .description(
      'Set up (or change) the task queue’s garbage collection schedule; workers do it when they start',
    )
    .option('--every <interval>', 'how often it fires (default DURABLE_AGENT_CONTENT_GC or 1h)', interval)
    .option(
      '--grace <duration>',
      'the grace each collection keeps (default DURABLE_AGENT_CONTENT_GC_GRACE)',
      duration,
    )
    .option(
      '--off',
      'delete the schedule (workers set it up again when they start unless DURABLE_AGENT_CONTENT_GC=off)',
    )
    .option('--task-queue <name>', 'task queue (default DURABLE_AGENT_TASK_QUEUE or durable-agent)')
    .action(async (o: { every?: number; grace?: number; off?: boolean; taskQueue?: string }) => {
      const { deleteContentGcSchedule, ensureContentGcSchedule } = load();
      await withStore(async (client, config) => {
        const taskQueue = o.taskQueue ?? config.taskQueue;
        const id = contentGcScheduleId(taskQueue);
        if (o.off) {
          const deleted = await deleteContentGcSchedule(client, taskQueue);
          console.log(deleted ? `Deleted schedule ${id}` : `No schedule ${id}`);
          return;
        }
        const everyMs = o.every ?? config.contentGc.everyMs ?? undefined;
        if (everyMs === undefined)
          throw new Error('DURABLE_AGENT_CONTENT_GC is off: say how often with --every 1h');
        const graceMs = o.grace ?? config.contentGc.graceMs;
        const outcome = await ensureContentGcSchedule(client, {
          taskQueue,
          everyMs,
          ...(graceMs !== undefined ? { graceMs } : {}),
        });
        console.log(
          `${outcome === 'unchanged' ? 'Unchanged' : outcome === 'created' ? 'Created' : 'Updated'}: schedule ${id} ` +
            `fires every ${formatDuration(everyMs)} on task queue "${taskQueue}"` +
            (graceMs !== undefined
              ? `, grace ${formatDuration(graceMs)}`
              : ", grace = the namespace's retention"),
        );
      }, 'content schedule');
    });
}
