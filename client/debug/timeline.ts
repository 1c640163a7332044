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
      /**
       * The step this run goes on with, when it did not start from the beginning (a continued run,
       * a fork): its first model turn's, or, for a run continued mid-turn, the step whose tool calls
       * it finishes first.
       */
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
  | {
      kind: 'timer';
      /** When it fired or was cancelled; when it started, while it runs. */
      at: number;
      startedAt: number;
      durationMs: number | null;
      fired: boolean;
      /**
       * What it waits for, e.g. `approval timeout for calculator`: the timer's summary, or, for
       * runs recorded before timers had one, the approval wait an approval cancelled.
       */
      purpose?: string;
      /** The approval decision that cancelled it, e.g. `approved`. */
      cancelledBy?: string;
    }
  | {
      kind: 'end';
      at: number;
      status:
        'completed' | 'failed' | 'cancelled' | 'terminated' | 'timed_out' | 'continued_as_new' | 'running';
      answer?: string | null;
      /** With an output schema: the answer parsed, as the result carries it. */
      output?: unknown;
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

/** A timer that has not fired or been cancelled yet: where it would go if it never does. */
interface TimerTrack {
  startedAt: number;
  position: number;
  purpose?: string;
}

/** An approval decided in the workflow task being read (its timer is cancelled in the same task). */
interface Decision {
  toolCallId: string;
  said: string;
}

/** How an `approveToolCall` update's payload reads, e.g. `approved with edited arguments`. */
function decisionText(payload: unknown): Decision | null {
  const d = payload as { toolCallId?: unknown; approve?: unknown; reason?: unknown; args?: unknown } | null;
  if (!d || typeof d.toolCallId !== 'string' || typeof d.approve !== 'boolean') return null;
  const reason = typeof d.reason === 'string' && d.reason ? `: ${d.reason}` : '';
  const said = d.approve
    ? d.args !== undefined
      ? 'approved with edited arguments'
      : 'approved'
    : `rejected${reason}`;
  return { toolCallId: d.toolCallId, said };
}

/** A timer's summary (user metadata), if it has one. */
function timerSummary(e: HistoryEvent): string | undefined {
  const summary = e.userMetadata?.summary;
  if (!summary) return undefined;
  const [text] = decodePayloads({ payloads: [summary] });
  return typeof text === 'string' && text ? text : undefined;
}

/**
 * Builds a run's timeline from its history: model turns (what the model newly saw and what it
 * answered), tool calls with arguments, results, durations, attempts and failures, notifications,
 * signals, approvals, timers, and how the run ended (including continue-as-new links). A timer is
 * placed where it fired or was cancelled (an approval wait's after the decision that ended it); one
 * still running, where it started.
 */
export function buildTimeline(history: History): TimelineEntry[] {
  const out: TimelineEntry[] = [];
  const activities = new Map<string, ActivityTrack>();
  const timers = new Map<string, TimerTrack>();
  const updates = new Map<string, { index: number }>();
  /** Tool names by call id, from the model's answers. */
  const callNames = new Map<string, string>();
  /** Approvals decided since the last completed workflow task. */
  let decided: Decision[] = [];
  let step = 0;
  let seenMessages = 0;

  for (const e of history.events ?? []) {
    const at = eventTimeMs(e);
    const id = String(e.eventId ?? '');
    if (e.workflowTaskCompletedEventAttributes) {
      decided = [];
    } else if (e.workflowExecutionStartedEventAttributes) {
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
        // `step` counts the steps done; a run continued mid-turn first finishes that step's calls.
        ...(carried ? { resumedAtStep: carried.turn ? carried.step : carried.step + 1 } : {}),
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
        for (const c of r.toolCalls ?? []) callNames.set(c.id, c.name);
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
      if (a.acceptedRequest?.input?.name === 'approveToolCall') {
        const d = decisionText(payload);
        if (d) decided.push(d);
      }
    } else if (e.workflowExecutionUpdateCompletedEventAttributes) {
      const a = e.workflowExecutionUpdateCompletedEventAttributes;
      const entry = out[updates.get(a.meta?.updateId ?? '')?.index ?? -1];
      if (entry?.kind === 'update') {
        entry.outcome = a.outcome?.failure
          ? `failed: ${failureMessage(a.outcome.failure)}`
          : JSON.stringify(decodePayloads(a.outcome?.success)[0]);
      }
    } else if (e.timerStartedEventAttributes) {
      const purpose = timerSummary(e);
      timers.set(id, { startedAt: at, position: out.length, ...(purpose ? { purpose } : {}) });
    } else if (e.timerFiredEventAttributes || e.timerCanceledEventAttributes) {
      const started = String((e.timerFiredEventAttributes ?? e.timerCanceledEventAttributes)?.startedEventId);
      const t = timers.get(started);
      if (!t) continue;
      timers.delete(started);
      let { purpose } = t;
      let cancelledBy: string | undefined;
      if (e.timerCanceledEventAttributes) {
        // An approval wait's timer is cancelled in the task that took the decision.
        const named = decided.findIndex((d) => purpose?.includes(`(${d.toolCallId})`));
        const [d] = decided.splice(named >= 0 ? named : 0, 1);
        if (d) {
          cancelledBy = d.said;
          purpose ??= `approval timeout for ${callNames.get(d.toolCallId) ?? 'a tool call'} (${d.toolCallId})`;
        }
      }
      out.push({
        kind: 'timer',
        at,
        startedAt: t.startedAt,
        durationMs: at - t.startedAt,
        fired: Boolean(e.timerFiredEventAttributes),
        ...(purpose ? { purpose } : {}),
        ...(cancelledBy ? { cancelledBy } : {}),
      });
    } else if (e.workflowExecutionCompletedEventAttributes) {
      const [r] = decodePayloads(e.workflowExecutionCompletedEventAttributes.result) as [
        { answer?: string | null; output?: unknown; stopReason?: string } | undefined,
      ];
      out.push({
        kind: 'end',
        at,
        status: 'completed',
        answer: r?.answer ?? null,
        ...(r?.output === undefined ? {} : { output: r.output }),
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
  // Timers still running stay where they started (positions counted before any of them went in).
  [...timers.values()].forEach((t, inserted) =>
    out.splice(t.position + inserted, 0, {
      kind: 'timer',
      at: t.startedAt,
      startedAt: t.startedAt,
      durationMs: null,
      fired: false,
      ...(t.purpose ? { purpose: t.purpose } : {}),
    }),
  );
  return out;
}

/** Type guard for events with a given attribute, used by callers scanning histories. */
export function isActivityScheduled(e: HistoryEvent, type?: string): boolean {
  const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
  return name !== undefined && name !== null && (type === undefined || name === type);
}
