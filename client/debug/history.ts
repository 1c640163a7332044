import { RunNotFoundError, isRunNotFound } from '../temporal-errors';
import fs from 'node:fs';
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import { codecKeysFromEnv, openHistoryPayloads } from '../../workers/payload-codec';

/** A workflow history, as the SDK and the Temporal CLI represent it. */
export type History = temporal.api.history.v1.IHistory;
/** One event of a history. */
export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/**
 * Reads a history file in the format `temporal workflow show --output json` writes (and `export`
 * writes), so files from either tool are interchangeable. Throws a message naming the file.
 */
export function readHistoryFile(file: string): History {
  let json: unknown;
  try {
    json = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`Cannot read history file ${file}: ${(err as Error).message}`);
  }
  try {
    return openHistoryPayloads(historyFromJSON(json), codecKeysFromEnv());
  } catch (err) {
    throw new Error(
      `${file} is not a workflow history (expected {"events": [...]} as written by "temporal workflow show --output json"): ${(err as Error).message}`,
    );
  }
}

/** Fetches a run's history (the latest run of the id unless `runId` is given). */
export async function fetchRunHistory(client: Client, workflowId: string, runId?: string): Promise<History> {
  let history: History;
  try {
    history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  } catch (err) {
    if (isRunNotFound(err)) throw new RunNotFoundError(workflowId);
    throw err;
  }
  // Histories hold payloads as Temporal stored them: open encrypted ones with the configured keys.
  return openHistoryPayloads(history, codecKeysFromEnv());
}

/** A history as the JSON the Temporal CLI writes. */
export function historyJson(history: History): string {
  return historyToJSON(history);
}

/** Milliseconds since the epoch of an event's time. */
export function eventTimeMs(e: HistoryEvent): number {
  const t = e.eventTime;
  if (!t) return 0;
  return Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6);
}

/** The workflow id recorded in a history's first event, if any. */
export function historyWorkflowId(history: History): string | undefined {
  const first = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  return first?.workflowId ?? undefined;
}

/** The child runs a history started (sub-agents), in the order they started: workflow and run ids. */
export function childRunsOf(history: History): { workflowId: string; runId: string }[] {
  return (history.events ?? []).flatMap((e) => {
    const x = e.childWorkflowExecutionStartedEventAttributes?.workflowExecution;
    return x?.workflowId && x.runId ? [{ workflowId: x.workflowId, runId: x.runId }] : [];
  });
}
