import type { Command } from 'commander';
import type { Client, WorkflowExecutionDescription, WorkflowHandle } from '@temporalio/client';
import type { AgentStateView } from '../shared/agent';
import { SIZE_BUDGETS, overBudgetMessage, utf8Bytes } from '../shared/temporal-limits';
import type { RunLimitName } from '../shared/run-limits';
import { formatAnswer } from '../shared/render-citations';
import { localTime } from '../shared/local-time';
import { printable } from '../shared/identifiers';
import { counted } from '../shared/words';
import { formatRunBuild } from '../shared/worker-versioning';
import type { TemporalTarget } from '../workers/connect';
import type * as TemporalClient from '@temporalio/client';
import type * as AgentMessages from '../shared/agent/messages';
import type * as RunLimits from '../shared/run-limits';
import type * as Answer from '../client/answer';
import type * as Pollers from '../client/pollers';
import type * as Retries from '../client/retries';
import type * as TemporalErrors from '../client/temporal-errors';
import type * as TracedClient from '../client/traced-client';
import type * as Watch from '../client/watch';
import type * as Progress from './progress';
import type * as Printer from './live-token-printer';
import type * as LiveTokens from '../client/live-tokens';
import type * as RunBuild from '../client/run-build';

/** What the commands run, loaded when one runs: `--help` and a mistyped flag load none of it. */
function load() {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand */
  return {
    ...(require('@temporalio/client') as Pick<typeof TemporalClient, 'WorkflowFailedError'>),
    ...(require('../shared/agent/messages') as typeof AgentMessages),
    ...(require('../shared/run-limits') as typeof RunLimits),
    ...(require('../client/answer') as typeof Answer),
    ...(require('../client/pollers') as typeof Pollers),
    ...(require('../client/retries') as typeof Retries),
    ...(require('../client/temporal-errors') as typeof TemporalErrors),
    ...(require('../client/traced-client') as typeof TracedClient),
    ...(require('../client/watch') as typeof Watch),
    ...(require('./progress') as typeof Progress),
    ...(require('./live-token-printer') as typeof Printer),
    ...(require('../client/live-tokens') as typeof LiveTokens),
    ...(require('../client/run-build') as typeof RunBuild),
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** `status`, `cancel` and `message`: read a run's state, cancel it, send it a user message. */
export function registerRunControlCommands(program: Command, target: () => TemporalTarget): void {
  /**
   * Runs `fn` with a handle on run `id`. A `command` that changes the run (cancel, message) is one
   * trace when tracing is on; reading commands open none.
   */
  async function withHandle<T>(
    id: string,
    fn: (h: WorkflowHandle, client: Client) => Promise<T>,
    command?: string,
  ) {
    const { RunNotFoundError, isRunNotFound, withClient, withCommandClient } = load();
    const act = async (client: Client) => {
      try {
        return await fn(client.workflow.getHandle(id), client);
      } catch (err) {
        if (isRunNotFound(err)) throw new RunNotFoundError(id);
        throw err;
      }
    };
    return command ? withCommandClient(target(), command, act) : withClient(target(), act);
  }

  program
    .command('watch')
    .description(
      'Follow a run until it ends: its events, and each model answer typed as it comes (live tokens)',
    )
    .argument('<id>', 'workflow id')
    .option('--no-stream', 'print each model answer when it is done instead of as it comes')
    .action(async (id: string, o: { stream?: boolean }) => {
      const { followLiveTokens, formatEventBesideTokens, liveChannelFromEnv, liveTokenPrinter, watchRun } =
        load();
      await withHandle(id, async (h, client) => {
        // A run that does not exist is named now, not after a silent wait.
        const desc = await h.describe();
        console.log(`Watching ${id} (${desc.status.name}); Ctrl-C stops watching, the run goes on`);
        const channel = o.stream === false ? null : liveChannelFromEnv();
        const printer = liveTokenPrinter((text) => process.stdout.write(printable(text, true)));
        // A late joiner first gets the answer being typed so far, then the rest as it comes.
        const live = channel ? followLiveTokens(channel, id, { onEvent: (e) => printer.onEvent(e) }) : null;
        const outcome = await watchRun(
          client,
          h,
          (l) => {
            printer.line(printable(l, true));
          },
          250,
          live ? formatEventBesideTokens(printer) : undefined,
        );
        live?.stop();
        printer.flush();
        if (outcome.result) {
          const r = outcome.result;
          console.log(
            `\n${r.output !== undefined ? JSON.stringify(r.output, null, 2) : (r.answer ?? `(no answer: stopped by ${r.stopReason})`)}`,
          );
        } else {
          console.error(`Run ${outcome.outcome}: ${printable(outcome.error ?? '', true)}`);
        }
        process.exitCode = outcome.exitCode;
      });
    });

  program
    .command('status')
    .description('Show a run’s state: status, step, usage, pending tool calls, last error')
    .argument('<id>', 'workflow id')
    .option('--json', 'JSON output')
    .action(async (id: string, o: { json?: boolean }) => {
      const { describeRunLimit, formatRetry, resolveRunAnswer, retryingActivities, runBuild } = load();
      await withHandle(id, async (h, client) => {
        const desc = await h.describe();
        const state = await queryStateOrExplain(h, client, desc, o.json === true);
        if (!state) return;
        const resolved = state.answer === null ? undefined : await resolveRunAnswer(client, id, state.answer);
        const build = runBuild(desc);
        if (o.json) {
          const citations = resolved?.rendered.citations ?? [];
          const retrying = retryingActivities(desc);
          console.log(
            JSON.stringify(
              { workflowStatus: desc.status.name, ...state, build, retrying, citations },
              null,
              2,
            ),
          );
          return;
        }
        console.log(
          `${id}: ${state.status} (workflow ${desc.status.name}), step ${state.step}/${state.maxSteps}`,
        );
        console.log(
          `usage: ${counted(state.usage.modelCalls, 'model call')}, ${counted(state.usage.toolCalls, 'tool call')}, ` +
            `${state.usage.inputTokens}+${state.usage.outputTokens} tokens; continued as new ${state.continuations}×`,
        );
        if (state.costUsd) console.log(`cost: $${state.costUsd.toFixed(4)} (sub-agents included)`);
        if (build) console.log(`on ${formatRunBuild(build)}`);
        if (state.parent)
          console.log(
            `sub-agent ${state.parent.agent} of run ${state.parent.workflowId} (call ${state.parent.toolCallId})`,
          );
        for (const c of state.agents ?? [])
          console.log(
            `sub-agent ${c.agent} ${c.toolCallId}: ${c.status}, ${counted(c.steps, 'step')}, ` +
              `${c.usage.inputTokens}+${c.usage.outputTokens} tokens${c.costUsd ? `, $${c.costUsd.toFixed(4)}` : ''}` +
              ` (run ${c.workflowId})${c.error ? `: ${c.error}` : ''}`,
          );
        for (const p of state.pendingToolCalls)
          console.log(`pending: ${p.name} ${p.toolCallId} (${p.state})`);
        for (const a of state.approvals ?? [])
          console.log(
            `waits for approval: ${a.toolCallId} ${a.tool} until ${localTime(a.deadline)} (${a.reason}): ${a.summary}`,
          );
        for (const q of state.questions ?? [])
          console.log(
            `waits for an answer: ${q.toolCallId} ${q.kind === 'question' ? printable(q.question, true) : `${q.tool} (client tool)`} until ${localTime(q.deadline)}; answer with durable-agent answer ${id} ${q.toolCallId}`,
          );
        for (const [name, b] of Object.entries(state.budgets ?? {}))
          console.log(`budget: ${describeRunLimit(name as RunLimitName, b)}`);
        for (const r of retryingActivities(desc)) console.log(formatRetry(r));
        if (state.untrusted) console.log(`untrusted content: ${state.untrusted}`);
        if (state.lastError) console.log(`last error: ${state.lastError}`);
        if (resolved && !resolved.ok) console.error(`note: ${resolved.error}`);
        if (resolved) console.log(`answer: ${formatAnswer(resolved.rendered)}`);
      });
    });

  /**
   * The run's state, or null after printing why there is none: no worker polls its task queue (or
   * none answered), or the run closed before it could answer (e.g. its input failed validation).
   */
  async function queryStateOrExplain(
    h: WorkflowHandle,
    client: Client,
    desc: WorkflowExecutionDescription,
    json: boolean,
  ): Promise<AgentStateView | null> {
    const { classifyTemporalError, noWorkerMessage, stateQuery, workflowPollers } = load();
    const t = target();
    const running = desc.status.name === 'RUNNING';
    const pollers = running ? await workflowPollers(client, desc.taskQueue) : undefined;
    const noWorker = `${noWorkerMessage(desc.taskQueue, t.connectionOptions.address, t.namespace)}; the run waits until one does`;
    let problem: string;
    if (pollers === 0) {
      problem = noWorker;
    } else {
      try {
        return await h.query(stateQuery);
      } catch (err) {
        // A worker seen lately may have gone since: the query then fails as any unanswered one does.
        const failure = running ? classifyTemporalError(err) : undefined;
        if (failure?.kind === 'task_failing') {
          problem = `its current workflow task keeps failing or was lost (${failure.details}); see its worker's log`;
        } else if (failure?.kind === 'timed_out' || failure?.kind === 'no_poller') {
          problem = noWorker;
        } else if (running) {
          throw err;
        } else {
          problem = `it ended before it could answer (${await closedReason(h, desc)})`;
        }
      }
    }
    if (json) console.log(JSON.stringify({ workflowStatus: desc.status.name, problem }, null, 2));
    else console.log(`${h.workflowId}: workflow ${desc.status.name}; ${problem}`);
    process.exitCode = 1;
    return null;
  }

  /** Why a closed run ended, from its result. */
  async function closedReason(h: WorkflowHandle, desc: WorkflowExecutionDescription): Promise<string> {
    const { WorkflowFailedError } = load();
    try {
      await h.result();
      return desc.status.name.toLowerCase();
    } catch (err) {
      const cause = err instanceof WorkflowFailedError ? err.cause : undefined;
      return `${desc.status.name.toLowerCase()}: ${cause?.message ?? (err as Error).message}`;
    }
  }

  /** Refuses (with what happened) to act on a run that has already ended. */
  async function requireOpen(h: WorkflowHandle, consequence: string): Promise<void> {
    const desc = await h.describe();
    if (desc.status.name !== 'RUNNING') {
      throw new Error(
        `Run "${h.workflowId}" has already ended (${desc.status.name}); ${consequence}. ` +
          `See its outcome with: durable-agent status ${h.workflowId}`,
      );
    }
  }

  program
    .command('cancel')
    .description('Cancel a run gracefully (running tools are cancelled; state stays queryable)')
    .argument('<id>', 'workflow id')
    .action(async (id: string) => {
      await withHandle(
        id,
        async (h) => {
          await requireOpen(h, 'there is nothing to cancel');
          await h.cancel();
          console.log(`Cancellation requested for ${id}`);
        },
        'cancel',
      );
    });

  program
    .command('message')
    .description('Send a user message into a running agent')
    .argument('<id>', 'workflow id')
    .argument('<text>', 'the message')
    .action(async (id: string, text: string) => {
      if (!text.trim()) throw new Error('The message must not be empty');
      const bytes = utf8Bytes(text);
      if (bytes > SIZE_BUDGETS.userMessageBytes)
        throw new Error(overBudgetMessage('The message', bytes, SIZE_BUDGETS.userMessageBytes));
      await withHandle(
        id,
        async (h) => {
          await requireOpen(h, 'it takes no more messages');
          const { userMessageSignal } = load();
          await h.signal(userMessageSignal, { text });
          console.log(`Message sent to ${id}`);
        },
        'message',
      );
    });
}
