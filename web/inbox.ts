/**
 * The inbox page: a user's notifications, newest first, mirrored live from the API's event stream.
 * The mirror applies snapshots, diffs and resets exactly as the stream describes them; after a
 * dropped connection it reconnects with `since`/`guid`, so it catches up on what it missed (a
 * continue-as-new changes nothing it can see; a clear arrives as a reset).
 */
import { noticeLinks, noticeMessage, readApprovalNotice } from './approval-notice';
import { appRoot, h, localizeTimes, timeEl } from './dom';
import { api } from './http';
import { createRunFilter } from './run-filter';
import { sanitizedFragment } from './sanitize';
import { follow } from './sse';
import { TYPE_ICONS, showToast } from './toasts';
import type { Changes, ListPosition, Notification, Resume, Snapshot } from './types';
import { NOTIFICATION_TYPES, NotificationPriority } from './types';

const LAST_USER_KEY = 'durable-agent.inbox-user';

/** The list as the page holds it. */
interface Mirror extends ListPosition {
  list: Notification[];
  loaded: boolean;
}

/** Starts the inbox page (or the user picker on `/`). */
export function startInbox(user: string | undefined): void {
  const root = appRoot();
  if (!user) return userPicker(root);
  localStorage.setItem(LAST_USER_KEY, user);
  const target = `inbox:${user}`;
  const mirror: Mirror = { guid: '', update: 0, count: 0, evicted: 0, list: [], loaded: false };
  const filters = { unread: false, type: '', group: '' };

  const status = h('p', { class: 'stream-state', role: 'status' }, 'Connecting…');
  const badge = h('span', { id: 'unread-count', class: 'badge', 'aria-live': 'polite' }, '0');
  const markAll = h(
    'button',
    { type: 'button', id: 'mark-all-read', onclick: () => void markRead({ all: true }) },
    'Mark all read',
  );
  const unreadBox = h('input', { type: 'checkbox', id: 'filter-unread' });
  const typeSelect = h(
    'select',
    { id: 'filter-type' },
    h('option', { value: '' }, 'All types'),
    ...NOTIFICATION_TYPES.map((t) => h('option', { value: t }, t)),
  );
  const groupSelect = h('select', { id: 'filter-group' }, h('option', { value: '' }, 'All groups'));
  const listEl = h('ol', {
    id: 'notifications',
    class: 'notifications',
    'aria-label': 'Notifications, newest first',
  });
  const empty = h('p', { class: 'muted empty' }, 'No notifications.');
  const problem = h('p', { class: 'error', role: 'alert', hidden: true });
  const byRun = createRunFilter(user, () => render());

  unreadBox.addEventListener('change', () => {
    filters.unread = unreadBox.checked;
    render();
  });
  typeSelect.addEventListener('change', () => {
    filters.type = typeSelect.value;
    render();
  });
  groupSelect.addEventListener('change', () => {
    filters.group = groupSelect.value;
    render();
  });

  root.append(
    h('div', { class: 'toolbar' }, h('span', { class: 'unread' }, badge, ' unread'), markAll, status),
    h(
      'fieldset',
      { class: 'filters' },
      h('legend', {}, 'Filter'),
      h('label', { for: 'filter-unread' }, unreadBox, ' Unread only'),
      h('label', { for: 'filter-type' }, 'Type ', typeSelect),
      h('label', { for: 'filter-group' }, 'Group ', groupSelect),
      byRun.control,
    ),
    byRun.hint,
    problem,
    listEl,
    empty,
  );

  const items = new Map<string, { el: HTMLLIElement; key: string }>();

  async function markRead(input: { all: true } | { ids: string[] }): Promise<void> {
    problem.hidden = true;
    try {
      await api('POST', '/api/notifications/read', { target, ...input });
      for (const n of mirror.list) if ('all' in input || input.ids.includes(n.id)) n.read = true;
      render();
      // The item's button is gone: keep the keyboard where it was, on the item.
      if ('ids' in input) items.get(input.ids[0] ?? '')?.el.focus();
    } catch (err) {
      problem.textContent = `Could not mark read: ${(err as Error).message}`;
      problem.hidden = false;
    }
  }

  function itemEl(n: Notification, wasOpen: boolean): HTMLLIElement {
    const high = n.priority >= NotificationPriority.HIGH;
    const notice = readApprovalNotice(n);
    return h(
      'li',
      {
        class: `item type-${n.type}${n.read ? ' read' : ' unread'}${high ? ' high' : ''}`,
        'data-id': n.id,
        tabindex: -1,
      },
      h('span', { class: 'icon', 'aria-hidden': 'true' }, TYPE_ICONS[n.type] ?? '•'),
      h(
        'div',
        { class: 'body' },
        h(
          'div',
          { class: 'meta' },
          h('span', { class: 'type' }, n.type),
          high ? h('span', { class: 'prio' }, 'high') : null,
          n.read ? null : h('span', { class: 'dot' }, 'unread'),
          n.group ? h('span', { class: 'group' }, n.group) : null,
          timeEl(n.timestamp),
        ),
        n.title ? h('h2', { class: 'title' }, n.title) : null,
        h('p', { class: 'message' }, ...noticeMessage(n.message, notice)),
        notice ? noticeLinks(notice) : null,
        n.detail
          ? (() => {
              const details = h(
                'details',
                { open: wasOpen },
                h('summary', {}, 'Details'),
                h('div', { class: 'detail' }),
              );
              const detail = sanitizedFragment(n.detail);
              localizeTimes(detail);
              details.querySelector('.detail')?.append(detail);
              return details;
            })()
          : null,
      ),
      n.read
        ? null
        : h(
            'button',
            {
              type: 'button',
              class: 'mark-read',
              'aria-label': `Mark read: ${n.title || n.message}`,
              onclick: () => void markRead({ ids: [n.id] }),
            },
            'Mark read',
          ),
    );
  }

  function render(): void {
    const unread = mirror.list.filter((n) => !n.read).length;
    badge.textContent = String(unread);
    badge.setAttribute('aria-label', `${unread} unread`);
    document.title = `${unread > 0 ? `(${unread}) ` : ''}Inbox of ${user} · durable-agent`;
    markAll.disabled = unread === 0;

    const groups = [
      ...new Set(mirror.list.map((n) => n.group).filter((g): g is string => Boolean(g))),
    ].sort();
    const known = [...groupSelect.options].slice(1).map((o) => o.value);
    if (groups.join('\n') !== known.join('\n')) {
      groupSelect.replaceChildren(
        h('option', { value: '' }, 'All groups'),
        ...groups.map((g) => h('option', { value: g, selected: g === filters.group }, g)),
      );
    }

    const shown = mirror.list
      .filter((n) => (!filters.unread || !n.read) && (!filters.type || n.type === filters.type))
      .filter((n) => (!filters.group || n.group === filters.group) && byRun.matches(n))
      .reverse();
    const wanted: HTMLLIElement[] = [];
    const live = new Set<string>();
    for (const n of shown) {
      live.add(n.id);
      const key = `${n.timestamp}|${n.read}|${n.title}|${n.message}|${n.detail}|${n.type}|${n.priority}|${n.group}`;
      const had = items.get(n.id);
      if (had && had.key === key) {
        wanted.push(had.el);
        continue;
      }
      const el = itemEl(n, had?.el.querySelector('details')?.open ?? false);
      if (had) had.el.replaceWith(el);
      items.set(n.id, { el, key });
      wanted.push(el);
    }
    for (const [id, { el }] of items) {
      if (!live.has(id)) {
        el.remove();
        items.delete(id);
      }
    }
    // Moving a node loses its focus, so the order is only touched when it changed.
    const current = [...listEl.children];
    if (current.length !== wanted.length || current.some((el, i) => el !== wanted[i]))
      listEl.replaceChildren(...wanted);
    empty.hidden = shown.length > 0;
    empty.textContent = byRun.loading()
      ? 'Reading the run’s notifications…'
      : mirror.list.length > 0
        ? 'No notifications match the filter.'
        : 'No notifications.';
  }

  /** Applies a diff: drop evicted items from the front, then place each item at its number. */
  function apply(pos: ListPosition, dropped: number, items: readonly Notification[], toast: boolean): void {
    const before = new Map(mirror.list.map((n) => [n.id, n]));
    mirror.list.splice(0, Math.max(0, dropped));
    for (const n of items) mirror.list[n.no] = n;
    mirror.list.length = pos.count;
    mirror.list = mirror.list.filter(Boolean);
    Object.assign(mirror, { guid: pos.guid, update: pos.update, count: pos.count, evicted: pos.evicted });
    if (toast) {
      for (const n of items) {
        const old = before.get(n.id);
        if (!n.read && (!old || old.timestamp !== n.timestamp || old.message !== n.message)) showToast(n);
      }
    }
    if (items.length > 0) byRun.inboxChanged(items);
    render();
  }

  function replace(pos: ListPosition, list: readonly Notification[]): void {
    mirror.list = [...list];
    Object.assign(mirror, { guid: pos.guid, update: pos.update, count: pos.count, evicted: pos.evicted });
    mirror.loaded = true;
    byRun.inboxChanged(mirror.list);
    render();
  }

  follow({
    url: () =>
      `/api/notifications/stream?target=${encodeURIComponent(target)}` +
      (mirror.loaded ? `&since=${mirror.update}` : '') +
      (mirror.loaded && mirror.guid ? `&guid=${encodeURIComponent(mirror.guid)}` : ''),
    onEvent: (e) => {
      const data = JSON.parse(e.data) as unknown;
      if (e.event === 'snapshot') replace(data as Snapshot, (data as Snapshot).notifications);
      else if (e.event === 'reset') replace(data as Resume, (data as Resume).notifications);
      else if (e.event === 'resume') {
        const r = data as Resume;
        if (r.reset) replace(r, r.notifications);
        else apply(r, r.evicted - mirror.evicted, r.notifications, true);
      } else if (e.event === 'changes') {
        const c = data as Changes;
        apply(c, c.dropped, [...c.updated, ...c.added], true);
      } else if (e.event === 'error') {
        status.textContent = `Stream error: ${(data as { error?: string }).error ?? 'unknown'}; reconnecting…`;
      }
    },
    onState: (state, detail) => {
      status.dataset.state = state;
      status.textContent =
        state === 'live'
          ? 'Live'
          : state === 'waiting'
            ? 'No notifications yet: this inbox is created by its first notification. Waiting…'
            : `Reconnecting… (${detail ?? ''})`;
    },
    // Until the inbox exists, ask for everything after update 0: its first notifications then
    // arrive as news (with toasts), not as an old list.
    onMissing: () => replace({ guid: '', update: 0, count: 0, evicted: 0 }, []),
  });
  render();
}

