import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { History, HistoryEvent } from '../client/debug/history';

/** Every run of a workflow id, oldest first, following continue-as-new from `firstRunId`. */
export async function runChain(client: Client, workflowId: string, firstRunId: string): Promise<History[]> {
  const out: History[] = [];
  let runId: string | undefined = firstRunId;
  while (runId) {
    const history: History = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    out.push(history);
    runId =
      history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return out;
}

/** Activity types a run scheduled, in history order (one per model call and per tool call). */
export function scheduledActivityTypes(history: History): string[] {
  return (history.events ?? []).flatMap((e) => {
    const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
    return name ? [name] : [];
  });
}

/** Names of the local activities a history recorded (a run's one-off runDefaults left out), in order. */
export function localActivityTypes(history: History): string[] {
  return (history.events ?? []).flatMap((e) => {
    const m = e.markerRecordedEventAttributes;
    if (m?.markerName !== 'core_local_activity') return [];
    const data = m.details?.data?.payloads?.[0]?.data;
    const parsed = data ? (JSON.parse(Buffer.from(data).toString('utf8')) as { activity_type?: string }) : {};
    return parsed.activity_type === 'runDefaults' ? [] : [parsed.activity_type ?? '?'];
  });
}

/** Bytes of a history as the server counts it toward its size limit (protobuf encoding). */
export function historyBytes(history: History): number {
  return temporal.api.history.v1.History.encode(history).finish().length;
}

/** Bytes of one event (protobuf encoding). */
export function eventBytes(event: HistoryEvent): number {
  return temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
}

/** Bytes of payloads (protobuf encoding): what the server checks against its payload limit. */
export function payloadsBytes(payloads: temporal.api.common.v1.IPayloads | null | undefined): number {
  return payloads ? temporal.api.common.v1.Payloads.encode(payloads).finish().length : 0;
}

/** Workflow task failures by cause, e.g. `{ WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND: 2 }`. */
export function workflowTaskFailures(histories: History[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of histories.flatMap((h) => h.events ?? [])) {
    const f = e.workflowTaskFailedEventAttributes;
    if (!f) continue;
    const cause = temporal.api.enums.v1.WorkflowTaskFailedCause[f.cause ?? 0] ?? String(f.cause);
    out[cause] = (out[cause] ?? 0) + 1;
  }
  return out;
}

/**
 * The build that completed each workflow task of a run, in order (`unversioned` for a worker
 * without Worker Versioning), and the behaviour it reported: where a run ran, from its history.
 */
export function workflowTaskBuilds(history: History): { buildId: string; behavior: string }[] {
  return (history.events ?? []).flatMap((e) => {
    const a = e.workflowTaskCompletedEventAttributes;
    if (!a) return [];
    const behavior = temporal.api.enums.v1.VersioningBehavior[a.versioningBehavior ?? 0] ?? 'unknown';
    return [
      {
        buildId: a.deploymentVersion?.buildId || 'unversioned',
        behavior: behavior.replace(/^VERSIONING_BEHAVIOR_/, ''),
      },
    ];
  });
}
