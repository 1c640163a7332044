/**
 * The schedules on the runs page: each agent schedule with when it fires, its next firing and its
 * last run, and buttons to pause, unpause or fire it now. Hidden while there are none.
 */
import { h, timeEl } from './dom';
import { api } from './http';
import type { ScheduleSummary } from './types';

/** The section, and what refreshes it (the runs page calls it with its own refresh). */
export interface SchedulesSection {
  element: HTMLElement;
  refresh(): Promise<void>;
}

/** Builds the schedules section of the runs page. */
export function schedulesSection(): SchedulesSection {
  const body = h('tbody');
  const problem = h('p', { class: 'error', role: 'alert', hidden: true });
  const element = h(
    'section',
    { class: 'schedules', 'aria-labelledby': 'schedules-heading', hidden: true },
    h('h2', { id: 'schedules-heading' }, 'Schedules'),
    problem,
    h(
      'table',
      { class: 'listing schedule-list' },
      h('caption', { class: 'sr-only' }, 'Agent schedules: each firing starts a run listed below'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...['Schedule', 'State', 'Fires', 'Next', 'Last run', 'Task', 'Actions'].map((t) =>
            h('th', { scope: 'col' }, t),
          ),
        ),
      ),
      body,
    ),
  );

  const act = async (id: string, action: 'pause' | 'unpause' | 'trigger') => {
    try {
      const r = await api<{ outcome?: string; running?: string[] }>(
        'POST',
        `/api/schedules/${encodeURIComponent(id)}/${action}`,
        {},
      );
      if (r.outcome === 'skipped')
        throw new Error(
          `${r.running?.join(', ') || 'a run of it'} is still going and the overlap policy skips`,
        );
      problem.hidden = true;
    } catch (err) {
      problem.textContent = `Could not ${action === 'trigger' ? 'run' : action} ${id}: ${(err as Error).message}`;
      problem.hidden = false;
    }
    await refresh();
  };

  const row = (s: ScheduleSummary) => {
    const last = s.recentRuns.at(-1);
    const next = s.nextRuns[0];
    return h(
      'tr',
      { 'data-schedule': s.scheduleId },
      h('td', { 'data-label': 'Schedule' }, s.scheduleId),
      h(
        'td',
        { 'data-label': 'State', title: s.note ?? '' },
        h(
          'span',
          { class: `status status-${s.paused ? 'stopped' : 'running'}` },
          s.paused ? 'paused' : 'active',
        ),
      ),
      h('td', { 'data-label': 'Fires' }, s.timing),
      h('td', { 'data-label': 'Next' }, next ? timeEl(next) : ''),
      h(
        'td',
        { 'data-label': 'Last run' },
        last ? h('a', { href: `/runs/${encodeURIComponent(last.workflowId)}` }, last.workflowId) : '',
      ),
      h('td', { 'data-label': 'Task', class: 'task' }, s.task ?? ''),
      h(
        'td',
        { 'data-label': 'Actions', class: 'actions' },
        h(
          'button',
          {
            type: 'button',
            class: 'toggle',
            onclick: () => void act(s.scheduleId, s.paused ? 'unpause' : 'pause'),
          },
          s.paused ? 'Unpause' : 'Pause',
        ),
        h(
          'button',
          { type: 'button', class: 'trigger', onclick: () => void act(s.scheduleId, 'trigger') },
          'Run now',
        ),
      ),
    );
  };

  const refresh = async () => {
    try {
      const { schedules } = await api<{ schedules: ScheduleSummary[] }>('GET', '/api/schedules');
      body.replaceChildren(...schedules.map(row));
      element.hidden = schedules.length === 0;
    } catch (err) {
      problem.textContent = `Could not list schedules: ${(err as Error).message}`;
      problem.hidden = false;
    }
  };
  return { element, refresh };
}
