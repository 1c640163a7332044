/**
 * Toasts for new notifications: icon and colour by type, gone after the notification's display
 * time, except HIGH priority ones, which stay until dismissed. A progress notification updated
 * again replaces its own toast. The container is an aria-live region; HIGH ones are alerts.
 */
import { noticeLinks, noticeMessage, readApprovalNotice } from './approval-notice';
import { h } from './dom';
import type { Notification } from './types';
import { NotificationPriority } from './types';

/** A symbol per type; the type is also said in words for screen readers. */
export const TYPE_ICONS: Record<string, string> = {
  info: 'ℹ',
  success: '✓',
  warning: '⚠',
  error: '✖',
  progress: '⟳',
};

/** At most this many toasts at once; the oldest leaves first. */
const MAX_TOASTS = 5;

const timers = new Map<string, number>();

function container(): HTMLElement {
  const el = document.getElementById('toasts');
  if (!el) throw new Error('The page has no #toasts region');
  return el;
}

function dismiss(id: string): void {
  const t = container().querySelector<HTMLElement>(`[data-toast-id="${CSS.escape(id)}"]`);
  t?.remove();
  const timer = timers.get(id);
  if (timer !== undefined) clearTimeout(timer);
  timers.delete(id);
}

/** Shows (or replaces) the toast of `n`. */
export function showToast(n: Notification): void {
  const high = n.priority >= NotificationPriority.HIGH;
  const notice = readApprovalNotice(n);
  const toast = h(
    'div',
    {
      class: `toast type-${n.type}${high ? ' high' : ''}`,
      'data-toast-id': n.id,
      role: high ? 'alert' : 'status',
    },
    h('span', { class: 'icon', 'aria-hidden': 'true' }, TYPE_ICONS[n.type] ?? '•'),
    h(
      'div',
      { class: 'toast-text' },
      h('span', { class: 'sr-only' }, `${n.type}${high ? ', high priority' : ''}: `),
      n.title ? h('strong', {}, n.title) : null,
      h('span', { class: 'toast-message' }, ...noticeMessage(n.message, notice)),
      notice ? noticeLinks(notice) : null,
    ),
    h(
      'button',
      {
        type: 'button',
        class: 'close',
        'aria-label': `Dismiss: ${n.title || n.message}`,
        onclick: () => dismiss(n.id),
      },
      '×',
    ),
  );
  const box = container();
  const old = box.querySelector(`[data-toast-id="${CSS.escape(n.id)}"]`);
  const oldTimer = timers.get(n.id);
  if (oldTimer !== undefined) clearTimeout(oldTimer);
  if (old) old.replaceWith(toast);
  else box.append(toast);
  while (box.children.length > MAX_TOASTS) {
    const first = box.firstElementChild as HTMLElement;
    dismiss(first.dataset.toastId ?? '');
    if (first.isConnected) first.remove();
  }
  if (high) return;
  const seconds = n.display_time > 0 ? n.display_time : 3;
  const start = () =>
    timers.set(
      n.id,
      window.setTimeout(() => dismiss(n.id), seconds * 1000),
    );
  // A toast being read (pointer over it) or reached by keyboard stays until it is left.
  const hold = () => window.clearTimeout(timers.get(n.id));
  toast.addEventListener('mouseenter', hold);
  toast.addEventListener('focusin', hold);
  toast.addEventListener('mouseleave', start);
  toast.addEventListener('focusout', start);
  start();
}
