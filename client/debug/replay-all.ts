import { performance } from 'node:perf_hooks';
import type { Client } from '@temporalio/client';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { fetchRunHistory } from './history';
import type { ReplayModuleOptions, ReplayOutcome } from './replay';
import { replayMany } from './replay';

/** What `replay --all` went through, and how fast. */
export interface ReplayTotals {
  /** Runs the query found. */
  runs: number;
  /** Runs replayed (every one, unless the replay itself broke off). */
  replayed: number;
  ok: number;
  /** History events replayed. */
  events: number;
  /** Wall clock from the first fetch to the last outcome. */
  ms: number;
}

/**
 * Replays every run a visibility query finds: histories are fetched as the replay lanes ask for them
 * (a few ahead, so fetching overlaps replaying), and `onOutcome` hears of each run as it finishes.
 */
export async function replayAll(
  client: Client,
  query: string,
  bundle: WorkflowBundleWithSourceMap,
  onOutcome: (outcome: ReplayOutcome, totals: ReplayTotals) => void = () => undefined,
  options: ReplayModuleOptions = {},
): Promise<ReplayTotals> {
  const runs: { workflowId: string; runId: string }[] = [];
  for await (const w of client.workflow.list({ query }))
    runs.push({ workflowId: w.workflowId, runId: w.runId });
  const totals: ReplayTotals = { runs: runs.length, replayed: 0, ok: 0, events: 0, ms: 0 };
  const t0 = performance.now();
  const histories = (async function* () {
    // Up to `ahead` fetches in flight; each run replays under its own key.
    const ahead = 4;
    const fetch = (r: { workflowId: string; runId: string }) => {
      const p = fetchRunHistory(client, r.workflowId, r.runId);
      p.catch(() => undefined); // a failed fetch is reported when its turn comes
      return p;
    };
    const pending = runs.slice(0, ahead).map(fetch);
    for (let i = 0; i < runs.length; i++) {
      const history = await (pending[i] as ReturnType<typeof fetchRunHistory>);
      pending[i] = undefined as never;
      const later = runs[i + ahead];
      if (later) pending.push(fetch(later));
      totals.events += history.events?.length ?? 0;
      const r = runs[i] as { workflowId: string; runId: string };
      yield { history, workflowId: `${r.workflowId} (run ${r.runId})` };
    }
  })();
  for await (const outcome of replayMany(bundle, histories, undefined, options)) {
    totals.replayed += 1;
    if (outcome.ok) totals.ok += 1;
    totals.ms = performance.now() - t0;
    onOutcome(outcome, totals);
  }
  totals.ms = performance.now() - t0;
  return totals;
}

const count = (n: number) => Math.round(n).toLocaleString('en-US');

/** The throughput line `replay --all` ends with. */
export function formatThroughput(t: ReplayTotals): string {
  const s = t.ms / 1000;
  const rate = (n: number) => (s > 0 ? n / s : 0);
  return (
    `${count(t.replayed)} histories (${count(t.events)} events) in ${s.toFixed(2)} s: ` +
    `${rate(t.replayed).toFixed(1)} histories/s, ${count(rate(t.events))} events/s`
  );
}
