/**
 * The client SDK: what any program needs to start, watch, talk to, approve, cancel and read agent
 * runs and inboxes. It returns data and throws {@link AgentClientError}s with a closed set of codes;
 * printing, colours and exit codes belong to the CLI.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { AgentInput } from '../shared/agent';
import { checkAgentInput } from '../shared/agent/check-input';
import { runIdProblem } from '../shared/identifiers';
import type { ClearResult, MarkReadResult, NotifyResult } from '../shared/notifications/messages';
import type { NotificationPage, NotificationPageInput } from '../shared/notifications/reads';
import type { MarkReadInput, NotificationInput } from '../shared/notifications/schema';
import { MarkReadInputSchema } from '../shared/notifications/schema';
import { DEFAULT_TASK_QUEUE } from '../shared/task-queues';
import { formatZodIssues } from '../shared/zod-issues';
import { connectClient, temporalTarget } from '../workers/connect';
import { AgentClientError, guarded } from './agent-client-error';
import { AgentRun } from './agent-run';
import type { RunApproval } from './approval-client';
import { listApprovals } from './approval-client';
import {
  prepareNotification,
  readNotifications,
  requireTarget,
  sendClearNotifications,
  sendMarkRead,
  sendNotification,
} from './notification-client';
import { startAgentRun } from './start-run';
import type { RunQuestion } from './questions';
import { listQuestions } from './questions';

export { AgentClientError } from './agent-client-error';
export type { AgentClientErrorCode } from './agent-client-error';
export { AgentRun } from './agent-run';
export type { EventOptions } from './agent-run';

/** What {@link AgentClient.start} takes besides the input. */
export interface StartOptions {
  /** The run's workflow id; `agent-<uuid>` when absent. */
  id?: string;
  /** With an id that is taken: follow a running run, or start anew after a closed one (instead of failing). */
  reuse?: boolean;
  /** Memo on the run (the runs list shows `task`, which is set for you). */
  memo?: Record<string, unknown>;
}

/** What {@link AgentClient} is made from. */
export interface AgentClientOptions {
  /** A Temporal client (made with the plugin when payloads are encrypted). */
  client: Client;
  /** The task queue of workers with the plugin; `durable-agent` by default. */
  taskQueue?: string;
}

/**
 * Runs agents and reads inboxes over a Temporal client:
 *
 * ```ts
 * const agents = new AgentClient({ client });
 * const run = await agents.start({ task: 'Where is order A-17?', model, tools: ['lookup_order'] });
 * for await (const e of run.events()) console.log(e.kind, e.tool ?? '', e.text ?? '');
 * const { answer } = await run.result();
 * ```
 */
export class AgentClient {
  /** The Temporal client underneath, for anything else. */
  readonly temporal: Client;
  readonly taskQueue: string;

  constructor(opts: AgentClientOptions) {
    this.temporal = opts.client;
    this.taskQueue = opts.taskQueue ?? DEFAULT_TASK_QUEUE;
  }

  /**
   * Starts a run after checking its input exactly as the workflow will (so a mistake is reported
   * here, naming the field, before anything starts).
   */
  async start(input: AgentInput, opts: StartOptions = {}): Promise<AgentRun> {
    const checked = checkAgentInput(input);
    if (!checked.ok) throw new AgentClientError('invalid_input', checked.message);
    const id = opts.id ?? `agent-${randomUUID()}`;
    const problem = runIdProblem(id);
    if (problem) throw new AgentClientError('invalid_input', `Invalid run id: ${problem}`);
    await guarded(() =>
      startAgentRun(this.temporal, checked.input, {
        workflowId: id,
        taskQueue: this.taskQueue,
        ...(opts.memo ? { memo: opts.memo } : {}),
        reuse: opts.reuse ?? false,
      }),
    );
    return new AgentRun(this.temporal, id);
  }

  /**
   * Connects to Temporal the way every Temporal tool does (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
   * TLS, API key, TOML profiles; the local dev server by default), with payload encryption when
   * DURABLE_AGENT_CODEC_KEYS is set. {@link close} closes the connection.
   */
  static async connect(
    opts: { address?: string; namespace?: string; taskQueue?: string } = {},
  ): Promise<AgentClient> {
    const target = temporalTarget({
      ...(opts.address ? { address: opts.address } : {}),
      ...(opts.namespace ? { namespace: opts.namespace } : {}),
    });
    let client: Client;
    try {
      client = await connectClient(target);
    } catch (err) {
      throw new AgentClientError('unreachable', (err as Error).message);
    }
    return new AgentClient({ client, ...(opts.taskQueue ? { taskQueue: opts.taskQueue } : {}) });
  }

  /** Closes the connection underneath. */
  close(): Promise<void> {
    return this.temporal.connection.close();
  }

  /** A run by its workflow id (started by anyone). */
  run(id: string): AgentRun {
    const problem = runIdProblem(id);
    if (problem) throw new AgentClientError('invalid_input', `Invalid run id: ${problem}`);
    return new AgentRun(this.temporal, id);
  }

  /** Tool calls waiting for approval across running runs (optionally only runs that notify `user`). */
  approvals(opts: { user?: string } = {}): Promise<RunApproval[]> {
    return guarded(() => listApprovals(this.temporal, opts));
  }

  /** Questions and client-tool calls waiting for an answer across running runs (optionally only runs that notify `user`). */
  questions(opts: { user?: string } = {}): Promise<RunQuestion[]> {
    return guarded(() => listQuestions(this.temporal, opts));
  }

  /** Sends a notification to a run or to `inbox:<user>` (created on first use). */
  async notify(target: string, notification: NotificationInput): Promise<NotifyResult> {
    const prepared = prepareNotification(notification);
    if (!prepared.ok) throw new AgentClientError('invalid_input', prepared.error);
    return guarded(() =>
      sendNotification(this.temporal, this.taskQueue, requireTarget(target), prepared.notification),
    );
  }

  /** Reads the notifications of a run or an inbox (newest page; `before` pages back). */
  notifications(target: string, page?: NotificationPageInput): Promise<NotificationPage> {
    return guarded(() => readNotifications(this.temporal, requireTarget(target), page));
  }

  /** Marks notifications read: by ids, or all. */
  async markRead(target: string, input: MarkReadInput): Promise<MarkReadResult> {
    const parsed = MarkReadInputSchema.safeParse(input);
    if (!parsed.success)
      throw new AgentClientError('invalid_input', `Invalid mark-read: ${formatZodIssues(parsed.error)}`);
    return guarded(() => sendMarkRead(this.temporal, requireTarget(target), input));
  }

  /** Clears a run's or an inbox's notifications (the list's guid changes). */
  clearNotifications(target: string): Promise<ClearResult> {
    return guarded(() => sendClearNotifications(this.temporal, requireTarget(target)));
  }
}
