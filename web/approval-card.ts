/**
 * A call waiting for approval, as a card: its arguments and why the policy asks, with Approve,
 * Edit (approve with edited JSON arguments; the run checks them against the tool's schema) and
 * Reject (with a reason the model reads). The run's own refusal is shown as it words it.
 */
import { h, json, timeEl } from './dom';
import { ApiError, api } from './http';
import type { PendingApproval } from './types';

/** The card for `a`; `onDecided` runs once the run has taken a decision. */
export function approvalCard(runId: string, a: PendingApproval, onDecided: () => void): HTMLElement {
  const base = `approval-${a.toolCallId.replace(/[^\w-]/g, '_')}`;
  const errorEl = h('p', { class: 'error', role: 'alert', hidden: true });
  const argsArea = h('textarea', { id: `${base}-args`, rows: 6, spellcheck: false });
  argsArea.value = json(a.args);
  const reasonInput = h('input', { id: `${base}-reason`, type: 'text', maxlength: 2000 });
  const editBox = h(
    'div',
    { class: 'edit', hidden: true },
    h('label', { for: argsArea.id }, 'Arguments (JSON)'),
    argsArea,
  );
  const rejectBox = h(
    'div',
    { class: 'reject', hidden: true },
    h('label', { for: reasonInput.id }, 'Reason (shown to the model)'),
    reasonInput,
  );
  const decide = async (body: { approve: boolean; reason?: string; args?: unknown }) => {
    errorEl.hidden = true;
    try {
      await api(
        'POST',
        `/api/approvals/${encodeURIComponent(runId)}/${encodeURIComponent(a.toolCallId)}`,
        body,
      );
      card.classList.add('decided');
      card.querySelectorAll('button').forEach((b) => (b.disabled = true));
      onDecided();
    } catch (err) {
      errorEl.textContent =
        err instanceof ApiError ? err.message : `Could not send: ${(err as Error).message}`;
      errorEl.hidden = false;
    }
  };
  const approveBtn = h('button', { type: 'button', class: 'approve' }, 'Approve');
  const editBtn = h('button', { type: 'button', class: 'edit-toggle', 'aria-expanded': 'false' }, 'Edit');
  const rejectBtn = h('button', { type: 'button', class: 'reject-btn' }, 'Reject');
  approveBtn.addEventListener('click', () => {
    if (editBox.hidden) return void decide({ approve: true });
    let args: unknown;
    try {
      args = JSON.parse(argsArea.value);
    } catch (err) {
      errorEl.textContent = `The arguments are not JSON: ${(err as Error).message}`;
      errorEl.hidden = false;
      return argsArea.focus();
    }
    void decide({ approve: true, args });
  });
  editBtn.addEventListener('click', () => {
    editBox.hidden = !editBox.hidden;
    editBtn.setAttribute('aria-expanded', String(!editBox.hidden));
    approveBtn.textContent = editBox.hidden ? 'Approve' : 'Approve with these arguments';
    if (!editBox.hidden) argsArea.focus();
  });
  rejectBtn.addEventListener('click', () => {
    if (rejectBox.hidden) {
      rejectBox.hidden = false;
      rejectBtn.textContent = 'Send rejection';
      return reasonInput.focus();
    }
    if (!reasonInput.value.trim()) {
      errorEl.textContent = 'A rejection needs a reason (shown to the model).';
      errorEl.hidden = false;
      return reasonInput.focus();
    }
    void decide({ approve: false, reason: reasonInput.value.trim() });
  });
  const card = h(
    'article',
    { class: 'approval', 'data-tool-call': a.toolCallId, 'aria-labelledby': `${base}-h` },
    h('h3', { id: `${base}-h` }, `${a.tool} `, h('code', {}, a.toolCallId)),
    h('p', {}, a.summary),
    h('p', { class: 'muted' }, `${a.reason} · until `, timeEl(a.deadline)),
    h('pre', { class: 'args' }, json(a.args)),
    editBox,
    rejectBox,
    h('div', { class: 'actions' }, approveBtn, editBtn, rejectBtn),
    errorEl,
  );
  return card;
}
