import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type * as Agent from '../../shared/agent';
import { runIdProblem } from '../../shared/identifiers';
import type * as Config from '../../workers/config';
import type { TemporalTarget } from '../../workers/connect';
import type * as Connect from '../../workers/connect';
import type * as Tracing from '../../workers/observability/start-tracing';
import type * as ModelSpec from '../../client/model-spec';
import type * as StartRun from '../../client/start-run';
import type * as TemporalErrors from '../../client/temporal-errors';
import type * as Watch from '../../client/watch';
import type * as Progress from '../progress';
import type * as Printer from '../live-token-printer';
import type * as Citations from '../../client/debug/citations';
import type * as Content from '../../client/debug/content';
import type * as StoreContent from '../../client/content';
import type * as Fork from '../../client/debug/fork';
import type { History } from '../../client/debug/history';
import type * as HistoryModule from '../../client/debug/history';
import type * as Timeline from '../../client/debug/timeline';
import type * as TemporalWorker from '@temporalio/worker';
import type * as Replay from '../../client/debug/replay';
import type * as ReplayAll from '../../client/debug/replay-all';
import type * as Eval from '../../client/eval/eval';
import type * as EvalSources from '../../client/eval/sources';
import type * as EvalProviders from '../../client/eval/providers';
import type * as Render from './render';
import type { TranscriptFormat } from './render';

/**
 * What the commands run but replay's worker code, loaded when one runs: `--help` and a mistyped
 * flag load none of it.
 */
