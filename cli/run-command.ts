import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { Option } from 'commander';
import { RUN_ID_CHARSET, printable, runIdProblem } from '../shared/identifiers';
import { TOOL_NAMES } from '../shared/tools/names';
import type { TemporalTarget } from '../workers/connect';
import { positiveInt, positiveNumber, workflowIdOption } from './options';
import type { RunOpts } from './run-input';
import type * as Citations from '../shared/render-citations';
import type * as Config from '../workers/config';
import type * as Connect from '../workers/connect';
import type * as Tracing from '../workers/observability/start-tracing';
import type * as Answer from '../client/answer';
import type * as Pollers from '../client/pollers';
import type * as StartRun from '../client/start-run';
import type * as Watch from '../client/watch';
import type * as Progress from './progress';
import type * as Printer from './live-token-printer';
import type * as LiveTokens from '../client/live-tokens';
import type * as RunInput from './run-input';
import type * as AskPrompt from './ask-prompt';

/** What `run` runs, loaded when it runs: `--help` and a mistyped flag load none of it. */
function load() {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand */
  return {
    ...(require('../shared/render-citations') as typeof Citations),
    ...(require('../workers/config') as typeof Config),
    ...(require('../workers/connect') as typeof Connect),
    ...(require('../workers/observability/start-tracing') as typeof Tracing),
    ...(require('../client/answer') as typeof Answer),
    ...(require('../client/pollers') as typeof Pollers),
    ...(require('../client/start-run') as typeof StartRun),
    ...(require('../client/watch') as typeof Watch),
    ...(require('./progress') as typeof Progress),
    ...(require('./live-token-printer') as typeof Printer),
    ...(require('../client/live-tokens') as typeof LiveTokens),
    ...(require('./run-input') as typeof RunInput),
    ...(require('./ask-prompt') as typeof AskPrompt),
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** `durable-agent run`: starts an agent run, shows its progress live and prints the final answer. */
export function registerRunCommand(program: Command, target: () => TemporalTarget): void {
  program
    .command('run')
    .description('Start an agent run, show its progress live, and print the final answer')
    .argument('[task]', 'what the agent should do')
    .addOption(
      new Option(
        '--model <provider:name>',
        'scripted:<script> | local[:<file>] | openai:<model> | anthropic:<model>',
      ).default('scripted:demo'),
    )
    .option('--tools <names>', `comma-separated tools (known: ${TOOL_NAMES.join(', ')})`)
    .option('--max-steps <n>', 'model turns before the run stops', positiveInt)
    .option('--max-tokens <n>', 'token budget', positiveInt)
    .option(
      '--max-cost <usd>',
      'cost budget in US dollars (needs prices: policy.prices or the worker’s)',
      positiveNumber,
    )
    .option('--max-wall-clock <duration>', 'time budget from the start, e.g. "2h"')
    .option('--approve <tools>', 'tools whose calls wait for approval')
    .option('--system <prompt>', 'system prompt')
    .option('--notify-user <user>', 'also deliver notifications to inbox:<user>')
    .option('--input <file.json>', 'full workflow input as JSON (flags override it)')
    .option('--id <workflowId>', `workflow id (default agent-<uuid>); ${RUN_ID_CHARSET}`, workflowIdOption)
    .option(
      '--reuse',
      'allow an --id used before: a closed run is followed by a new one, a running one is followed',
    )
    .option('--task-queue <name>', 'task queue (default DURABLE_AGENT_TASK_QUEUE or durable-agent)')
    .option('--json', 'print one JSON object with the outcome instead of progress')
    .option('--no-wait', 'start the run and print its id without waiting')
    .option(
      '--no-stream',
      'do not type the model’s answers as they come (live tokens); print each when it is done',
    )
    .option('--cancel-on-exit', 'Ctrl-C cancels the run (default: the run goes on without this command)')
    .option(
      '--no-prompt',
      'do not prompt for the run’s questions in the terminal (answer them with `answer`)',
    )
    .action(async (task: string | undefined, o: RunOpts, cmd: Command) => {
      if (task === undefined && !o.input)
        throw new Error('Give a task: durable-agent run "<task>" (or --input file.json)');
      const idProblem = o.id === undefined ? null : runIdProblem(o.id);
      if (idProblem) throw new Error(`Invalid --id: ${idProblem}`);
      const {
        EXIT,
        buildInput,
        connectClient,
        formatAnswer,
        loadWorkerConfig,
        noWorkerMessage,
        resolveRunAnswer,
        startAgentRun,
        startTracing,
        usageLine,
        watchRun,
        workflowPollers,
        followLiveTokens,
        formatEventBesideTokens,
        liveChannelFromEnv,
        liveTokenPrinter,
        promptForQuestions,
      } = load();
      const config = loadWorkerConfig();
      const modelGiven = cmd.getOptionValueSource('model') !== 'default';
      const input = await buildInput(task, o, modelGiven, config.scriptsDir);
      // With tracing on, this command is one trace: its span, the run's start, then the worker's spans.
      const tracing = startTracing(config, 'run');
      const client = await connectClient(target(), tracing?.clientInterceptors);
      const t = target();
      const noWorker = (taskQueue: string) =>
        noWorkerMessage(taskQueue, t.connectionOptions.address, t.namespace);
      let watchingWorkers: { progressed(): void; stop(): void } | undefined;
      let prompting: { stop(): void } | undefined;
      try {
        const workflowId = o.id ?? `agent-${randomUUID()}`;
        const taskQueue = o.taskQueue ?? config.taskQueue;
        const handle = await startAgentRun(client, input, { taskQueue, workflowId, reuse: o.reuse ?? false });
        if (!o.wait) {
          console.log(
            o.json ? JSON.stringify({ workflowId, runId: handle.firstExecutionRunId }) : workflowId,
          );
          if ((await workflowPollers(client, taskQueue)) === 0)
            console.error(`note: ${noWorker(taskQueue)}; the run waits until one does`);
          return;
        }
        process.once('SIGINT', () => {
          if (o.cancelOnExit) {
            console.error(`\nCancelling ${workflowId}…`);
            // The watch goes on and ends with the cancellation (exit 130).
            handle.cancel().catch((err: unknown) => {
              console.error(`error: the cancellation failed: ${(err as Error).message}`);
              process.exit(EXIT.failed);
            });
            return;
          }
          console.error(
            `\nStopped watching; the run goes on; cancel it with: durable-agent cancel ${workflowId}` +
              `\n(follow it with: durable-agent status ${workflowId})`,
          );
          process.exit(EXIT.detached);
        });
        if (!o.json) console.log(`Started ${workflowId}`);
        watchingWorkers = watchForWorker(
          () => workflowPollers(client, taskQueue),
          taskQueue,
          (l) => console.error(l),
          noWorker(taskQueue),
        );
        const worker = watchingWorkers;
        // Live tokens: each answer typed as it comes, beside the run's event lines.
        const channel = o.json || o.stream === false ? null : liveChannelFromEnv();
        const printer = liveTokenPrinter((text) => process.stdout.write(printable(text, true)));
        const live = channel
          ? followLiveTokens(channel, workflowId, { onEvent: (e) => printer.onEvent(e) })
          : null;
        // In a terminal, the run's questions are asked right here (any other door may answer too).
        if (process.stdin.isTTY && !o.json && o.prompt !== false)
          prompting = promptForQuestions(client, workflowId, {
            input: process.stdin,
            output: process.stdout,
          });
        const outcome = await watchRun(
          client,
          handle,
          (l) => {
            worker.progressed();
            if (!o.json) printer.line(printable(l, true));
          },
          250,
          live ? formatEventBesideTokens(printer) : undefined,
        );
        live?.stop();
        prompting?.stop();
        printer.flush();
        watchingWorkers.stop();
        const answer = outcome.result?.answer;
        const resolved = answer ? await resolveRunAnswer(client, workflowId, answer) : undefined;
        if (o.json) {
          const { citations, unknown } = resolved?.rendered ?? { citations: [], unknown: [] };
          console.log(
            JSON.stringify({
              workflowId,
              ...outcome,
              citations,
              ...(unknown.length ? { unknownCitations: unknown } : {}),
            }),
          );
        } else if (outcome.result) {
          const r = outcome.result;
          if (resolved && !resolved.ok) console.error(`note: ${resolved.error}`);
          if (r.stopReason !== 'final_answer')
            console.log(`\nStopped by the ${r.stopReason} budget${r.budget ? `: ${r.budget}` : ''}.`);
          // With an output schema the answer is its JSON, shown parsed and indented.
          const shown =
            r.output !== undefined
              ? printable(JSON.stringify(r.output, null, 2), true)
              : resolved
                ? printable(formatAnswer(resolved.rendered), true)
                : `(no answer: stopped by ${r.stopReason})`;
          console.log(`\n${shown}\n\n${usageLine(r)}`);
        } else {
          const type = outcome.errorType ? ` (${outcome.errorType})` : '';
          console.error(`Run ${outcome.outcome}${type}: ${printable(outcome.error ?? '', true)}`);
        }
        process.exitCode = outcome.exitCode;
      } finally {
        prompting?.stop();
        watchingWorkers?.stop();
        await client.connection.close();
        await tracing?.shutdown();
      }
    });
}

/**
 * Tells the user (once) when no worker polls the run's task queue, and again when one starts: the
 * run waits for a worker instead of hanging silently.
 */
function watchForWorker(
  workflowPollers: () => Promise<number | undefined>,
  taskQueue: string,
  print: (line: string) => void,
  message: string,
): { progressed(): void; stop(): void } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let warned = false;
  let announced = false;
  const announce = () => {
    if (!warned || announced) return;
    announced = true;
    print(`A worker polls task queue "${taskQueue}" now; the run goes on.`);
  };
  const check = async () => {
    const pollers = await workflowPollers();
    if (stopped) return;
    if (pollers === 0 && !warned) {
      warned = true;
      print(`waiting: ${message}; the run starts when one does (Ctrl-C leaves it waiting)`);
    } else if (pollers !== undefined && pollers > 0 && warned) {
      announce();
      return;
    } else if (pollers === undefined || pollers > 0) return;
    timer = setTimeout(() => void check(), 2000);
    timer.unref();
  };
  void check();
  return {
    /** The run made progress: a worker took it, even if it came and went between two checks. */
    progressed() {
      if (!stopped) announce();
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
