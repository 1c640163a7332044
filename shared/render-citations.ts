/**
 * Citations for people: an answer's `[[a3]]` marks become numbered references (`[1]`, `[2]`, in
 * order of first use) with the sources listed under the answer by title and location (file path or
 * web address). Pure, with no Node built-ins, so every client (CLI, API, a web page) renders alike.
 */
import type { Citation } from './citations';

/** Output formats of {@link formatAnswer}. */
export type CitationFormat = 'text' | 'markdown';

/** One source an answer cites, numbered for people. */
export interface ResolvedCitation {
  /** The number people see: `[1]` is 1. */
  n: number;
  /** The run's index and mark, e.g. `a3` and `[[a3]]`. */
  index: string;
  reference_mark: string;
  title: string;
  /** File path for a knowledge-base chunk, web address for a page. */
  location: string;
  url: string;
  source_type: Citation['record']['source_type'];
  /** Knowledge-base file relative to the folder it was added from; null for web pages. */
  filename: string | null;
  /** The passage the model read. */
  text: string;
}

/** An answer with its marks resolved. */
export interface RenderedAnswer {
  /** The answer with `[[a3]]` replaced by `[1]`; unknown marks are kept, flagged `[a9?]`. */
  text: string;
  /** The cited sources, by number. */
  citations: ResolvedCitation[];
  /** Marks that name no source of the run (a model inventing `[[z9]]`). */
  unknown: string[];
}

/** A citation mark in a model's text, `[[a3]]`; the group is the index. */
export const CITATION_MARK = /\[\[\s*([a-z]\d+)\s*\]\]/g;

/** Where a source is: the file path of a `file://` URL (without the `#chunk-N` fragment), else the URL. */
export function citationLocation(record: Citation['record']): string {
  if (record.source_type === 'file' && /^file:\/\//i.test(record.url)) {
    const withoutFragment = record.url.replace(/#.*$/, '').replace(/^file:\/\/(localhost)?/i, '');
    try {
      return decodeURIComponent(withoutFragment);
    } catch {
      return withoutFragment;
    }
  }
  return record.url || record.filename || record.title;
}

/**
 * Resolves the marks of `answer` against the run's citations (what the `citations` query returns).
 * Each source gets one number, at its first use; a mark used again gets the same number.
 */
export function renderCitations(answer: string, citations: readonly Citation[]): RenderedAnswer {
  const byIndex = new Map(citations.map((c) => [c.index, c]));
  const numbered = new Map<string, ResolvedCitation>();
  const unknown: string[] = [];
  const text = answer.replace(CITATION_MARK, (_m, index: string) => {
    let ref = numbered.get(index);
    if (!ref) {
      const c = byIndex.get(index);
      if (!c) {
        if (!unknown.includes(index)) unknown.push(index);
        return `[${index}?]`;
      }
      ref = {
        n: numbered.size + 1,
        index: c.index,
        reference_mark: c.reference_mark,
        title: c.record.title,
        location: citationLocation(c.record),
        url: c.record.url,
        source_type: c.record.source_type,
        filename: c.record.filename,
        text: c.record.text,
      };
      numbered.set(index, ref);
    }
    return `[${ref.n}]`;
  });
  return { text, citations: [...numbered.values()], unknown };
}

function escapeMarkdown(s: string): string {
  return s.replace(/([\\`*_[\]<>])/g, '\\$1');
}

/**
 * The rendered answer followed by its sources. Text:
 *
 *     … as the guide says [1].
 *
 *     Sources:
 *       [1] Growing Tomatoes › Blossom end rot — /home/me/kb/garden/tomatoes.md
 *
 * Markdown lists the sources as links. An answer without citations is returned unchanged.
 */
export function formatAnswer(rendered: RenderedAnswer, format: CitationFormat = 'text'): string {
  const lines: string[] = [];
  if (format === 'markdown') {
    for (const c of rendered.citations) {
      const where = c.source_type === 'file' ? ` — \`${c.location.replace(/`/g, "'")}\`` : '';
      lines.push(`${c.n}. [${escapeMarkdown(c.title)}](<${c.url}>)${where}`);
    }
    if (rendered.unknown.length) lines.push(`\n_Unknown citation marks: ${rendered.unknown.join(', ')}_`);
    return lines.length ? `${rendered.text}\n\n**Sources**\n\n${lines.join('\n')}` : rendered.text;
  }
  for (const c of rendered.citations) lines.push(`  [${c.n}] ${c.title} — ${c.location}`);
  if (rendered.unknown.length) lines.push(`  (unknown citation marks: ${rendered.unknown.join(', ')})`);
  return lines.length ? `${rendered.text}\n\nSources:\n${lines.join('\n')}` : rendered.text;
}

/** Whether a text holds citation marks, so a client asks for the run's citations only when needed. */
export function hasCitationMarks(text: string): boolean {
  return new RegExp(CITATION_MARK.source).test(text);
}
