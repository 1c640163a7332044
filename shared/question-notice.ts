/**
 * The notification that asks the run's user a question (`ask_user`), as every reader gets it. It is
 * marked like an approval notice (shared/approval-notice.ts: the same class and attributes, plus
 * `data-kind="question"`), so the inbox and its toasts name the run and the call and link the form
 * that answers it: the run page at `#question-<call id>`. Every value is escaped; an answer shown
 * back is text, never markup. Pure and deterministic (the workflow builds it) and light (the web
 * bundle imports it).
 */
import {
  APPROVAL_NOTICE_ATTRS,
  APPROVAL_NOTICE_CLASS,
  cut,
  escapeHtml,
  runPagePath,
} from './approval-notice';

/** Group of question notifications. */
export const QUESTION_GROUP = 'questions';

/** The attribute that tells a question notice from an approval notice. */
export const NOTICE_KIND_ATTR = 'data-kind';

/** Bounds of a question notice's parts (the detail stays far inside its 50,000 characters). */
export const QUESTION_NOTICE_BOUNDS = Object.freeze({
  /** Characters of the question in a title (a title has 200). */
  titleChars: 120,
  /** Characters of the question in the message and the detail. */
  questionChars: 4000,
  /** Characters of an answer shown back. */
  answerChars: 1000,
  /** Characters of a tool call id shown (a notification id has 200). */
  callIdChars: 200,
} as const);

/** The fragment of a run page that opens the form answering a call. */
export function questionAnchor(toolCallId: string): string {
  return `question-${toolCallId.replace(/[^\w-]/g, '_')}`;
}

/** Where the form answering a call is: its run page, at the call's form. */
export function questionFormPath(runId: string, toolCallId: string): string {
  return `${runPagePath(runId)}#${questionAnchor(toolCallId)}`;
}

/** What a question notice says. */
export interface QuestionNoticeFacts {
  run: string;
  toolCallId: string;
  question: string;
  /** When the question stops waiting (ISO 8601, UTC). */
  deadline: string;
  /** Whether it still waits (the detail then says how to answer). */
  waiting: boolean;
  /** How it ended, in words, once it did (answered by whom and with what, or timed out). */
  outcome?: string;
  /** When the run is a sub-agent: the run that started it, and the sub-agent's name there. */
  parent?: { run: string; agent: string };
}

/** The detail of a question notice: the marked summary, the question, and how to answer or how it ended. */
export function questionNoticeDetail(f: QuestionNoticeFacts): string {
  const run = escapeHtml(f.run);
  const id = escapeHtml(cut(f.toolCallId, QUESTION_NOTICE_BOUNDS.callIdChars));
  const deadline = escapeHtml(f.deadline);
  const marks =
    `class="${APPROVAL_NOTICE_CLASS}" ${NOTICE_KIND_ATTR}="question" ${APPROVAL_NOTICE_ATTRS.run}="${run}" ` +
    `${APPROVAL_NOTICE_ATTRS.toolCall}="${id}" ${APPROVAL_NOTICE_ATTRS.state}="${f.waiting ? 'waiting' : 'ended'}"` +
    (f.parent ? ` ${APPROVAL_NOTICE_ATTRS.parentRun}="${escapeHtml(f.parent.run)}"` : '');
  const parent = f.parent
    ? ` (sub-agent <code>${escapeHtml(cut(f.parent.agent, 64))}</code> of run <a href="${escapeHtml(runPagePath(f.parent.run))}">${escapeHtml(f.parent.run)}</a>)`
    : '';
  const head =
    `<p ${marks}>Run <a href="${escapeHtml(runPagePath(f.run))}">${run}</a>${parent}, ` +
    `question <code>${id}</code>, until <time datetime="${deadline}">${deadline}</time></p>` +
    `<blockquote>${escapeHtml(cut(f.question, QUESTION_NOTICE_BOUNDS.questionChars))}</blockquote>`;
  if (!f.waiting) return `${head}<p>${escapeHtml(cut(f.outcome ?? 'No longer waiting.', 2000))}</p>`;
  return (
    head +
    `<p><a href="${escapeHtml(questionFormPath(f.run, f.toolCallId))}">Answer in the form</a></p>` +
    `<p>Terminal: <code>durable-agent answer ${run} ${id} --json '…'</code></p>` +
    `<p>HTTP: <code>POST /api/questions/${run}/${id}</code> with {"answer": …}</p>`
  );
}

/** An answer shown back to people: one line, bounded. */
export function answerPreview(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
  return cut(text.replace(/\s+/g, ' '), QUESTION_NOTICE_BOUNDS.answerChars);
}
