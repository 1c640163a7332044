/**
 * Cutting a document's sections into chunks of a bounded size: paragraphs packed together, long
 * paragraphs split at sentence ends, and short sections kept with the next one.
 */

/** A section this short is merged with the next one rather than standing as a chunk of its own. */
const SHORT_SECTION_CHARS = 200;

/** One passage of a document. */
export interface Chunk {
  /** Position in the document, from 0. */
  no: number;
  /** The section heading path, e.g. `Feeding schedule`; empty before the first heading. */
  heading: string;
  text: string;
}

/** A run of text under one heading, before it is cut into chunks. */
export interface Section {
  heading: string;
  body: string;
}

/**
 * Cuts sections into chunks. A short section (a one-line "Installation: npm i x") is merged with
 * the sections after it, its heading written into the text, up to the chunk size: a chunk that is
 * little more than its heading would otherwise win every query that names the heading.
 */
export function packSections(sections: readonly Section[], max: number): Chunk[] {
  const chunks: Chunk[] = [];
  let pending: Section | undefined;
  const inline = (s: Section, text: string) => (s.heading ? `${s.heading}\n\n${text}` : text);
  for (const s of sections) {
    const pieces = packParagraphs(s.body, max).map((text) => ({ heading: s.heading, body: text }));
    const first = pieces[0];
    if (pending && first) {
      // The chunk keeps the heading it starts under; the later heading is written into its text.
      const merged = { heading: pending.heading, body: `${pending.body}\n\n${inline(s, first.body)}` };
      if (merged.body.length <= max) pieces[0] = merged;
      else chunks.push({ no: chunks.length, heading: pending.heading, text: pending.body });
      pending = undefined;
    }
    const last = pieces.at(-1);
    if (last && pieces.length === 1 && last.body.length < SHORT_SECTION_CHARS) {
      pending = last;
      continue;
    }
    for (const p of pieces) chunks.push({ no: chunks.length, heading: p.heading, text: p.body });
  }
  if (pending) chunks.push({ no: chunks.length, heading: pending.heading, text: pending.body });
  return chunks;
}

/**
 * Packs paragraphs into chunks of at most `max` characters; a paragraph longer than that is split
 * at sentence ends so no chunk starts mid-sentence.
 */
function packParagraphs(body: string, max: number): string[] {
  const pieces: string[] = [];
  for (const para of body.split(/\n\s*\n/)) {
    const p = para
      .replace(/[ \t]*\n[ \t]*/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    if (!p) continue;
    if (p.length <= max) pieces.push(p);
    else pieces.push(...splitLong(p, max));
  }
  const chunks: string[] = [];
  let current = '';
  for (const p of pieces) {
    if (current && current.length + 2 + p.length > max) {
      chunks.push(current);
      current = p;
    } else {
      current = current ? `${current}\n\n${p}` : p;
    }
  }
  if (current) chunks.push(current);
  return chunks;
}

function splitLong(p: string, max: number): string[] {
  const sentences = p.match(/[^.!?]+[.!?]+["')\]]*\s*|[^.!?]+$/g) ?? [p];
  const out: string[] = [];
  let current = '';
  for (const raw of sentences) {
    const s = raw.trim();
    if (s.length > max) {
      // A single sentence longer than a chunk (a table row, a URL list) is cut hard.
      if (current) out.push(current);
      for (let i = 0; i + max < s.length; i += max) out.push(s.slice(i, i + max));
      current = s.slice(Math.floor((s.length - 1) / max) * max);
    } else if (current && current.length + 1 + s.length > max) {
      out.push(current);
      current = s;
    } else {
      current = current ? `${current} ${s}` : s;
    }
  }
  if (current) out.push(current);
  return out;
}
