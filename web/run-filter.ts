/**
 * The inbox's filter by run. A run keeps its own notification list, and what it sends to a user's
 * inbox (`notify_user`, its approval and budget notifications) goes to both lists with the same id;
 * so "run X" in the inbox is the inbox items whose id is in run X's own list. The ids are read from
 * the API (page by page when the answer is truncated) and read again, at most every 2 s, while new
 * items arrive. A long run's list may have shed its oldest items, whose copies in the inbox then no
 * longer match: the hint says so.
 */
import { h } from './dom';
import { ApiError, api } from './http';
import type { Notification, RunSummary } from './types';

/** Least time between two reads of the selected run's list. */
const REFRESH_MS = 2_000;
/** Least time between two reads of the recent runs. */
const RUNS_REFRESH_MS = 10_000;
/** Recent runs offered. */
const RECENT_RUNS = 50;
/** Pages read of one run's list at most (each is as large as a query answer may be). */
const MAX_PAGES = 20;

/** One page of a target's list, as `GET /api/notifications?target=…` answers it. */
interface ListPage {
  notifications: Notification[];
  evicted: number;
  truncated: boolean;
  before?: number;
}

/** The run whose approval notification this is (`approval:<run>:<call>`), or null. */
export function approvalRun(id: string): string | null {
  if (!id.startsWith('approval:') || id.length >= 200) return null; // 200: the id may be cut short
  const rest = id.slice('approval:'.length);
  const cut = rest.lastIndexOf(':');
  return cut > 0 ? rest.slice(0, cut) : null;
}

/** The run filter's select, hint and state; `onChange` re-renders the inbox. */
export interface RunFilter {
  /** The label with the select, for the filters fieldset. */
  control: HTMLLabelElement;
  /** The hint under the filters (shown while a run is selected). */
  hint: HTMLParagraphElement;
  /** Whether an inbox item passes the filter. */
  matches(n: Notification): boolean;
  /** Whether the selected run's ids are still being read (nothing is shown meanwhile). */
  loading(): boolean;
  /** Tells the filter that the inbox changed: reads the run's ids again, and notices new runs. */
  inboxChanged(list: readonly Notification[]): void;
}

/** Builds the run filter, starting with `?run=` from the address when there is one. */
export function createRunFilter(user: string, onChange: () => void): RunFilter {
  let run = new URLSearchParams(location.search).get('run') ?? '';
  let ids: Set<string> | null = null;
  let evicted = 0;
  let generation = 0;
  let lastRead = 0;
  let timer = 0;
  let followUp = false;
  let runsReadAt = 0;
  let recent: RunSummary[] = [];
  const fromApprovals = new Set<string>();

  const select = h('select', { id: 'filter-run', 'aria-describedby': 'filter-run-hint' });
  const hint = h('p', { id: 'filter-run-hint', class: 'muted hint', hidden: true });
  const control = h('label', { for: 'filter-run' }, 'Run ', select);

  function options(): void {
    const seen = new Set<string>();
    const opts: HTMLOptionElement[] = [h('option', { value: '' }, 'All runs')];
    const add = (id: string, label: string) => {
      if (seen.has(id)) return;
      seen.add(id);
      opts.push(h('option', { value: id, selected: id === run }, label));
    };
    for (const r of recent)
      add(r.workflowId, `${r.workflowId} (${(r.status ?? r.execution).replace(/_/g, ' ')})`);
    for (const id of [...fromApprovals].sort()) add(id, `${id} (has approvals)`);
    if (run) add(run, run);
    const now = [...select.options].map((o) => `${o.value}\n${o.text}`).join('\n');
    if (now !== opts.map((o) => `${o.value}\n${o.text}`).join('\n')) select.replaceChildren(...opts);
    select.value = run;
  }

  async function readRuns(): Promise<void> {
    runsReadAt = Date.now();
    try {
      // Only the runs that notify this inbox: other users' runs are not this inbox's business.
      const query = `limit=${RECENT_RUNS}&user=${encodeURIComponent(user)}`;
      recent = (await api<{ runs: RunSummary[] }>('GET', `/api/runs?${query}`)).runs;
    } catch {
      // Without the runs list the select still offers runs seen in approvals and the one in the address.
    }
    options();
  }

  function showHint(problem?: string): void {
    hint.hidden = !run;
    if (!run) return;
    hint.classList.toggle('error', Boolean(problem));
    hint.textContent =
      problem ??
      `Showing what run ${run} sent here, as its own notification list holds it` +
        (evicted > 0
          ? `: ${evicted} older item${evicted === 1 ? ' has' : 's have'} left that list and ${evicted === 1 ? 'is' : 'are'} not shown.`
          : '; older items of a long run may have left that list and are then not shown.');
  }

  /** Reads the selected run's ids, page by page. */
  async function readIds(): Promise<void> {
    window.clearTimeout(timer);
    timer = 0;
    const mine = ++generation;
    const target = run;
    if (!target) return;
    lastRead = Date.now();
    const found = new Set<string>();
    let before: number | undefined;
    let gone = 0;
    try {
      for (let i = 0; i < MAX_PAGES; i++) {
        const page = await api<ListPage>(
          'GET',
          `/api/notifications?target=${encodeURIComponent(target)}` +
            (before !== undefined ? `&before=${before}` : ''),
        );
        if (i === 0) gone = page.evicted;
        for (const n of page.notifications) found.add(n.id);
        if (!page.truncated || page.before === undefined) break;
        before = page.before;
      }
      if (mine !== generation) return;
      ids = found;
      evicted = gone;
      showHint();
    } catch (err) {
      if (mine !== generation) return;
      ids = new Set();
      evicted = 0;
      const e = err as Error;
      showHint(
        e instanceof ApiError && e.status === 404
          ? `Run ${target} has no notification list (no such run, or it sent nothing yet).`
          : `Could not read the notifications of run ${target}: ${e.message}`,
      );
    }
    onChange();
    if (followUp) {
      // What went to the inbox may reach the run's own list a moment later: look once more.
      followUp = false;
      schedule();
    }
  }

  function schedule(): void {
    if (!run || timer) return;
    const wait = Math.max(0, lastRead + REFRESH_MS - Date.now());
    timer = window.setTimeout(() => void readIds(), wait);
  }

  function choose(value: string): void {
    run = value;
    ids = null;
    followUp = false;
    evicted = 0;
    generation += 1;
    window.clearTimeout(timer);
    timer = 0;
    const url = new URL(location.href);
    if (run) url.searchParams.set('run', run);
    else url.searchParams.delete('run');
    history.replaceState(null, '', url);
    showHint();
    onChange();
    if (run) void readIds();
  }

  select.addEventListener('change', () => choose(select.value));
  select.addEventListener('focus', () => {
    if (Date.now() - runsReadAt > RUNS_REFRESH_MS) void readRuns();
  });

  options();
  showHint();
  void readRuns();
  if (run) void readIds();

  return {
    control,
    hint,
    matches: (n) => !run || (ids?.has(n.id) ?? false),
    loading: () => Boolean(run) && ids === null,
    inboxChanged(list) {
      let more = false;
      for (const n of list) {
        const r = approvalRun(n.id);
        if (r && !fromApprovals.has(r)) {
          fromApprovals.add(r);
          more = true;
        }
      }
      if (more) options();
      if (!run) return;
      followUp = true;
      // While the first read is under way, its follow-up looks again.
      if (ids !== null) schedule();
    },
  };
}
