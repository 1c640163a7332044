/**
 * The runs page: agent runs from Temporal visibility, newest first, filtered by status, refreshed;
 * above them the schedules that start runs (`schedules.ts`).
 */
import { appRoot, h, timeEl } from './dom';
import { api } from './http';
import { schedulesSection } from './schedules';
import type { RunSummary } from './types';

const STATUSES = [
  'running',
  'waiting_for_approval',
  'waiting_for_input',
  'completed',
  'stopped',
  'failed',
  'cancelled',
];
const REFRESH_MS = 3_000;

/** Starts the runs page. */
export function startRuns(): void {
  const root = appRoot();
  const params = new URLSearchParams(location.search);
  const select = h(
    'select',
    { id: 'filter-status' },
    h('option', { value: '' }, 'All'),
    ...STATUSES.map((s) =>
      h('option', { value: s, selected: params.get('status') === s }, s.replace(/_/g, ' ')),
    ),
  );
  const body = h('tbody');
  const problem = h('p', { class: 'error', role: 'alert', hidden: true });
  const table = h(
    'table',
    { class: 'runs listing' },
    h('caption', { class: 'sr-only' }, 'Agent runs, newest first'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['Run', 'Status', 'Started', 'Step', 'Last tool', 'Model', 'Task'].map((t) =>
          h('th', { scope: 'col' }, t),
        ),
      ),
    ),
    body,
  );
  const schedules = schedulesSection();
  root.append(
    schedules.element,
    h('label', { for: 'filter-status', class: 'filters' }, 'Status ', select),
    problem,
    table,
  );

  let timer = 0;
  const load = async () => {
    window.clearTimeout(timer);
    const status = select.value;
    void schedules.refresh();
    try {
      const { runs } = await api<{ runs: RunSummary[] }>(
        'GET',
        `/api/runs${status ? `?status=${encodeURIComponent(status)}` : ''}`,
      );
      problem.hidden = true;
      body.replaceChildren(
        ...runs.map((r) =>
          h(
            'tr',
            { 'data-run': r.workflowId },
            h(
              'td',
              { 'data-label': 'Run', class: 'run-id' },
              h('a', { href: `/runs/${encodeURIComponent(r.workflowId)}` }, r.workflowId),
            ),
            h(
              'td',
              { 'data-label': 'Status' },
              h(
                'span',
                { class: `status status-${r.status ?? r.execution.toLowerCase()}` },
                (r.status ?? r.execution).replace(/_/g, ' '),
              ),
            ),
            h('td', { 'data-label': 'Started' }, timeEl(r.started)),
            h('td', { 'data-label': 'Step' }, r.step === null ? '' : String(r.step)),
            h('td', { 'data-label': 'Last tool' }, r.lastTool ?? ''),
            h('td', { 'data-label': 'Model' }, r.model ?? ''),
            h('td', { 'data-label': 'Task', class: 'task' }, r.task ?? ''),
          ),
        ),
      );
      if (runs.length === 0) body.append(h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'No runs.')));
    } catch (err) {
      problem.textContent = `Could not list runs: ${(err as Error).message}`;
      problem.hidden = false;
    }
    timer = window.setTimeout(() => void load(), REFRESH_MS);
  };
  select.addEventListener('change', () => {
    const url = new URL(location.href);
    if (select.value) url.searchParams.set('status', select.value);
    else url.searchParams.delete('status');
    history.replaceState(null, '', url);
    void load();
  });
  void load();
}
