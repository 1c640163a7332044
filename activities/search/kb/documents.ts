/**
 * Turns files into titled chunks for the knowledge base. Markdown, plain text and HTML are read;
 * every chunk keeps its document title, its section heading and its file name, because a passage
 * like "Feed it once a week" only makes sense (and only ranks) with them.
 */
import path from 'node:path';
import { convert } from 'html-to-text';

/** File extensions the knowledge base reads, by format. */
export const DOCUMENT_EXTENSIONS: Readonly<Record<string, 'markdown' | 'text' | 'html'>> = Object.freeze({
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.txt': 'text',
  '.text': 'text',
  '.html': 'html',
  '.htm': 'html',
});

/** One passage of a document. */
export interface Chunk {
  /** Position in the document, from 0. */
  no: number;
  /** The section heading path, e.g. `Feeding schedule`; empty before the first heading. */
  heading: string;
  text: string;
}

/** A parsed document. */
export interface ParsedDocument {
  title: string;
  chunks: Chunk[];
}

interface Section {
  heading: string;
  body: string;
}

/** Whether the knowledge base can read a file, judged by its extension. */
export function isSupportedDocument(file: string): boolean {
  return path.extname(file).toLowerCase() in DOCUMENT_EXTENSIONS;
}

/**
 * Parses a file's content into a title and chunks of about `chunkChars` characters. The title is
 * the first top-level heading (Markdown), `<title>` or `<h1>` (HTML), a short first line (text), or
 * else the file name.
 */
export function parseDocument(filename: string, content: string, chunkChars: number): ParsedDocument {
  const format = DOCUMENT_EXTENSIONS[path.extname(filename).toLowerCase()] ?? 'text';
  const fallbackTitle = titleFromFilename(filename);
  let title: string;
  let sections: Section[];
  if (format === 'markdown') {
    ({ title, sections } = markdownSections(content, fallbackTitle));
  } else if (format === 'html') {
    const htmlTitle = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(content)?.[1];
    ({ title, sections } = markdownSections(htmlToMarkdownish(content), fallbackTitle));
    if (htmlTitle?.trim()) title = decodeEntities(htmlTitle.replace(/\s+/g, ' ').trim());
  } else {
    ({ title, sections } = textSections(content, fallbackTitle));
  }
  const chunks: Chunk[] = [];
  for (const s of sections) {
    for (const text of packParagraphs(s.body, chunkChars))
      chunks.push({ no: chunks.length, heading: s.heading, text });
  }
  return { title, chunks };
}

function titleFromFilename(filename: string): string {
  const base = path.basename(filename, path.extname(filename)).replace(/[-_]+/g, ' ').trim();
  return base ? base[0]!.toUpperCase() + base.slice(1) : filename;
}

/** Splits Markdown at headings. The first `#` heading is the title, not a section of its own. */
function markdownSections(md: string, fallbackTitle: string): { title: string; sections: Section[] } {
  const sections: Section[] = [];
  let title: string | undefined;
  let heading = '';
  let lines: string[] = [];
  let inFence = false;
  const flush = () => {
    const body = stripMarkdown(lines.join('\n')).trim();
    if (body) sections.push({ heading, body });
    lines = [];
  };
  for (const line of md.replace(/\r\n?/g, '\n').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const h = inFence ? null : /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
    if (!h) {
      lines.push(line);
      continue;
    }
    flush();
    const text = stripMarkdown(h[2] as string).trim();
    if (title === undefined && (h[1] as string).length === 1) {
      title = text;
      heading = '';
    } else {
      heading = text;
    }
  }
  flush();
  return { title: title ?? fallbackTitle, sections };
}

/** Plain text: a short first line followed by a blank line reads as the title. */
function textSections(text: string, fallbackTitle: string): { title: string; sections: Section[] } {
  const normalized = text.replace(/\r\n?/g, '\n').trim();
  const m = /^([^\n]{1,120})\n\s*\n([\s\S]*)$/.exec(normalized);
  if (m && !/[.!?:;,]$/.test((m[1] as string).trim())) {
    return { title: (m[1] as string).trim(), sections: [{ heading: '', body: (m[2] as string).trim() }] };
  }
  return { title: fallbackTitle, sections: normalized ? [{ heading: '', body: normalized }] : [] };
}

/** Removes Markdown markup that would otherwise be indexed as words (link targets, emphasis, code ticks). */
function stripMarkdown(md: string): string {
  return md
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/^\s*(```|~~~).*$/gm, '')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/(\*\*|__|\*|_)(?=\S)([^*_]+?)\1/g, '$2')
    .replace(/^\s{0,3}>\s?/gm, '')
    .replace(/^\s*[-*+]\s+/gm, '• ')
    .replace(/<[^>]+>/g, '');
}

/**
 * HTML to text with headings kept as Markdown `#` lines, so HTML and Markdown chunk alike.
 * Navigation, footers, scripts and styles are dropped: they are page chrome, not content.
 */
function htmlToMarkdownish(html: string): string {
  const heading = (level: number) => ({ selector: `h${level}`, format: 'mdHeading', options: { level } });
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'head', format: 'skip' },
      { selector: 'nav', format: 'skip' },
      { selector: 'footer', format: 'skip' },
      { selector: 'script', format: 'skip' },
      { selector: 'style', format: 'skip' },
      { selector: 'img', format: 'skip' },
      { selector: 'a', options: { ignoreHref: true } },
      ...[1, 2, 3, 4, 5, 6].map(heading),
    ],
    formatters: {
      mdHeading: (elem, walk, builder, options) => {
        builder.openBlock({ leadingLineBreaks: 2 });
        builder.addLiteral(`${'#'.repeat(Number(options.level ?? 2))} `);
        walk(elem.children, builder);
        builder.closeBlock({ trailingLineBreaks: 2 });
      },
    },
  });
}

function decodeEntities(s: string): string {
  return convert(s, { wordwrap: false });
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
