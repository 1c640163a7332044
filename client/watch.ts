import path from 'node:path';
import { formatRetry, retryingActivities } from './retries';
import type { StreamChannel } from '../activities/streaming';
import { STREAM_ENV, parseStreamSetting, streamChannelFor } from '../activities/streaming';
import { DATA_ROOT } from '../shared/project-root';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, TerminatedFailure } from '@temporalio/common';
import type { AgentEvent, AgentResult } from '../shared/agent';
import { eventsQuery } from '../shared/agent/messages';
import type { LiveTokenPrinter } from './live-tokens';
import { counted } from '../shared/words';

/** How a watched run ended; the CLI's exit code follows it. */
export interface RunOutcome {
  outcome: 'completed' | 'stopped' | 'failed' | 'cancelled';
  result?: AgentResult;
  error?: string;
  /** The failure's type when the run failed with one (`OutputValidationError`, `InvalidAgentInput`, …). */
  errorType?: string;
  exitCode: number;
}

/**
 * Exit codes of `run`: 0 answered, 2 a budget stopped it, 1 failed, 130 cancelled, 3 Ctrl-C stopped
 * the command while the run goes on.
 */
export const EXIT = { completed: 0, failed: 1, stopped: 2, cancelled: 130, detached: 3 } as const;

function short(value: unknown, limit = 160): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const one = (text ?? '').replace(/\s+/g, ' ');
  return one.length > limit ? `${one.slice(0, limit)}…` : one;
}

/** One progress line for an event, or null for events not worth a line. */
export function formatEvent(e: AgentEvent): string | null {
  const step = `[step ${e.step}]`;
  switch (e.kind) {
    case 'model_started':
      return `${step} model thinking…`;
    case 'model_finished':
      return `${step} model answered in ${e.durationMs ?? 0} ms${e.text ? `: ${short(e.text)}` : ''}`;
    case 'tool_started':
      return `${step} → ${e.tool} ${short(e.args)} (${e.toolCallId})`;
    case 'tool_finished':
      return `${step} ${e.isError ? '✗' : '✓'} ${e.tool} in ${e.durationMs ?? 0} ms: ${short(e.text)}`;
    case 'tool_rejected':
      return `${step} ✗ ${e.tool} not called: ${short(e.text)}`;
    case 'approval_requested':
      return `${step} ⏸ ${e.tool} waits for approval (${e.toolCallId})${e.text ? `: ${short(e.text)}` : ''}; answer with durable-agent approve|reject <run> ${e.toolCallId}`;
    case 'approval_decided':
      return `${step} ${e.tool} ${short(e.text)}`;
    case 'question_asked':
      return e.tool === 'ask_user'
        ? `${step} ? ${short(e.text, 400)} (${e.toolCallId}); answer with durable-agent answer <run> ${e.toolCallId}`
        : `${step} ⏸ ${e.tool} waits for the client's result (${e.toolCallId})`;
    case 'question_answered':
      return `${step} ${e.isError ? '✗' : '✓'} ${e.tool} ${short(e.text)}`;
    case 'user_message':
      return `${step} user: ${short(e.text)}`;
    case 'continued_as_new':
      return `${step} continued as new (${e.text})`;
    case 'mcp_tools':
      // An event naming a tool says why discovery skipped it.
      return e.tool ? `${step} ⚠ ${e.tool} ${short(e.text, 400)}` : `${step} ${short(e.text, 400)}`;
    case 'agent_started':
      return `${step} ↳ sub-agent ${e.tool} started as run ${e.text} (${e.toolCallId})`;
    case 'agent_finished':
      return `${step} ${e.isError ? '✗' : '↲'} sub-agent ${short(e.text, 400)}`;
    case 'budget_warning':
      return `${step} ⚠ ${e.text}`;
    case 'stopped':
      return `${step} stopped: ${e.text}`;
    case 'error':
      return `${step} error: ${short(e.text, 400)}`;
    case 'final_answer':
      return null;
  }
}

/**
 * Follows a run: prints each new event (by polling the `events` query) until the run closes,
 * then returns its outcome. Survives continue-as-new because the handle follows the chain.
 */
