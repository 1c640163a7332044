/**
 * The notification that asks a person to approve a tool call, as every reader gets it. Its text
 * (title, message) reads the same in a terminal as in a page; its `detail` starts with an element
 * marked {@link APPROVAL_NOTICE_CLASS} whose attributes name the run, the call and the deadline, so
 * the web UI can link the run page and show the deadline in the viewer's own time zone. The
 * arguments travel as a bounded preview with secrets masked, never whole: they may be huge.
 *
 * Pure and deterministic (the workflow builds it; the browser code reads the marks), and light:
 * the web bundle imports it.
 */
import { redactedPreview } from './redact-secrets';
import type { PreviewBounds } from './redact-secrets';

/** Class of the element in an approval notice's detail that carries its machine-readable marks. */
export const APPROVAL_NOTICE_CLASS = 'approval-notice';

/** The attributes of that element. */
export const APPROVAL_NOTICE_ATTRS = Object.freeze({
  /** The run's workflow id. */
  run: 'data-run',
  /** The tool call's id. */
  toolCall: 'data-tool-call',
  /** `waiting` while the call waits for a decision, `ended` once it was decided or timed out. */
  state: 'data-state',
  /** A sub-agent's call: the workflow id of the run that started the sub-agent. */
  parentRun: 'data-parent-run',
} as const);

/**
 * Bounds of an approval notice's parts. With the longest run id (256 characters), tool call id and
 * tool name, the detail stays near 15,000 characters even when escaping makes five of every
 * character, far inside its budget (`NOTIFICATION_LIMITS.detail`, 50,000 characters;
 * `SIZE_BUDGETS.notificationDetailBytes`, 64 KB); `tests/unit/approval-notice.test.ts` checks it.
 */
export const APPROVAL_NOTICE_BOUNDS = Object.freeze({
  /** Characters of the pretty-printed arguments in the detail. */
  argsChars: 1_500,
  /** Characters of the policy's reason in the message. */
  reasonChars: 1_000,
  /** Characters of a tool name shown (MCP tool names can be long; a title has 200). */
  toolChars: 160,
  /** Characters of a tool call id shown (a notification id has 200). */
  callIdChars: 200,
} as const);

/** How much of the arguments the detail's preview reads. */
const ARGS_PREVIEW: PreviewBounds = Object.freeze({ chars: 300, items: 30, depth: 5 });

/** The path of a run's page in the web UI (`durable-agent api`). */
export function runPagePath(runId: string): string {
  return `/runs/${encodeURIComponent(runId)}`;
}

/** What an approval notice says. */
export interface ApprovalNoticeFacts {
  /** The run's workflow id. */
  run: string;
  toolCallId: string;
  tool: string;
  /** The validated arguments (previewed, masked and bounded here). */
  args: unknown;
  /** When the call is refused if nobody decides (ISO 8601, UTC). */
  deadline: string;
  /** Whether the call still waits for a decision (the detail then says how to answer). */
  waiting: boolean;
  /** When the run is a sub-agent: the run that started it, and the sub-agent's name there. */
  parent?: { run: string; agent: string };
}

/**
 * The detail of an approval notice: the marked summary (run with a link to its page, call,
 * deadline as a `<time datetime>`), the arguments' preview and, while the call waits, the ways to
 * answer it. Every value is escaped.
 */
export function approvalNoticeDetail(f: ApprovalNoticeFacts): string {
  const run = escapeHtml(f.run);
  const id = escapeHtml(cut(f.toolCallId, APPROVAL_NOTICE_BOUNDS.callIdChars));
  const deadline = escapeHtml(f.deadline);
  const marks =
    `class="${APPROVAL_NOTICE_CLASS}" ${APPROVAL_NOTICE_ATTRS.run}="${run}" ` +
    `${APPROVAL_NOTICE_ATTRS.toolCall}="${id}" ${APPROVAL_NOTICE_ATTRS.state}="${f.waiting ? 'waiting' : 'ended'}"` +
    (f.parent ? ` ${APPROVAL_NOTICE_ATTRS.parentRun}="${escapeHtml(f.parent.run)}"` : '');
  const parent = f.parent
    ? ` (sub-agent <code>${escapeHtml(cut(f.parent.agent, 64))}</code> of run <a href="${escapeHtml(runPagePath(f.parent.run))}">${escapeHtml(f.parent.run)}</a>)`
    : '';
  const head =
    `<p ${marks}>Run <a href="${escapeHtml(runPagePath(f.run))}">${run}</a>${parent}, ` +
    `${escapeHtml(cut(f.tool, APPROVAL_NOTICE_BOUNDS.toolChars))} call <code>${id}</code>, ` +
    `until <time datetime="${deadline}">${deadline}</time></p>` +
    `<pre>${escapeHtml(approvalArgsPreview(f.args))}</pre>`;
  if (!f.waiting) return head;
  return (
    head +
    `<p>Approve: <code>durable-agent approve ${run} ${id} [--args edited.json]</code></p>` +
    `<p>Reject: <code>durable-agent reject ${run} ${id} --reason "…"</code></p>` +
    `<p>HTTP: <code>POST /api/approvals/${run}/${id}</code> with {"approve": true} or {"approve": false, "reason": "…"}</p>`
  );
}

/** The arguments as indented JSON for people: secrets masked, at most `argsChars` characters. */
export function approvalArgsPreview(args: unknown): string {
  const text = JSON.stringify(redactedPreview(args, ARGS_PREVIEW), null, 2) ?? String(args);
  return cut(text, APPROVAL_NOTICE_BOUNDS.argsChars);
}

/** `text` cut to `max` characters, with `…` when it was longer. */
export function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** `text` safe inside HTML text and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
