import type { AgentInput } from '../../shared/agent';
import type { CarriedState } from '../../workflows/agent/carried-state';
import type { ContentRef } from '../../shared/content';
import type { ConversationMessage, ToolCall, Usage } from '../../shared/conversation';
import type { CallModelInput, CallModelOutput } from '../../shared/model';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';
import type { History, HistoryEvent } from './history';
import { eventTimeMs } from './history';
import { decodePayloads } from './payloads';

/** Where a forked run came from (memo `forkedFrom`). */
export interface ForkOrigin {
  workflowId: string;
  runId: string;
  step: number;
}

/** One entry of a run's timeline, built from its history alone. */
export type TimelineEntry =
  | {
      kind: 'start';
      at: number;
      workflowType: string;
      workflowId: string;
      runId: string;
      task?: string;
      model?: string;
      tools?: string[];
      maxSteps?: number;
      resumedAtStep?: number;
      forkedFrom?: ForkOrigin;
      continuedFromRunId?: string;
    }
  | {
      kind: 'model';
      step: number;
      at: number;
      durationMs: number | null;
      attempts: number;
      /** Messages the model saw for the first time in this turn (the task, tool results, user messages). */
      newMessages: ConversationMessage[];
      answer: string | null;
      toolCalls: ToolCall[];
      usage: Usage | null;
      failure?: string;
    }
  | {
      kind: 'tool';
      step: number;
      at: number;
      durationMs: number | null;
      attempts: number;
      tool: string;
      toolCallId: string;
      args: unknown;
      /** What the model read, or its preview when `resultRef` is set. */
      result: string | null;
      /** The whole result in the content store, when it was too large for history. */
      resultRef?: ContentRef;
      resultBytes?: number;
      isError: boolean;
      failure?: string;
    }
  | { kind: 'notification'; at: number; message: string; type: string; priority: unknown; id?: string }
  | { kind: 'signal'; at: number; name: string; payload: unknown }
  | { kind: 'update'; at: number; name: string; payload: unknown; outcome: string }
  | { kind: 'timer'; at: number; durationMs: number | null; fired: boolean }
  | {
      kind: 'end';
      at: number;
      status:
        'completed' | 'failed' | 'cancelled' | 'terminated' | 'timed_out' | 'continued_as_new' | 'running';
      answer?: string | null;
      stopReason?: string;
      failure?: string;
      newRunId?: string;
    };

function modelName(m: AgentInput['model'] | undefined): string | undefined {
  if (!m) return undefined;
  return m.provider === 'scripted' ? `scripted${m.script ? `:${m.script}` : ''}` : `${m.provider}:${m.model}`;
}

function failureMessage(f: { message?: string | null; cause?: unknown } | null | undefined): string {
  if (!f) return 'failed';
  const cause = f.cause as { message?: string | null } | null | undefined;
  return cause?.message ? `${f.message ?? ''}: ${cause.message}` : (f.message ?? 'failed');
}

interface ActivityTrack {
  index: number;
  scheduledAt: number;
}

/**
 * Builds a run's timeline from its history: model turns (what the model newly saw and what it
 * answered), tool calls with arguments, results, durations, attempts and failures, notifications,
 * signals, approvals, timers, and how the run ended (including continue-as-new links).
 */