export async function watchRun(
  client: Client,
  handle: WorkflowHandle,
  print: (line: string) => void,
  pollMs = 250,
  format: (e: AgentEvent) => string | null = formatEvent,
): Promise<RunOutcome> {
  let since = 0;
  let done = false;
  const result = handle
    .result()
    .then((r) => r as AgentResult)
    .finally(() => {
      done = true;
    });
  // Handled from the start: the run can end (a cancelled one rejects) while the first query still
  // waits for a worker, and an unhandled rejection would end this process with exit code 1.
  result.catch(() => undefined);
  const follow = client.workflow.getHandle(handle.workflowId);
  const drain = async () => {
    try {
      const events = await follow.query(eventsQuery, { since });
      for (const e of events) {
        since = Math.max(since, e.seq);
        const line = format(e);
        if (line) print(line);
      }
    } catch {
      // Between runs of a continue-as-new chain, or before the first task: try again next tick.
    }
  };
  // Retries happen on the server, out of the run's sight: its description says which, every second.
  const retriesSeen = new Set<string>();
  let lastRetryCheck = 0;
  const retries = async () => {
    if (Date.now() - lastRetryCheck < 1000) return;
    lastRetryCheck = Date.now();
    try {
      for (const r of retryingActivities(await follow.describe())) {
        const key = `${r.activityId}/${r.attempt}`;
        if (retriesSeen.has(key)) continue;
        retriesSeen.add(key);
        print(formatRetry(r));
      }
    } catch {
      // A description is best effort: the events go on either way.
    }
  };
  while (!done) {
    await drain();
    await retries();
    await Promise.race([result.catch(() => undefined), new Promise((r) => setTimeout(r, pollMs))]);
  }
  await drain();
  try {
    const r = await result;
    const outcome = r.stopReason === 'final_answer' ? 'completed' : 'stopped';
    return { outcome, result: r, exitCode: EXIT[outcome] };
  } catch (err) {
    if (err instanceof WorkflowFailedError) {
      if (err.cause instanceof CancelledFailure || err.cause instanceof TerminatedFailure) {
        return { outcome: 'cancelled', error: err.cause.message || 'cancelled', exitCode: EXIT.cancelled };
      }
      const errorType = err.cause instanceof ApplicationFailure ? err.cause.type : undefined;
      return {
        outcome: 'failed',
        error: err.cause?.message ?? err.message,
        ...(errorType ? { errorType } : {}),
        exitCode: EXIT.failed,
      };
    }
    throw err;
  }
}

export { counted } from '../shared/words';

/** The closing line of a run: steps, tool calls, tokens. */
export function usageLine(r: Pick<AgentResult, 'steps' | 'usage'>): string {
  return `${counted(r.steps, 'step')}, ${counted(r.usage.toolCalls, 'tool call')}, ${r.usage.inputTokens}+${r.usage.outputTokens} tokens`;
}

/**
 * The event lines beside live tokens, in one order with them: a step's `model_started` lets the
 * printer type that step's answer (held until the earlier steps' lines were printed); an answer
 * already typed is not printed again, only how long it took; a tool call typed as the model wrote
 * it is not repeated by its `tool_started` line.
 */
export function formatEventBesideTokens(
  printer: Pick<LiveTokenPrinter, 'typed' | 'reached' | 'typedCall'>,
): (e: AgentEvent) => string | null {
  return (e) => {
    if (e.kind === 'model_started') {
      printer.reached(e.step);
      // The typed line shows the model at work; its start line would only cut into it.
      return printer.typed(e.step) ? null : formatEvent(e);
    }
    if (e.kind === 'model_finished' && printer.typed(e.step))
      return `[step ${e.step}] model answered in ${e.durationMs ?? 0} ms`;
    if (e.kind === 'tool_started' && e.tool && printer.typedCall(e.step, e.tool)) return null;
    return formatEvent(e);
  };
}

/** The live-token channel the environment names (DURABLE_AGENT_STREAM), or null when off or unreadable. */
export function liveChannelFromEnv(env: NodeJS.ProcessEnv = process.env): StreamChannel | null {
  try {
    return streamChannelFor(parseStreamSetting(env[STREAM_ENV], path.join(DATA_ROOT, '.data', 'streams')));
  } catch {
    return null;
  }
}
