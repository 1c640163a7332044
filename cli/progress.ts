/**
 * A run's progress in a terminal: one line per event, the retries the server makes, the closing
 * usage line, and the exit codes of `run` and `watch`. The data comes from client/watch.ts.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { AgentEvent, AgentResult } from '../shared/agent';
import { counted } from '../shared/words';
import type { RetryingActivity } from '../client/retries';
import type { RunOutcome } from '../client/watch';
import { followRun } from '../client/watch';
import type { LiveTokenPrinter } from './live-token-printer';

/**
 * Exit codes of `run`: 0 answered, 2 a budget stopped it, 1 failed, 130 cancelled, 3 Ctrl-C stopped
 * the command while the run goes on.
 */
export const EXIT = { completed: 0, failed: 1, stopped: 2, cancelled: 130, detached: 3 } as const;

/** A run's outcome with the exit code the command ends with. */
export type PrintedOutcome = RunOutcome & { exitCode: number };

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

/** One line for a retried activity, e.g. for `run` and `status`. */
export function formatRetry(r: RetryingActivity, now = new Date()): string {
  const due = r.nextAttemptAt
    ? r.nextAttemptAt.getTime() > now.getTime()
      ? `; next attempt in ${Math.ceil((r.nextAttemptAt.getTime() - now.getTime()) / 1000)} s (${r.nextAttemptAt.toLocaleTimeString()})`
      : '; next attempt now'
    : '; attempt running';
  return `↻ ${r.activity} is being retried: attempt ${r.attempt} (the last failed: ${r.lastError.slice(0, 300)})${due}`;
}

/**
 * Follows a run, printing a line per event (`format`; null prints nothing) and per retry, and
 * returns its outcome with the command's exit code.
 */
export async function watchRun(
  client: Client,
  handle: WorkflowHandle,
  print: (line: string) => void,
  pollMs = 250,
  format: (e: AgentEvent) => string | null = formatEvent,
): Promise<PrintedOutcome> {
  const outcome = await followRun(client, handle, {
    pollMs,
    onEvent: (e) => {
      const line = format(e);
      if (line) print(line);
    },
    onRetry: (r) => print(formatRetry(r)),
  });
  return { ...outcome, exitCode: EXIT[outcome.outcome] };
}

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
