import { formatBytes } from '../../shared/temporal-limits';
import type { Citation } from '../../shared/citations';
import { isTextRef } from '../../shared/content';
import type { ConversationMessage, ToolMessageContent } from '../../shared/conversation';
import { formatAnswer, hasCitationMarks, renderCitations } from '../../shared/render-citations';
import type { TimelineEntry } from '../../client/debug/timeline';

/** Output formats of `transcript`. */
export type TranscriptFormat = 'text' | 'markdown' | 'json';

function clip(value: unknown, limit: number): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const one = (text ?? '').replace(/\s+/g, ' ').trim();
  return one.length > limit ? `${one.slice(0, limit)}… (+${one.length - limit} chars)` : one;
}

function ms(d: number | null): string {
  return d === null ? 'unfinished' : d >= 1000 ? `${(d / 1000).toFixed(1)} s` : `${d} ms`;
}

/** A message's text; content only referenced (not resolved from a content store) shows its preview and size. */
function contentText(content: ToolMessageContent): string {
  if (typeof content === 'string') return content;
  if (isTextRef(content)) return `${content.preview} [${formatBytes(content.bytes)} in the content store]`;
  return `${content.preview} [search results in the content store]`;
}

function describeMessage(m: ConversationMessage, limit: number): string {
  switch (m.role) {
    case 'tool':
      return `tool result ${m.name} (${m.toolCallId})${m.isError ? ' [error]' : ''}: ${clip(contentText(m.content), limit)}`;
    case 'assistant':
      return `assistant: ${clip(m.content ?? '', limit)}`;
    default:
      return `${m.role}: ${clip(contentText(m.content), limit)}`;
  }
}

/**
 * An answer with its citation marks numbered and its sources listed under it (one line each), when
 * the run's citations are known; else the answer as it is.
 */
function answerLines(
  label: string,
  answer: string,
  limit: number,
  citations?: readonly Citation[],
): string[] {
  if (!citations || !hasCitationMarks(answer)) return [`${label}: ${clip(answer, limit)}`];
  const rendered = renderCitations(answer, citations);
  const [text = '', ...sources] = formatAnswer({ ...rendered, text: clip(rendered.text, limit) }).split('\n');
  return [
    `${label}: ${text}`,
    ...sources.filter((l) => l.trim()).map((l) => l.trim().replace(/^Sources:$/, 'sources:')),
  ];
}

/** The lines of one entry; the first is the headline, the rest are details. */
function lines(e: TimelineEntry, limit: number, citations?: readonly Citation[]): string[] {
  const time = new Date(e.at).toISOString().slice(11, 23);
  switch (e.kind) {
    case 'start': {
      const out = [`${time} start ${e.workflowType} ${e.workflowId} (run ${e.runId})`];
      if (e.task !== undefined)
        out.push(`task: ${clip(e.task, limit)}`, `model: ${e.model}; tools: ${(e.tools ?? []).join(', ')}`);
      if (e.forkedFrom)
        out.push(
          `forked from ${e.forkedFrom.workflowId} (run ${e.forkedFrom.runId}) after step ${e.forkedFrom.step}`,
        );
      if (e.continuedFromRunId) out.push(`continued from run ${e.continuedFromRunId}`);
      if (e.resumedAtStep !== undefined) out.push(`resumes at step ${e.resumedAtStep}`);
      return out;
    }
    case 'model': {
      const out = [
        `${time} step ${e.step} model turn (${ms(e.durationMs)}${e.attempts > 1 ? `, attempt ${e.attempts}` : ''}${e.usage ? `, ${e.usage.inputTokens}+${e.usage.outputTokens} tokens` : ''})`,
      ];
      for (const m of e.newMessages) out.push(`saw ${describeMessage(m, limit)}`);
      if (e.failure) out.push(`failed: ${clip(e.failure, limit)}`);
      if (e.answer) out.push(...answerLines('answered', e.answer, limit, citations));
      for (const c of e.toolCalls) out.push(`calls ${c.name} (${c.id}) ${clip(c.arguments, limit)}`);
      return out;
    }
    case 'tool': {
      const head = `${time} step ${e.step} tool ${e.tool} (${e.toolCallId}) ${ms(e.durationMs)}${e.attempts > 1 ? `, attempt ${e.attempts}` : ''}`;
      const out = [head, `args: ${clip(e.args, limit)}`];
      if (e.failure) out.push(`failed: ${clip(e.failure, limit)}`);
      else if (e.result !== null) {
        const stored = e.resultRef ? ` [${formatBytes(e.resultBytes ?? 0)} in the content store]` : '';
        out.push(`${e.isError ? 'error' : 'result'}: ${clip(e.result, limit)}${stored}`);
      }
      return out;
    }
    case 'notification':
      return [
        `${time} notification [${e.type}, priority ${typeof e.priority === 'number' || typeof e.priority === 'string' ? e.priority : 'default'}]${e.id ? ` ${e.id}` : ''}: ${clip(e.message, limit)}`,
      ];
    case 'signal':
      return [`${time} signal ${e.name} ${clip(e.payload, limit)}`];
    case 'update':
      return [`${time} update ${e.name} ${clip(e.payload, limit)} → ${clip(e.outcome, limit)}`];
    case 'timer': {
      const what = clip(e.purpose ?? 'timer', limit);
      if (e.fired) return [`${time} ${what} fired after ${ms(e.durationMs)}`];
      if (e.durationMs === null) return [`${time} ${what} started`];
      const by = e.cancelledBy ? `: ${clip(e.cancelledBy, limit)}` : '';
      return [`${time} ${what} cancelled after ${ms(e.durationMs)}${by}`];
    }
    case 'end': {
      const out = [`${time} ${e.status.replace(/_/g, ' ')}`];
      if (e.stopReason) out.push(`stop reason: ${e.stopReason}`);
      if (e.answer) out.push(...answerLines('answer', e.answer, limit * 4, citations));
      if (e.output !== undefined) out.push(`output: ${clip(e.output, limit * 4)}`);
      if (e.failure) out.push(`failure: ${clip(e.failure, limit)}`);
      if (e.newRunId) out.push(`next run: ${e.newRunId}`);
      return out;
    }
  }
}

/**
 * Renders a timeline as terminal text, Markdown, or JSON. `limit` caps each text field. With the
 * run's `citations`, answers show numbered references and their sources.
 */
export function renderTimeline(
  entries: TimelineEntry[],
  format: TranscriptFormat,
  limit = 300,
  citations?: readonly Citation[],
): string {
  if (format === 'json') return JSON.stringify(entries, null, 2);
  if (format === 'markdown') {
    return entries
      .map((e) => {
        const [head, ...rest] = lines(e, limit, citations);
        return [`- **${head}**`, ...rest.map((l) => `  - ${l.replace(/([*_`])/g, '\\$1')}`)].join('\n');
      })
      .join('\n');
  }
  return entries
    .map((e) => {
      const [head, ...rest] = lines(e, limit, citations);
      return [head, ...rest.map((l) => `    ${l}`)].join('\n');
    })
    .join('\n');
}
