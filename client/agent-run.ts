/** One agent run as the client SDK sees it (see agent-client.ts). */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, TerminatedFailure, TimeoutFailure } from '@temporalio/common';
import type {
  AgentEvent,
  AgentResult,
  AgentStateView,
  ApprovalDecision,
  TranscriptPage,
  TranscriptQueryArgs,
} from '../shared/agent';
import { eventsQuery, stateQuery, transcriptQuery, userMessageSignal } from '../shared/agent/messages';
import type { ModelChoice } from '../shared/model';
import type { NotificationPage, NotificationPageInput } from '../shared/notifications/reads';
import { SIZE_BUDGETS, overBudgetMessage, utf8Bytes } from '../shared/temporal-limits';
import type * as ContentConfig from '../activities/content/config';
import type * as ConfigModule from '../workers/config';
import type { WorkerConfig } from '../workers/config';
import { AgentClientError, guarded, mapped } from './agent-client-error';
import type { RunApproval } from './approval-client';
import { decideApproval, listApprovals } from './approval-client';
import type * as HistoryModule from './debug/history';
import type { ReplayOutcome } from './debug/replay';
import type * as Replay from './debug/replay';
import type { RunVerdict } from './eval/eval';
import type * as EvalModule from './eval/eval';
import type * as EvalProviders from './eval/providers';
import { readNotifications } from './notification-client';
import type { RunQuestion } from './questions';
import { answerQuestion, listQuestions, submitToolResult } from './questions';
import type { QuestionAnswered } from '../shared/agent/questions';
import { RunNotFoundError, isRunNotFound } from './temporal-errors';

/** What {@link AgentRun.events} takes. */
export interface EventOptions {
  /** Events after this sequence number only (0: from the start the run still keeps). */
  since?: number;
  /** How often to ask the run (milliseconds; default 250). */
  pollMs?: number;
  /** Stops following when aborted. */
  signal?: AbortSignal;
}

/** One agent run: its answer, its events as they come, and what a person can do to it. */
export class AgentRun {
  constructor(
    private readonly client: Client,
    /** The run's workflow id. */
    readonly id: string,
  ) {}

  private get handle(): WorkflowHandle {
    return this.client.workflow.getHandle(this.id);
  }

  /**
   * Waits for the run's end and returns its result: an answer, or the budget that stopped it
   * (`stopReason`). A run that failed or was cancelled throws `run_failed` / `run_cancelled`.
   * Follows the run across continue-as-new.
   */
  async result(): Promise<AgentResult> {
    try {
      return (await this.handle.result()) as AgentResult;
    } catch (err) {
      if (err instanceof WorkflowFailedError) {
        const cause = err.cause;
        if (cause instanceof CancelledFailure || cause instanceof TerminatedFailure)
          throw new AgentClientError(
            'run_cancelled',
            `Run "${this.id}" was ${cause instanceof TerminatedFailure ? 'terminated' : 'cancelled'}`,
          );
        const type =
          cause instanceof ApplicationFailure
            ? cause.type
            : cause instanceof TimeoutFailure
              ? 'Timeout'
              : undefined;
        throw new AgentClientError('run_failed', cause?.message ?? err.message, type ?? undefined);
      }
      throw mapped(err, this.id);
    }
  }

  /** The run's state now: status, step, usage, pending calls and approvals, budgets, answer. */
  state(): Promise<AgentStateView> {
    return guarded(() => this.handle.query(stateQuery), this.id);
  }

  /**
   * The run's events as they happen (model turns, tool calls and results, approvals, notifications
   * of budgets, the answer), until the run ends or `signal` aborts. Follows continue-as-new.
   */
  async *events(opts: EventOptions = {}): AsyncGenerator<AgentEvent> {
    let since = opts.since ?? 0;
    let ended = false;
    const end = this.handle.result().then(
      () => undefined,
      () => undefined,
    );
    void end.finally(() => {
      ended = true;
    });
    const pollMs = opts.pollMs ?? 250;
    const aborted = new Promise<void>((resolve) =>
      opts.signal?.addEventListener('abort', () => resolve(), { once: true }),
    );
    for (;;) {
      const last = ended;
      let batch: AgentEvent[] = [];
      try {
        batch = await this.handle.query(eventsQuery, { since });
      } catch (err) {
        // Between the runs of a continue-as-new chain, or before a worker took the first task.
        if (isRunNotFound(err))
          throw new AgentClientError('not_found', new RunNotFoundError(this.id).message);
      }
      for (const e of batch) {
        since = Math.max(since, e.seq);
        yield e;
      }
      if (last || opts.signal?.aborted) return;
      await Promise.race([end, aborted, new Promise((r) => setTimeout(r, pollMs))]);
    }
  }

  /** Sends a user message into the running agent (read before its next model turn). */
  async message(text: string): Promise<void> {
    if (!text.trim()) throw new AgentClientError('invalid_input', 'The message must not be empty');
    const bytes = utf8Bytes(text);
    if (bytes > SIZE_BUDGETS.userMessageBytes)
      throw new AgentClientError(
        'invalid_input',
        overBudgetMessage('The message', bytes, SIZE_BUDGETS.userMessageBytes),
      );
    await this.requireOpen('it takes no more messages');
    await guarded(() => this.handle.signal(userMessageSignal, { text }), this.id);
  }

