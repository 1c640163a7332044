/**
 * `durable-agent schedule create|list|describe|pause|unpause|trigger|delete`: recurring agent runs
 * on Temporal Schedules (client/schedules.ts). Each firing is an ordinary run named
 * `<schedule-id>-<time>`, watched with `status`, listed by `/api/runs` and the runs page.
 */
import type { Command } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import type { Client } from '@temporalio/client';
import type { ScheduleDetails, ScheduleSummary } from '../shared/api-shapes';
import { printable, scheduleIdProblem } from '../shared/identifiers';
import { localTime } from '../shared/local-time';
import type { OverlapPolicyName } from '../shared/schedule-spec';
import {
  DEFAULT_CATCHUP_WINDOW,
  DEFAULT_OVERLAP,
  OVERLAP_POLICY_NAMES,
  checkScheduleSettings,
  overlapPolicyProblem,
} from '../shared/schedule-spec';
import type { TemporalTarget } from '../workers/connect';
import { positiveInt } from './options';
import type { RunOpts } from './run-input';
import type * as Config from '../workers/config';
import type * as Schedules from '../client/schedules';
import type * as TracedClient from '../client/traced-client';
import type * as RunInput from './run-input';

/** What the commands run, loaded when one runs: `--help` and a mistyped flag load none of it. */
function load() {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand */
  return {
    ...(require('../workers/config') as typeof Config),
    ...(require('../client/schedules') as typeof Schedules),
    ...(require('../client/traced-client') as typeof TracedClient),
    ...(require('./run-input') as typeof RunInput),
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** `--overlap`: one of the policy names, or the list of them. */
function overlapOption(value: string): OverlapPolicyName {
  const problem = overlapPolicyProblem(value);
  if (problem) throw new InvalidArgumentError(problem);
  return value as OverlapPolicyName;
}

/** The options of `schedule create`. */
interface CreateOpts extends Pick<
  RunOpts,
  'model' | 'tools' | 'maxSteps' | 'system' | 'notifyUser' | 'input' | 'taskQueue'
> {
  cron?: string;
  every?: string;
  timeZone?: string;
  overlap?: OverlapPolicyName;
  catchupWindow?: string;
  paused?: boolean;
  note?: string;
  json?: boolean;
}

const times = (isos: string[]) => isos.map(localTime).join(', ');

/** The lines `describe` (and `create`, `pause`, `unpause`) print. */
function describeLines(d: ScheduleDetails): string[] {
  const lines = [
    `${d.scheduleId}: ${d.paused ? 'paused' : 'active'}${d.note ? ` (${d.note})` : ''}`,
    `  fires: ${d.timing}; overlap ${d.overlap}; catch-up window ${d.catchupWindow}`,
    `  runs: ${d.scheduleId}-<time> on task queue "${d.taskQueue ?? '?'}", model ${d.model ?? '?'}`,
    `  task: ${d.task ?? '?'}`,
    `  started ${d.counts.started}, skipped (a run was still going) ${d.counts.skippedOverlap}, missed ${d.counts.missedCatchupWindow}`,
  ];
  if (d.nextRuns.length) lines.push(`  next: ${times(d.nextRuns.slice(0, 3))}`);
  for (const r of d.recentRuns.slice(-5)) lines.push(`  ran: ${r.workflowId} at ${localTime(r.startedAt)}`);
  for (const id of d.runningRuns) lines.push(`  running: ${id} (durable-agent status ${id})`);
  return lines.map((l) => printable(l));
}

function listLine(s: ScheduleSummary): string {
  const last = s.recentRuns.at(-1);
  return printable(
    `${s.scheduleId}  ${s.paused ? 'paused' : 'active'}  ${s.timing}` +
      `${s.nextRuns[0] ? `  next ${localTime(s.nextRuns[0])}` : ''}` +
      `${last ? `  last ${last.workflowId}` : ''}  ${s.task ?? ''}`,
  );
}

/** Registers `schedule` and its subcommands. */
export function registerScheduleCommands(program: Command, target: () => TemporalTarget): void {
  const schedule = program
    .command('schedule')
    .description('Recurring agent runs on Temporal Schedules: each firing is an ordinary run');

  /** Runs `fn` with a client; `command` names a change, which is one trace when tracing is on. */
  function withTemporal<T>(fn: (client: Client) => Promise<T>, command?: string): Promise<T> {
    const { withClient, withCommandClient } = load();
    return command ? withCommandClient(target(), command, fn) : withClient(target(), fn);
  }

  schedule
    .command('create')
    .description('Create a schedule whose every firing starts an agent run')
    .argument('<id>', 'schedule id; its runs are named <id>-<time>')
    .argument('[task]', 'what each run should do (or the task of --input)')
    .option('--cron <expr>', 'cron expression, e.g. "0 9 * * MON-FRI" (minute hour day month weekday)')
    .option('--every <interval>', 'interval instead of a cron expression, e.g. 30m, 2h, 1d')
    .option('--time-zone <zone>', 'IANA time zone of --cron (default UTC)')
    .addOption(
      new Option(
        '--overlap <policy>',
        `when the last run is still going: ${OVERLAP_POLICY_NAMES.join(' | ')}`,
      )
        .argParser(overlapOption)
        .default(DEFAULT_OVERLAP),
    )
    .option(
      '--catchup-window <duration>',
      'how late a firing missed while the server was down may still start',
      DEFAULT_CATCHUP_WINDOW,
    )
    .option('--input <file.json>', 'the whole run input as JSON, as run --input takes it (flags override it)')
    .addOption(
      new Option(
        '--model <provider:name>',
        'scripted:<script> | local[:<file>] | openai:<model> | anthropic:<model>',
      ).default('scripted:demo'),
    )
    .option('--tools <names>', 'comma-separated tools')
    .option('--max-steps <n>', 'model turns before a run stops', positiveInt)
    .option('--system <prompt>', 'system prompt')
    .option('--notify-user <user>', 'also deliver notifications to inbox:<user>')
    .option('--paused', 'create it paused (unpause starts it)')
    .option('--note <text>', 'a note shown with it (why it is paused, …)')
    .option('--task-queue <name>', 'task queue (default DURABLE_AGENT_TASK_QUEUE or durable-agent)')
    .option('--json', 'print the schedule as JSON')
    .action(async (id: string, task: string | undefined, o: CreateOpts, cmd: Command) => {
      const idProblem = scheduleIdProblem(id);
      if (idProblem) throw new Error(`Invalid schedule id: ${idProblem}`);
      if (o.cron === undefined && o.every === undefined)
        throw new Error('Say when it fires: --cron "0 9 * * *" or --every 1h');
      if (task === undefined && !o.input)
        throw new Error(
          `Give a task: durable-agent schedule create ${id} "<task>" --every 1h (or --input file.json)`,
        );
      const settings = {
        cron: o.cron,
        every: o.every,
        timezone: o.timeZone,
        overlap: o.overlap,
        catchupWindow: o.catchupWindow,
        note: o.note,
      };
      const checked = checkScheduleSettings(settings);
      if (!checked.ok) throw new Error(`Invalid schedule: ${checked.problems.join('; ')}`);
      const { buildInput, createAgentSchedule, loadWorkerConfig } = load();
      const config = loadWorkerConfig();
      const modelGiven = cmd.getOptionValueSource('model') !== 'default';
      const input = await buildInput(task, { ...o, wait: false }, modelGiven, config.scriptsDir);
      const created = await withTemporal(
        (client) =>
          createAgentSchedule(client, {
            scheduleId: id,
            input,
            taskQueue: o.taskQueue ?? config.taskQueue,
            settings,
            paused: o.paused ?? false,
          }),
        'schedule create',
      );
      if (o.json) console.log(JSON.stringify(created, null, 2));
      else console.log([`Created schedule ${id}`, ...describeLines(created)].join('\n'));
    });

  schedule
    .command('list')
    .description('List the agent schedules of the namespace')
    .option('--limit <n>', 'at most this many', positiveInt, 200)
    .option('--json', 'JSON output')
    .action(async (o: { limit: number; json?: boolean }) => {
      const { listAgentSchedules } = load();
      const schedules = await withTemporal((client) => listAgentSchedules(client, o.limit));
      if (o.json) console.log(JSON.stringify({ schedules }, null, 2));
      else if (schedules.length === 0) console.log('No agent schedules.');
      else for (const s of schedules) console.log(listLine(s));
    });

  schedule
    .command('describe')
    .description('Show a schedule: when it fires, its policies, its next and recent runs')
    .argument('<id>', 'schedule id')
    .option('--json', 'JSON output')
    .action(async (id: string, o: { json?: boolean }) => {
      const { describeAgentSchedule } = load();
      const d = await withTemporal((client) => describeAgentSchedule(client, id));
      console.log(o.json ? JSON.stringify(d, null, 2) : describeLines(d).join('\n'));
    });

  for (const [name, what] of [
    ['pause', 'Pause a schedule: it fires no more until unpaused (runs going on are not touched)'],
    ['unpause', 'Unpause a schedule: it fires again from its next time (missed firings are not made up)'],
  ] as const) {
    schedule
      .command(name)
      .description(what)
      .argument('<id>', 'schedule id')
      .option('--note <text>', 'why (shown by describe)')
      .action(async (id: string, o: { note?: string }) => {
        const { pauseAgentSchedule, unpauseAgentSchedule } = load();
        const change = name === 'pause' ? pauseAgentSchedule : unpauseAgentSchedule;
        const d = await withTemporal((client) => change(client, id, o.note), `schedule ${name}`);
        console.log(describeLines(d).join('\n'));
      });
  }

  schedule
    .command('trigger')
    .description(
      'Fire a schedule now (paused or not), under its overlap policy unless --overlap says otherwise',
    )
    .argument('<id>', 'schedule id')
    .addOption(new Option('--overlap <policy>', 'this firing only: e.g. allow-all').argParser(overlapOption))
    .option('--json', 'JSON output')
    .action(async (id: string, o: { overlap?: OverlapPolicyName; json?: boolean }) => {
      const { triggerAgentSchedule } = load();
      const r = await withTemporal(
        (client) => triggerAgentSchedule(client, id, o.overlap),
        'schedule trigger',
      );
      if (o.json) console.log(JSON.stringify(r));
      else if (r.outcome === 'started')
        console.log(`Started ${r.workflowId} (durable-agent status ${r.workflowId})`);
      else if (r.outcome === 'skipped')
        console.error(
          `Skipped: ${r.running.join(', ') || 'a run of it'} is still going and the overlap policy skips; ` +
            `--overlap allow-all starts one anyway`,
        );
      else
        console.error('Triggered; the server has not started the run yet (a buffering overlap policy waits)');
      if (r.outcome !== 'started') process.exitCode = 2;
    });

  schedule
    .command('delete')
    .description('Delete a schedule (the runs it started go on)')
    .argument('<id>', 'schedule id')
    .action(async (id: string) => {
      const { deleteAgentSchedule } = load();
      await withTemporal((client) => deleteAgentSchedule(client, id), 'schedule delete');
      console.log(`Deleted schedule ${id}`);
    });
}
