/**
 * Approval notices in the inbox and its toasts. A notice's detail marks its run and call (see
 * shared/approval-notice.ts), so the item and the toast name them, link the run page (where the
 * call is answered) and show the deadline in the viewer's local time instead of as UTC.
 */
import { APPROVAL_NOTICE_ATTRS, APPROVAL_NOTICE_CLASS, runPagePath } from '../shared/approval-notice';
import { NOTICE_KIND_ATTR, QUESTION_GROUP, questionFormPath } from '../shared/question-notice';
import { h, timeEl } from './dom';
import { sanitizedFragment } from './sanitize';
import type { Notification } from './types';

/** What a notice's marks say. */
export interface ApprovalNotice {
  run: string;
  toolCall: string;
  /** The deadline (ISO 8601), when the notice gives a valid one. */
  deadline: string | null;
  /** Whether the call still waits for a decision (or an answer). */
  waiting: boolean;
  /** A question (`ask_user`) rather than an approval: its link opens the form that answers it. */
  question: boolean;
}

/** The approval notice `n` carries, or null for any other notification. */
export function readApprovalNotice(n: Notification): ApprovalNotice | null {
  if ((n.group !== 'approvals' && n.group !== QUESTION_GROUP) || !n.detail.includes(APPROVAL_NOTICE_CLASS))
    return null;
  const el = sanitizedFragment(n.detail).querySelector(`.${APPROVAL_NOTICE_CLASS}`);
  const run = el?.getAttribute(APPROVAL_NOTICE_ATTRS.run);
  if (!el || !run) return null;
  const deadline = el.querySelector('time')?.getAttribute('datetime') ?? null;
  return {
    run,
    toolCall: el.getAttribute(APPROVAL_NOTICE_ATTRS.toolCall) ?? '',
    deadline: deadline && !Number.isNaN(Date.parse(deadline)) ? deadline : null,
    waiting: el.getAttribute(APPROVAL_NOTICE_ATTRS.state) === 'waiting',
    question: el.getAttribute(NOTICE_KIND_ATTR) === 'question',
  };
}

/** The message, its deadline (the exact timestamp the notice marks) shown in local time. */
export function noticeMessage(message: string, notice: ApprovalNotice | null): (Node | string)[] {
  const at = notice?.deadline ? message.indexOf(notice.deadline) : -1;
  if (!notice?.deadline || at < 0) return [message];
  return [message.slice(0, at), timeEl(notice.deadline), message.slice(at + notice.deadline.length)];
}

/** The line under a notice's message: its run (a link to the run page) and call. */
export function noticeLinks(notice: ApprovalNotice): HTMLElement {
  const href = runPagePath(notice.run);
  return h(
    'p',
    { class: 'notice-run' },
    'Run ',
    h('a', { href }, notice.run),
    notice.toolCall ? (notice.question ? ', question ' : ', call ') : null,
    notice.toolCall ? h('code', {}, notice.toolCall) : null,
    notice.waiting ? ' · ' : null,
    notice.waiting
      ? notice.question
        ? h(
            'a',
            { href: questionFormPath(notice.run, notice.toolCall), class: 'answer' },
            'Answer in the form',
          )
        : h('a', { href, class: 'answer' }, 'Answer on the run page')
      : null,
  );
}