  /** Approves a tool call waiting for approval, optionally with edited arguments. */
  approve(
    toolCallId: string,
    opts: { args?: unknown; reason?: string } = {},
  ): Promise<{ approved: boolean; editedArgs?: boolean }> {
    return this.decide({ toolCallId, approve: true, ...opts });
  }

  /** Rejects a tool call waiting for approval; the model is told, with the reason. */
  reject(toolCallId: string, reason?: string): Promise<{ approved: boolean }> {
    return this.decide({ toolCallId, approve: false, ...(reason ? { reason } : {}) });
  }

  private decide(decision: ApprovalDecision) {
    return guarded(() => decideApproval(this.client, this.id, decision), this.id);
  }

  /** The tool calls of this run waiting for approval. */
  approvals(): Promise<RunApproval[]> {
    return guarded(() => listApprovals(this.client, { workflowId: this.id }), this.id);
  }

  /** The questions (`ask_user`) and client-tool calls of this run (and its sub-agents) waiting for an answer. */
  questions(): Promise<RunQuestion[]> {
    return guarded(() => listQuestions(this.client, { workflowId: this.id }), this.id);
  }

  /**
   * Answers a question the run asked: checked by the run against the question's JSON Schema before
   * it enters history. A second answer (from any door) is refused with `already_answered`.
   */
  answer(toolCallId: string, answer: unknown): Promise<QuestionAnswered> {
    return guarded(() => answerQuestion(this.client, this.id, toolCallId, answer, { by: 'sdk' }), this.id);
  }

  /** Submits the result of a client-side tool call (your app ran the tool), checked against its result schema. */
  submitToolResult(toolCallId: string, result: unknown): Promise<QuestionAnswered> {
    return guarded(() => submitToolResult(this.client, this.id, toolCallId, result, { by: 'sdk' }), this.id);
  }

  /** Cancels the run gracefully: running tools are cancelled and cleaned up; its state stays readable. */
  async cancel(): Promise<void> {
    await this.requireOpen('there is nothing to cancel');
    await guarded(() => this.handle.cancel(), this.id);
  }

  /** A page of the run's transcript: model turns, tool calls and results, approvals, notifications. */
  transcript(page: TranscriptQueryArgs = {}): Promise<TranscriptPage> {
    return guarded(() => this.handle.query(transcriptQuery, page), this.id);
  }

  /** The notifications the run keeps (newest page; `before` pages back). */
  notifications(page?: NotificationPageInput): Promise<NotificationPage> {
    return guarded(() => readNotifications(this.client, this.id, page), this.id);
  }

  /**
   * Replays the run's history (its current execution) against the agent's workflow code as this
   * process has it: `ok`, or where it diverges. Bundles the workflow code (seconds, then cached).
   */
  async replay(): Promise<ReplayOutcome> {
    /* eslint-disable @typescript-eslint/no-require-imports -- the worker's bundler, only when replaying */
    const { replayBundle, replayHistory } = require('./debug/replay') as typeof Replay;
    const { fetchRunHistory } = require('./debug/history') as typeof HistoryModule;
    /* eslint-enable @typescript-eslint/no-require-imports */
    const history = await guarded(() => fetchRunHistory(this.client, this.id), this.id);
    return replayHistory(await replayBundle(), history, this.id);
  }

  /**
   * Asks another model to decide each recorded step of the run again (tools are not run) and says
   * where it would have chosen other tools, arguments or answers. Providers and the content store
   * come from `config` (the worker's configuration; the environment's when absent).
   */
  async eval(opts: { model?: ModelChoice; config?: WorkerConfig } = {}): Promise<RunVerdict> {
    /* eslint-disable @typescript-eslint/no-require-imports -- model providers, only when evaluating */
    const { evalProviders } = require('./eval/providers') as typeof EvalProviders;
    const { evalRun } = require('./eval/eval') as typeof EvalModule;
    const { fetchRunHistory } = require('./debug/history') as typeof HistoryModule;
    const { contentStoreFor } = require('../activities/content/config') as typeof ContentConfig;
    const { loadWorkerConfig } = require('../workers/config') as typeof ConfigModule;
    /* eslint-enable @typescript-eslint/no-require-imports */
    const config = opts.config ?? loadWorkerConfig();
    const history = await guarded(() => fetchRunHistory(this.client, this.id), this.id);
    return evalRun(history, this.id, {
      store: contentStoreFor(config.contentStore),
      provider: evalProviders(config),
      candidate: opts.model ? { model: opts.model } : {},
    });
  }

  private async requireOpen(consequence: string): Promise<void> {
    const status = (await guarded(() => this.handle.describe(), this.id)).status.name;
    if (status !== 'RUNNING')
      throw new AgentClientError(
        'finished',
        `Run "${this.id}" has already ended (${status}); ${consequence}`,
      );
  }
}
