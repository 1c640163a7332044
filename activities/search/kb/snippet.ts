/**
 * Snippets: the passage of a chunk that best matches a query, with the matched words marked, so a
 * person sees at a glance why a result was chosen.
 */
import { analyze } from './analyze';

/** A snippet: the passage and the character ranges (in `text`) of the words that matched. */
export interface Snippet {
  text: string;
  /** `[start, end)` offsets into `text`, sorted, not overlapping. */
  marks: [number, number][];
}

/** Default snippet length in characters. */
export const SNIPPET_CHARS = 240;

/**
 * The window of about `size` characters of `text` whose matched terms carry the most weight (each
 * distinct term counted once, by its IDF, so a window with several different query words beats one
 * that repeats a single word), widened to word boundaries and marked.
 */
export function bestSnippet(
  text: string,
  idf: ReadonlyMap<string, number>,
  size: number = SNIPPET_CHARS,
): Snippet {
  const flat = text.replace(/\s+/g, ' ').trim();
  const hits = analyze(flat).filter((t) => idf.has(t.term));
  if (flat.length <= size) return { text: flat, marks: merge(hits.map((h) => [h.start, h.end])) };

  let bestStart = 0;
  let bestScore = -1;
  let lo = 0;
  const counts = new Map<string, number>();
  let mass = 0;
  for (let hi = 0; hi < hits.length; hi++) {
    const h = hits[hi]!;
    const n = counts.get(h.term) ?? 0;
    if (n === 0) mass += idf.get(h.term) ?? 0;
    counts.set(h.term, n + 1);
    while (h.end - hits[lo]!.start > size) {
      const old = hits[lo++]!;
      const left = (counts.get(old.term) ?? 1) - 1;
      counts.set(old.term, left);
      if (left === 0) mass -= idf.get(old.term) ?? 0;
    }
    // Ties go to the window with more matches, then the earlier one.
    const score = mass + (hi - lo + 1) * 1e-3;
    if (score > bestScore + 1e-9) {
      bestScore = score;
      // Centre the matched stretch in the window.
      const span = h.end - hits[lo]!.start;
      bestStart = Math.max(0, hits[lo]!.start - Math.floor((size - span) / 2));
    }
  }
  let start = Math.min(bestStart, Math.max(0, flat.length - size));
  let end = Math.min(flat.length, start + size);
  // Widen to word boundaries, so the snippet neither starts nor ends mid-word.
  while (start > 0 && /\S/.test(flat[start - 1]!) && bestStart - start < 20) start -= 1;
  while (end < flat.length && /\S/.test(flat[end]!) && end - start < size + 20) end += 1;
  const prefix = start > 0 ? '…' : '';
  const suffix = end < flat.length ? '…' : '';
  const body = flat.slice(start, end).trim();
  const lead = flat.slice(start, end).length - flat.slice(start, end).trimStart().length;
  const shift = prefix.length - start - lead;
  const marks = hits
    .filter((h) => h.start >= start + lead && h.end <= start + lead + body.length)
    .map((h): [number, number] => [h.start + shift, h.end + shift]);
  return { text: prefix + body + suffix, marks: merge(marks) };
}

/** Joins overlapping or touching ranges (overlapping CJK bigrams become one marked word). */
function merge(ranges: [number, number][]): [number, number][] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const r of sorted) {
    const last = out.at(-1);
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else out.push([r[0], r[1]]);
  }
  return out;
}

/** The snippet with its marks wrapped in `open`/`close` (e.g. `**` for Markdown, ANSI bold for terminals). */
export function markSnippet(s: Snippet, open: string, close: string = open): string {
  let out = '';
  let at = 0;
  for (const [a, b] of s.marks) {
    out += s.text.slice(at, a) + open + s.text.slice(a, b) + close;
    at = b;
  }
  return out + s.text.slice(at);
}
