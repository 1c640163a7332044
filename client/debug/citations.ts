/**
 * A run's citations rebuilt from its history alone, so `transcript` resolves an answer's marks
 * for a finished run, a history file, or a run whose worker is gone. The workflow numbers search
 * results as each search completes (`applyCitations`, deterministic); replaying that over the
 * completed search activities, in history order, from the state the run started with (carried over
 * continue-as-new), gives the same numbers the `citations` query would.
 */
import type { CarriedState } from '../../workflows/agent/carried-state';
import type { Citation, CitationState } from '../../shared/citations';
import {
  applyCitations,
  createCitationState,
  resolveCitations,
  searchRecordsOf,
} from '../../shared/citations';
import type { ToolActivityInput, ToolResult } from '../../shared/tools/define';
import type { History } from './history';
import { decodePayloads } from './payloads';

/** Every citation known at the end of the run in `history`. */
export function citationsFromHistory(history: History): Citation[] {
  let state: CitationState = createCitationState();
  const searches = new Map<string, unknown>();
  for (const e of history.events ?? []) {
    const started = e.workflowExecutionStartedEventAttributes;
    if (started) {
      const [, carried] = decodePayloads(started.input) as [unknown, CarriedState | undefined];
      if (carried?.citations) state = carried.citations;
      continue;
    }
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const [input] = decodePayloads(scheduled.input) as [ToolActivityInput<{ query?: unknown }> | undefined];
      searches.set(String(e.eventId ?? ''), input?.args?.query);
      continue;
    }
    const completed = e.activityTaskCompletedEventAttributes;
    if (!completed) continue;
    const key = String(completed.scheduledEventId ?? '');
    if (!searches.has(key)) continue;
    const [result] = decodePayloads(completed.result) as [ToolResult | undefined];
    const records = searchRecordsOf(result?.data);
    if (!records) continue;
    const query = searches.get(key);
    state = applyCitations(state, records, typeof query === 'string' ? { query } : {}).state;
  }
  return resolveCitations(state);
}