function load() {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand */
  return {
    ...(require('../../shared/agent') as typeof Agent),
    ...(require('../../workers/config') as typeof Config),
    ...(require('../../workers/connect') as typeof Connect),
    ...(require('../../workers/observability/start-tracing') as typeof Tracing),
    ...(require('../../client/model-spec') as typeof ModelSpec),
    ...(require('../../client/start-run') as typeof StartRun),
    ...(require('../../client/temporal-errors') as typeof TemporalErrors),
    ...(require('../../client/watch') as typeof Watch),
    ...(require('../progress') as typeof Progress),
    ...(require('../live-token-printer') as typeof Printer),
    ...(require('../../client/debug/citations') as typeof Citations),
    ...(require('../../client/debug/content') as typeof Content),
    ...(require('../../client/content') as typeof StoreContent),
    ...(require('../../client/debug/fork') as typeof Fork),
    ...(require('../../client/debug/history') as typeof HistoryModule),
    ...(require('../../client/debug/timeline') as typeof Timeline),
    ...(require('./render') as typeof Render),
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** What `eval` runs besides the commands' shared modules: the model providers and the eval itself. */
function loadEval() {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand */
  return {
    ...(require('../../client/eval/eval') as typeof Eval),
    ...(require('../../client/eval/sources') as typeof EvalSources),
    ...(require('../../client/eval/providers') as typeof EvalProviders),
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** A percentage option: a number from 0 to 100. */
function percentOption(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 100)
    throw new InvalidArgumentError('must be a percentage from 0 to 100');
  return n;
}

/** Loads a history from `--file` or from the server by workflow id. */
async function loadHistory(
  target: () => TemporalTarget,
  id: string | undefined,
  o: { file?: string; runId?: string },
): Promise<{ history: History; workflowId: string }> {
  const { RunNotFoundError, connectClient, fetchRunHistory, readHistoryFile } = load();
  if (o.file) return { history: readHistoryFile(o.file), workflowId: id ?? 'replayed' };
  if (!id) throw new Error('Give a workflow id or --file <history.json>');
  const client = await connectClient(target());
  try {
    return { history: await fetchRunHistory(client, id, o.runId), workflowId: id };
  } catch (err) {
    if (err instanceof RunNotFoundError) throw err;
    throw new Error(`Cannot fetch the history of ${id}: ${(err as Error).message}`);
  } finally {
    await client.connection.close();
  }
}

/** Replays the child runs (sub-agents) a history started, and theirs, indented; true when all replay. */
async function replayChildren(
  target: () => TemporalTarget,
  history: History,
  replay: Pick<typeof Replay, 'formatOutcome' | 'replayHistory'>,
  bundle: Parameters<typeof Replay.replayHistory>[0],
  modules: { isolateModules: boolean },
  depth: number,
): Promise<boolean> {
  const { childRunsOf, connectClient, fetchRunHistory } = load();
  const { formatOutcome, replayHistory } = replay;
  const children = childRunsOf(history);
  if (!children.length) return true;
  let ok = true;
  const client = await connectClient(target());
  try {
    for (const child of children) {
      const h = await fetchRunHistory(client, child.workflowId, child.runId);
      const outcome = await replayHistory(bundle, h, child.workflowId, modules);
      console.log(`${'  '.repeat(depth)}↳ ${formatOutcome(outcome)}`);
      ok = outcome.ok && ok;
      ok = (await replayChildren(target, h, replay, bundle, modules, depth + 1)) && ok;
    }
  } finally {
    await client.connection.close();
  }
  return ok;
}

function progressBar(done: number, total: number): string {
  const width = 30;
  const filled = total ? Math.round((done / total) * width) : width;
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`;
}

/**
 * Registers the debugging commands: `replay`, `export`, `transcript` and `fork`.
 */
export function registerDebugCommands(program: Command, target: () => TemporalTarget): void {
  // Replays run a worker in this process; keep its routine logs out of the report. The worker
  // package and the bundler are loaded by `replay` only.
  const loadReplay = () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
    const { DefaultLogger, Runtime } = require('@temporalio/worker') as typeof TemporalWorker;
    if (!Runtime._instance) {
      Runtime.install({
        logger: new DefaultLogger('ERROR'),
        telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } },
      });
    }
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
    return require('../../client/debug/replay') as typeof Replay;
  };
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand, after loadReplay
  const loadReplayAll = () => require('../../client/debug/replay-all') as typeof ReplayAll;
  program
    .command('replay')
    .description(
      'Replay runs against the current workflow code; exits 1 and names the step where they diverge',
    )
    .argument('[id]', 'workflow id (the latest run unless --run-id)')
    .option(
      '--file <history.json>',
      'a history file (from `export` or `temporal workflow show --output json`)',
    )
    .option('--run-id <runId>', 'a specific run')
    .option('--all', 'replay every run matching --query')
    .option(
      '--query <visibility query>',
      "with --all, e.g. \"WorkflowType='agentWorkflow' AND StartTime > '2026-11-23T00:00:00Z'\"",
    )
    .option('--workflows-path <path>', 'workflow code to replay against (default: this project’s workflows/)')
    .option(
      '--isolate-modules',
      'evaluate the workflow code’s modules afresh for every run, as a worker does (slower; by default a replay evaluates them once)',
    )
    .action(
      async (
        id: string | undefined,
        o: {
          file?: string;
          runId?: string;
          all?: boolean;
          query?: string;
          workflowsPath?: string;
          isolateModules?: boolean;
        },
      ) => {
        const modules = { isolateModules: o.isolateModules === true };
        // Loaded once: loading it again after a replay would install a second runtime, which keeps
        // the process from exiting.
        const replay = loadReplay();
        const { formatOutcome, replayBundle, replayHistory } = replay;
        const bundle = await replayBundle(o.workflowsPath);
        if (!o.all) {
          const { history, workflowId } = await loadHistory(target, id, o);
          const outcome = await replayHistory(bundle, history, workflowId, modules);
          console.log(formatOutcome(outcome));
          let ok = outcome.ok;
          // A run's sub-agents replay with it, as a tree (from the server; a file has no children).
          if (!o.file) ok = (await replayChildren(target, history, replay, bundle, modules, 1)) && ok;
          process.exitCode = ok ? 0 : 1;
          return;
        }
        const { AGENT_WORKFLOW_TYPE, connectClient } = load();
        const client = await connectClient(target());
        try {
          const { formatThroughput, replayAll } = loadReplayAll();
          const query = o.query ?? `WorkflowType='${AGENT_WORKFLOW_TYPE}'`;
          const failed: string[] = [];
          const totals = await replayAll(
            client,
            query,
            bundle,
            (outcome, t) => {
              if (!outcome.ok) failed.push(formatOutcome(outcome));
              if (process.stderr.isTTY) process.stderr.write(`\r${progressBar(t.replayed, t.runs)}`);
              else if (t.replayed % 10 === 0 || t.replayed === t.runs)
                console.error(progressBar(t.replayed, t.runs));
            },
            modules,
          );
          if (process.stderr.isTTY && totals.runs) process.stderr.write('\n');
          for (const f of failed) console.log(f);
          console.log(`${totals.runs} runs replayed: ${totals.ok} OK, ${failed.length} diverged or failed`);
          console.log(`Throughput: ${formatThroughput(totals)}`);
          process.exitCode = failed.length ? 1 : 0;
        } finally {
          await client.connection.close();
        }
      },
    );

  program
    .command('export')
    .description('Write a run’s history as JSON (the format of `temporal workflow show --output json`)')
    .argument('<id>', 'workflow id')
    .option('--run-id <runId>', 'a specific run')
    .option('-o, --output <file>', 'write to a file instead of stdout')
    .option(
      '--with-content',
      'also write the content the run keeps by reference (tool results, conversation) to <file>.content.json',
    )
    .action(async (id: string, o: { runId?: string; output?: string; withContent?: boolean }) => {
      if (o.withContent && !o.output)
        throw new Error('--with-content needs -o <file> (the bundle goes next to it)');
      const {
        bundleFileOf,
        closeContentStores,
        collectContent,
        contentStoreFor,
        historyJson,
        loadWorkerConfig,
      } = load();
      const { history } = await loadHistory(target, id, o);
      const json = historyJson(history);
      if (o.output) {
        fs.writeFileSync(o.output, `${json}\n`);
        console.error(`Wrote ${history.events?.length ?? 0} events to ${o.output}`);
      } else {
        process.stdout.write(`${json}\n`);
      }
      if (o.withContent && o.output) {
        const store = contentStoreFor(loadWorkerConfig().contentStore);
        try {
          const { values, missing } = await collectContent(history, store);
          const bundle = bundleFileOf(o.output);
          fs.writeFileSync(bundle, `${JSON.stringify(values)}\n`);
          console.error(
            `Wrote ${Object.keys(values).length} stored values to ${bundle}` +
              (missing.length ? `; ${missing.length} not in ${store.where}` : ''),
          );
        } finally {
          await closeContentStores();
        }
      }
    });

  program
    .command('transcript')
    .description(
      'A readable timeline of a run from its history: model turns, tool calls, notifications, approvals',
    )
    .argument('[id]', 'workflow id')
    .option('--file <history.json>', 'a history file')
    .option('--run-id <runId>', 'a specific run')
    .option('--format <format>', 'text | markdown | json', 'text')
    .option('--width <chars>', 'longest text shown per field', '300')
    .action(
      async (id: string | undefined, o: { file?: string; runId?: string; format: string; width: string }) => {
        if (!['text', 'markdown', 'json'].includes(o.format))
          throw new Error('--format must be text, markdown or json');
        const width = Number(o.width);
        if (!Number.isInteger(width) || width < 20) throw new Error('--width must be a whole number ≥ 20');
        const {
          buildTimeline,
          citationsFromHistory,
          closeContentStores,
          contentStoreFor,
          loadWorkerConfig,
          readBundle,
          renderTimeline,
          resolveTimeline,
        } = load();
        const { history } = await loadHistory(target, id, o);
        // Content kept by reference is read from the bundle next to --file, else the configured store.
        const store =
          (o.file ? readBundle(o.file) : undefined) ?? contentStoreFor(loadWorkerConfig().contentStore);
        try {
          const format = o.format as TranscriptFormat;
          const citations = format === 'json' ? undefined : citationsFromHistory(history);
          const timeline = await resolveTimeline(buildTimeline(history), store);
          console.log(renderTimeline(timeline, format, width, citations));
          // A run's sub-agents follow it, each under a head and indented, as a tree (from the server).
          if (!o.file && format !== 'json') {
            const { childRunsOf, connectClient, fetchRunHistory } = load();
            const client = await connectClient(target());
            try {
              const printChildren = async (parent: History, depth: number): Promise<void> => {
                const pad = '  '.repeat(depth);
                for (const child of childRunsOf(parent)) {
                  const h = await fetchRunHistory(client, child.workflowId, child.runId);
                  const text = renderTimeline(
                    await resolveTimeline(buildTimeline(h), store),
                    format,
                    width,
                    citationsFromHistory(h),
                  );
                  console.log(`\n${pad}── sub-agent run ${child.workflowId} ──`);
                  console.log(text.replace(/^/gm, pad));
                  await printChildren(h, depth + 1);
                }
              };
              await printChildren(history, 1);
            } finally {
              await client.connection.close();
            }
          }
        } finally {
          await closeContentStores();
        }
      },
    );

  program
    .command('fork')
    .description(
      'Start a new run from a run’s conversation after step N (no tool runs again), with another prompt or model',
    )
    .argument('<id>', 'workflow id of the original run')
    .requiredOption('--from-step <n>', 'keep steps 1..n; the new run goes on from step n+1', (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number ≥ 1');
      return n;
    })
    .option('--run-id <runId>', 'a specific run of the original')
    .option('--prompt-file <file>', 'replace the system prompt with this file’s text')
    .option('--model <provider:name>', 'use another model')
    .option('--id <workflowId>', 'id of the new run (default fork-<uuid>)')
    .option('--no-wait', 'print the new run’s id without waiting')
    .action(
      async (
        id: string,
        o: {
          fromStep: number;
          runId?: string;
          promptFile?: string;
          model?: string;
          id?: string;
          wait: boolean;
        },
      ) => {
        const system = o.promptFile ? fs.readFileSync(o.promptFile, 'utf8') : undefined;
        const {
          claimContentFor,
          closeContentStores,
          connectClient,
          loadWorkerConfig,
          parseModelSpec,
          planFork,
          startAgentRun,
          startTracing,
          watchRun,
        } = load();
        const model = o.model ? parseModelSpec(o.model) : undefined;
        const { history } = await loadHistory(target, id, o);
        const plan = planFork(history, o.fromStep, {
          ...(system !== undefined ? { system } : {}),
          ...(model ? { model } : {}),
        });
        const config = loadWorkerConfig();
        const tracing = startTracing(config, 'fork');
        const client = await connectClient(target(), tracing?.clientInterceptors);
        try {
          const workflowId = o.id ?? `fork-${randomUUID()}`;
          const idProblem = runIdProblem(workflowId);
          if (idProblem) throw new Error(`Invalid --id: ${idProblem}`);
          // The fork goes on from the original's stored conversation: it claims it, so the content
          // stays while the fork lives even after the original's history is gone.
          const missing = await claimContentFor(client, config.contentStore, plan.carried, workflowId);
          await closeContentStores();
          if (missing.length > 0)
            throw new Error(
              `The content store no longer holds ${missing.length} value(s) the run's conversation references ` +
                `(first ${missing[0]}): it cannot be forked. Point DURABLE_AGENT_CONTENT_STORE at the store the run was written to.`,
            );
          // Started as every run is (search attributes, memo), so lists show it like any other.
          const handle = await startAgentRun(client, plan.input, {
            taskQueue: config.taskQueue,
            workflowId,
            carried: plan.carried,
            memo: { forkedFrom: { ...plan.origin, workflowId: id } },
          });
          console.log(`Started ${workflowId}, forked from ${id} after step ${o.fromStep}`);
          if (!o.wait) return;
          const outcome = await watchRun(client, handle, (l) => console.log(l));
          console.log(`\n${outcome.result?.answer ?? `Run ${outcome.outcome}: ${outcome.error ?? ''}`}`);
          process.exitCode = outcome.exitCode;
        } finally {
          await client.connection.close();
          await tracing?.shutdown();
        }
      },
    );

  program
    .command('eval')
    .description(
      'Ask another model or prompt to decide each step of recorded runs (no tool runs) and compare with what was recorded',
    )
    .argument('<runs...>', 'workflow ids, history files (from `export`), or folders of them')
    .option('--model <provider:name>', 'the model to try (default: the model each run recorded)')
    .option('--prompt-file <file>', 'the system prompt to try instead of the recorded one')
    .option(
      '--local-cards <file>',
      'the local model’s tool cards to try (JSON, by tool name) over the project’s: its prompt',
    )
    .option('--expect <file>', 'expected answers: [{ "task": "part of a task", "answer": ["regex", …] }]')
    .option('--min-same-tool <percent>', 'fail when fewer steps choose the same tools', percentOption)
    .option('--min-same-args <percent>', 'fail when fewer calls have the same arguments', percentOption)
    .option('--min-answers <percent>', 'fail when fewer answers match --expect', percentOption)
    .option('--json', 'print the verdicts and the summary as JSON')
    .action(
      async (
        runs: string[],
        o: {
          model?: string;
          promptFile?: string;
          localCards?: string;
          expect?: string;
          minSameTool?: number;
          minSameArgs?: number;
          minAnswers?: number;
          json?: boolean;
        },
      ) => {
        const system = o.promptFile ? fs.readFileSync(o.promptFile, 'utf8') : undefined;
        const { closeContentStores, connectClient, contentStoreFor, loadWorkerConfig, parseModelSpec } =
          load();
        const {
          closeEvalModels,
          evalProviders,
          evalRun,
          parseExpectations,
          parseLocalCards,
          renderEval,
          resolveEvalSources,
          summarize,
          thresholdMisses,
          turnText,
        } = loadEval();
        const model = o.model ? parseModelSpec(o.model) : undefined;
        const expectations = o.expect ? parseExpectations(fs.readFileSync(o.expect, 'utf8'), o.expect) : [];
        const config = loadWorkerConfig();
        const localCards = o.localCards
          ? parseLocalCards(fs.readFileSync(o.localCards, 'utf8'), o.localCards)
          : undefined;
        const provider = evalProviders(config, localCards ? { localCards } : {});
        const sources = await resolveEvalSources(runs, () => connectClient(target()));
        const verdicts = [];
        // A run that cannot be evaluated is named and skipped; the others still are, and the exit code says it.
        const unreadable: { source: string; error: string }[] = [];
        try {
          for (const source of sources) {
            const store = source.bundle ?? contentStoreFor(config.contentStore);
            const verdict = await evalRun(source.history, source.label, {
              store,
              provider,
              candidate: { ...(model ? { model } : {}), ...(system !== undefined ? { system } : {}) },
              expectations,
              onStep: (s) => {
                if (!o.json) {
                  console.error(
                    `  ${source.label} step ${s.step}: ${s.error ? `error: ${s.error}` : turnText(s.candidate, 60)}`,
                  );
                }
              },
            }).catch((err: unknown) => {
              const error = err instanceof Error ? err.message : String(err);
              unreadable.push({ source: source.label, error });
              if (!o.json) console.error(`${source.label}: not evaluated: ${error}`);
              return undefined;
            });
            if (verdict) verdicts.push(verdict);
          }
        } finally {
          await closeContentStores();
          await closeEvalModels();
        }
        const summary = summarize(verdicts);
        const misses = thresholdMisses(summary, {
          ...(o.minSameTool !== undefined ? { sameTool: o.minSameTool } : {}),
          ...(o.minSameArgs !== undefined ? { sameArgs: o.minSameArgs } : {}),
          ...(o.minAnswers !== undefined ? { answers: o.minAnswers } : {}),
        });
        if (unreadable.length) {
          misses.push(`${unreadable.length} of ${sources.length} runs could not be evaluated`);
        }
        if (o.json) {
          console.log(JSON.stringify({ runs: verdicts, summary, misses, unreadable }, null, 2));
        } else {
          console.log(renderEval(verdicts));
          for (const miss of misses) console.log(`FAILED: ${miss}`);
        }
        process.exitCode = misses.length ? 1 : 0;
      },
    );
}
