/**
 * The safe character set of the identifiers people type and other tools show: run (workflow) ids
 * and inbox users. Control characters (NUL, ESC) and bidirectional marks would otherwise reach
 * terminals, logs and the `temporal` CLI raw, where they hide or rewrite what is shown.
 *
 * Pure and deterministic, so workflow code, activities and clients all import it.
 */
import { SIZE_BUDGETS } from './temporal-limits';

/**
 * A run id: an ASCII letter or digit, then ASCII letters, digits and `. _ - : @ + =`, at most
 * {@link SIZE_BUDGETS.runIdBytes} characters (`agent-<uuid>`, `inbox:alice`, `nightly.report-2026-11-30`).
 */
export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@+=-]*$/;

/** An inbox user: an ASCII letter or digit, then ASCII letters, digits and `. _ - @ +`. */
export const INBOX_USER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@+-]*$/;

/** The characters of {@link RUN_ID_PATTERN}, as users read them in messages. */
export const RUN_ID_CHARSET = 'ASCII letters, digits and . _ - : @ + = (starting with a letter or digit)';

/** The characters of {@link INBOX_USER_PATTERN}, as users read them in messages. */
export const INBOX_USER_CHARSET = 'ASCII letters, digits and . _ - @ + (starting with a letter or digit)';

/**
 * Why `id` is not a usable run id, or null when it is. The message shows the id only through
 * {@link printable}, so it never carries a raw control character.
 */
export function runIdProblem(id: string): string | null {
  if (id.length === 0) return 'a run id must not be empty';
  if (id.length > SIZE_BUDGETS.runIdBytes)
    return `a run id must be at most ${SIZE_BUDGETS.runIdBytes} characters (got ${id.length})`;
  if (!RUN_ID_PATTERN.test(id)) return `run id "${printable(id)}" may contain only ${RUN_ID_CHARSET}`;
  return null;
}

/**
 * Why `id` is not a usable schedule id, or null when it is: a run id's characters (its runs are
 * named after it), at most {@link SIZE_BUDGETS.scheduleIdBytes} characters.
 */
export function scheduleIdProblem(id: string): string | null {
  if (id.length === 0) return 'a schedule id must not be empty';
  if (id.length > SIZE_BUDGETS.scheduleIdBytes)
    return `a schedule id must be at most ${SIZE_BUDGETS.scheduleIdBytes} characters (got ${id.length})`;
  if (!RUN_ID_PATTERN.test(id)) return `schedule id "${printable(id)}" may contain only ${RUN_ID_CHARSET}`;
  return null;
}

/** Why `user` is not a usable inbox user, or null when it is. */
export function inboxUserProblem(user: string): string | null {
  if (user.length === 0) return 'an inbox user must not be empty (e.g. inbox:alice)';
  if (user.length > SIZE_BUDGETS.inboxUserBytes)
    return `an inbox user must be at most ${SIZE_BUDGETS.inboxUserBytes} characters (got ${user.length})`;
  if (!INBOX_USER_PATTERN.test(user))
    return `inbox user "${printable(user)}" may contain only ${INBOX_USER_CHARSET}`;
  return null;
}

/**
 * C0/C1 control characters, DEL, and the Unicode format characters that reorder or hide text
 * (bidi embeddings, overrides and isolates, zero-width characters, line/paragraph separators).
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

/**
 * `text` with every control or bidi character written as a visible escape (`\u001b`), so a
 * terminal shows it instead of obeying it. Newlines and tabs are kept only when `keepLines` is set.
 */
export function printable(text: string, keepLines = false): string {
  return text.replace(UNPRINTABLE, (c) => {
    if (keepLines && (c === '\n' || c === '\t')) return c;
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/** What every door says of a workflow id the namespace does not hold: one wording. */
export function noSuchRunMessage(workflowId: string): string {
  return `No run with id "${workflowId}" in this namespace`;
}