function userPicker(root: HTMLElement): void {
  const last = localStorage.getItem(LAST_USER_KEY) ?? '';
  const input = h('input', {
    id: 'user',
    name: 'user',
    required: true,
    value: last,
    autocomplete: 'username',
  });
  const form = h(
    'form',
    { class: 'picker' },
    h('label', { for: 'user' }, 'Whose inbox? User name'),
    input,
    h('button', { type: 'submit' }, 'Open inbox'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const user = input.value.trim();
    if (user) location.assign(`/inbox/${encodeURIComponent(user)}`);
  });
  const known = h('nav', { class: 'inboxes', 'aria-label': 'Inboxes', hidden: true });
  root.append(form, known);
  input.focus();
  // The inboxes that exist, so a newcomer need not guess a name; the form still opens any other.
  void api<{ users: string[]; more: boolean }>('GET', '/api/inboxes')
    .then(({ users, more }) => {
      if (users.length === 0) return;
      known.append(
        h('h2', {}, 'Inboxes'),
        h('ul', {}, ...users.map((u) => h('li', {}, h('a', { href: `/inbox/${encodeURIComponent(u)}` }, u)))),
        ...(more ? [h('p', { class: 'muted' }, 'The newest are listed; type a name to open another.')] : []),
      );
      known.hidden = false;
    })
    // Without the list the form still opens any inbox: nothing is lost by not showing it.
    .catch(() => undefined);
}