export function buildTimeline(history: History): TimelineEntry[] {
  const out: TimelineEntry[] = [];
  const activities = new Map<string, ActivityTrack>();
  const timers = new Map<string, { index: number; at: number }>();
  const updates = new Map<string, { index: number }>();
  let step = 0;
  let seenMessages = 0;

  for (const e of history.events ?? []) {
    const at = eventTimeMs(e);
    const id = String(e.eventId ?? '');
    if (e.workflowExecutionStartedEventAttributes) {
      const a = e.workflowExecutionStartedEventAttributes;
      const [input, carried] = decodePayloads(a.input) as [AgentInput | undefined, CarriedState | undefined];
      const memo = a.memo?.fields?.forkedFrom
        ? decodePayloads({ payloads: [a.memo.fields.forkedFrom] })[0]
        : undefined;
      step = carried?.step ?? 0;
      // Runs that carried their conversation by value sent it whole with every model call.
      seenMessages = carried?.messages?.length ?? 0;
      const isAgent = a.workflowType?.name === 'agentWorkflow';
      out.push({
        kind: 'start',
        at,
        workflowType: a.workflowType?.name ?? '?',
        workflowId: a.workflowId ?? '',
        runId: a.originalExecutionRunId ?? '',
        ...(isAgent && input
          ? {
              task: input.task,
              model: modelName(input.model),
              tools: input.tools,
              maxSteps: input.policy?.maxSteps,
            }
          : {}),
        ...(carried ? { resumedAtStep: carried.step } : {}),
        ...(memo ? { forkedFrom: memo as ForkOrigin } : {}),
        ...(a.continuedExecutionRunId ? { continuedFromRunId: a.continuedExecutionRunId } : {}),
      });
    } else if (e.activityTaskScheduledEventAttributes) {
      const a = e.activityTaskScheduledEventAttributes;
      const type = a.activityType?.name ?? '?';
      const [input] = decodePayloads(a.input);
      if (type === 'callModel') {
        step += 1;
        const call = input as CallModelInput;
        const byReference = call.conversation !== undefined || call.head !== undefined;
        // Calls by reference carry only what is new; older ones carried the whole window.
        const fresh = byReference
          ? [...(call.head ?? []), ...(call.messages ?? [])]
          : (call.messages ?? []).slice(seenMessages);
        out.push({
          kind: 'model',
          step,
          at,
          durationMs: null,
          attempts: 1,
          newMessages: fresh.filter((m) => m.role !== 'assistant'),
          answer: null,
          toolCalls: [],
          usage: null,
        });
        if (!byReference) seenMessages = call.messages?.length ?? 0;
      } else if (type === 'deliverNotification') {
        continue;
      } else {
        const t = input as ToolActivityInput<unknown>;
        out.push({
          kind: 'tool',
          step,
          at,
          durationMs: null,
          attempts: 1,
          tool: type,
          toolCallId: t?.toolCallId ?? '',
          args: t?.args,
          result: null,
          isError: false,
        });
      }
      activities.set(id, { index: out.length - 1, scheduledAt: at });
    } else if (e.activityTaskStartedEventAttributes) {
      const a = e.activityTaskStartedEventAttributes;
      const track = activities.get(String(a.scheduledEventId));
      const entry = track && out[track.index];
      if (entry && (entry.kind === 'model' || entry.kind === 'tool')) entry.attempts = a.attempt ?? 1;
    } else if (e.activityTaskCompletedEventAttributes) {
      const a = e.activityTaskCompletedEventAttributes;
      const track = activities.get(String(a.scheduledEventId));
      const entry = track && out[track.index];
      if (!track || !entry) continue;
      const [result] = decodePayloads(a.result);
      if (entry.kind === 'model') {
        const r = result as CallModelOutput;
        entry.answer = r.content;
        entry.toolCalls = r.toolCalls;
        entry.usage = r.usage;
        entry.durationMs = at - track.scheduledAt;
      } else if (entry.kind === 'tool') {
        const r = result as ToolResult;
        entry.result = r.content;
        if (r.contentRef) {
          entry.resultRef = r.contentRef;
          entry.resultBytes = r.contentBytes;
        }
        entry.isError = r.isError ?? false;
        entry.durationMs = at - track.scheduledAt;
      }
    } else if (
      e.activityTaskFailedEventAttributes ||
      e.activityTaskTimedOutEventAttributes ||
      e.activityTaskCanceledEventAttributes
    ) {
      const a = e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes;
      const scheduled = a?.scheduledEventId ?? e.activityTaskCanceledEventAttributes?.scheduledEventId;
      const track = activities.get(String(scheduled));
      const entry = track && out[track.index];
      if (!track || !entry || (entry.kind !== 'model' && entry.kind !== 'tool')) continue;
      entry.failure = e.activityTaskCanceledEventAttributes ? 'cancelled' : failureMessage(a?.failure);
      entry.durationMs = at - track.scheduledAt;
      if (entry.kind === 'tool') entry.isError = true;
    } else if (e.workflowExecutionSignaledEventAttributes) {
      const a = e.workflowExecutionSignaledEventAttributes;
      const [payload] = decodePayloads(a.input);
      if (a.signalName === 'notify' && payload && typeof payload === 'object') {
        const n = payload as { message?: unknown; type?: unknown; priority?: unknown; id?: unknown };
        out.push({
          kind: 'notification',
          at,
          message: typeof n.message === 'string' ? n.message : '',
          type: typeof n.type === 'string' ? n.type : 'info',
          priority: n.priority,
          ...(typeof n.id === 'string' ? { id: n.id } : {}),
        });
      } else {
        out.push({ kind: 'signal', at, name: a.signalName ?? '?', payload });
      }
    } else if (e.workflowExecutionUpdateAcceptedEventAttributes) {
      const a = e.workflowExecutionUpdateAcceptedEventAttributes;
      const [payload] = decodePayloads(a.acceptedRequest?.input?.args);
      out.push({
        kind: 'update',
        at,
        name: a.acceptedRequest?.input?.name ?? '?',
        payload,
        outcome: 'accepted',
      });
      updates.set(a.protocolInstanceId ?? '', { index: out.length - 1 });
    } else if (e.workflowExecutionUpdateCompletedEventAttributes) {
      const a = e.workflowExecutionUpdateCompletedEventAttributes;
      const entry = out[updates.get(a.meta?.updateId ?? '')?.index ?? -1];
      if (entry?.kind === 'update') {
        entry.outcome = a.outcome?.failure
          ? `failed: ${failureMessage(a.outcome.failure)}`
          : JSON.stringify(decodePayloads(a.outcome?.success)[0]);
      }
    } else if (e.timerStartedEventAttributes) {
      out.push({ kind: 'timer', at, durationMs: null, fired: false });
      timers.set(id, { index: out.length - 1, at });
    } else if (e.timerFiredEventAttributes || e.timerCanceledEventAttributes) {
      const started = (e.timerFiredEventAttributes ?? e.timerCanceledEventAttributes)?.startedEventId;
      const t = timers.get(String(started));
      const entry = t && out[t.index];
      if (t && entry?.kind === 'timer') {
        entry.durationMs = at - t.at;
        entry.fired = Boolean(e.timerFiredEventAttributes);
      }
    } else if (e.workflowExecutionCompletedEventAttributes) {
      const [r] = decodePayloads(e.workflowExecutionCompletedEventAttributes.result) as [
        { answer?: string | null; stopReason?: string } | undefined,
      ];
      out.push({
        kind: 'end',
        at,
        status: 'completed',
        answer: r?.answer ?? null,
        stopReason: r?.stopReason,
      });
    } else if (e.workflowExecutionFailedEventAttributes) {
      out.push({
        kind: 'end',
        at,
        status: 'failed',
        failure: failureMessage(e.workflowExecutionFailedEventAttributes.failure),
      });
    } else if (e.workflowExecutionCanceledEventAttributes) {
      out.push({ kind: 'end', at, status: 'cancelled' });
    } else if (e.workflowExecutionTerminatedEventAttributes) {
      out.push({
        kind: 'end',
        at,
        status: 'terminated',
        failure: e.workflowExecutionTerminatedEventAttributes.reason ?? '',
      });
    } else if (e.workflowExecutionTimedOutEventAttributes) {
      out.push({ kind: 'end', at, status: 'timed_out' });
    } else if (e.workflowExecutionContinuedAsNewEventAttributes) {
      out.push({
        kind: 'end',
        at,
        status: 'continued_as_new',
        newRunId: e.workflowExecutionContinuedAsNewEventAttributes.newExecutionRunId ?? '',
      });
    }
  }
  return out;
}

/** Type guard for events with a given attribute, used by callers scanning histories. */
export function isActivityScheduled(e: HistoryEvent, type?: string): boolean {
  const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
  return name !== undefined && name !== null && (type === undefined || name === type);
}
