/**
 * Turns files into titled chunks for the knowledge base. Markdown, plain text and HTML are read;
 * every chunk keeps its document title, its section heading and its file name, because a passage
 * like "Feed it once a week" only makes sense (and only ranks) with them.
 */
import path from 'node:path';
import { convert } from 'html-to-text';
import { packSections } from './chunking';
import type { Chunk, Section } from './chunking';

export type { Chunk, Section } from './chunking';

/** File extensions the knowledge base reads, by format. */
export const DOCUMENT_EXTENSIONS: Readonly<Record<string, 'markdown' | 'text' | 'html'>> = Object.freeze({
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.txt': 'text',
  '.text': 'text',
  '.html': 'html',
  '.htm': 'html',
});

/** A parsed document. */
export interface ParsedDocument {
  title: string;
  chunks: Chunk[];
}

/** Whether the knowledge base can read a file, judged by its extension. */
export function isSupportedDocument(file: string): boolean {
  return path.extname(file).toLowerCase() in DOCUMENT_EXTENSIONS;
}

/** Options of {@link parseDocument}. */
export interface ParseOptions {
  /** Title when the document has none of its own, e.g. the npm package a README belongs to. */
  fallbackTitle?: string;
}

/**
 * Parses a file's content into a title and chunks of about `chunkChars` characters. The title is
 * the first real heading that opens the document (badges and images removed; Markdown `#`, setext
 * or HTML headings), `<title>` or `<h1>` (HTML), a short first line (text), or else
 * `opts.fallbackTitle` or the file name (a README's folder name, never "README").
 */
export function parseDocument(
  filename: string,
  content: string,
  chunkChars: number,
  opts: ParseOptions = {},
): ParsedDocument {
  const format = DOCUMENT_EXTENSIONS[path.extname(filename).toLowerCase()] ?? 'text';
  const fallbackTitle = opts.fallbackTitle?.trim() || titleFromFilename(filename);
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
  return { title, chunks: packSections(sections, chunkChars) };
}

/** Base names that say nothing about a document (`README`, `README.zh-CN`, `index`). */
const GENERIC_NAMES = /^(readme|index|readme[._-]?[a-z]{2}(?:[-_][a-z]{2,4})?)$/i;

/** Whether a file's name says nothing about it, so its folder's name is the better title. */
export function hasGenericName(file: string): boolean {
  return GENERIC_NAMES.test(path.parse(file).name);
}

function titleFromFilename(filename: string): string {
  const parsed = path.posix.parse(filename.split(path.sep).join('/'));
  let base = parsed.name;
  if (GENERIC_NAMES.test(base)) base = path.posix.basename(parsed.dir) || 'Untitled';
  base = base.replace(/[-_]+/g, ' ').trim();
  return base ? base[0]!.toUpperCase() + base.slice(1) : filename;
}

/**
 * HTML headings inside Markdown (`<h1 align="center">…</h1>`, common in READMEs) become `#` lines,
 * so they title and split the document like Markdown headings do.
 */
function htmlHeadingsToMarkdown(md: string): string {
  return md.replace(/<h([1-6])\b[^>]*>([\s\S]*?)<\/h\1\s*>/gi, (_m, level: string, inner: string) => {
    const text = inner
      .replace(/<img\b[^>]*>/gi, '')
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    return `\n${'#'.repeat(Number(level))} ${text}\n`;
  });
}

/** Text of a heading line without badges, images, link targets or markup. */
function headingText(raw: string): string {
  return stripMarkdown(raw).replace(/\s+/g, ' ').trim();
}

/**
 * Splits Markdown at headings. The title is the first heading seen before any prose (badges,
 * images and HTML-only lines are not prose); it is not a section of its own. A section's heading is
 * its path below the title, at most two levels deep (`API › he.encode(text)`), so a passage keeps
 * the context its own heading leaves out.
 */
function markdownSections(mdRaw: string, fallbackTitle: string): { title: string; sections: Section[] } {
  const md = htmlHeadingsToMarkdown(mdRaw.replace(/\r\n?/g, '\n'));
  const sections: Section[] = [];
  let title: string | undefined;
  let sawProse = false;
  const stack: { level: number; text: string }[] = [];
  let lines: string[] = [];
  let inFence = false;
  const currentHeading = () =>
    stack
      .slice(-2)
      .map((h) => h.text)
      .join(' › ');
  const flush = () => {
    const body = stripMarkdown(lines.join('\n')).trim();
    if (body) sections.push({ heading: currentHeading(), body });
    lines = [];
  };
  const source = md.split('\n');
  for (let i = 0; i < source.length; i++) {
    const line = source[i] as string;
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    let level = 0;
    let raw = '';
    const atx = inFence ? null : /^ {0,3}(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
    const next = source[i + 1];
    if (atx) {
      level = (atx[1] as string).length;
      raw = atx[2] as string;
    } else if (
      !inFence &&
      next !== undefined &&
      /^ {0,3}(=+|-{2,})\s*$/.test(next) &&
      line.trim() &&
      !/^\s*([-*+>|]|\d+\.)/.test(line) &&
      (i === 0 || !(source[i - 1] as string).trim())
    ) {
      // Setext heading: a one-line paragraph underlined with === (level 1) or --- (level 2).
      level = next.trim().startsWith('=') ? 1 : 2;
      raw = line;
      i += 1;
    }
    const text = level ? headingText(raw) : '';
    if (!text) {
      if (!inFence && !sawProse && stripMarkdown(line).trim()) sawProse = true;
      lines.push(line);
      continue;
    }
    flush();
    if (title === undefined && !sawProse) {
      title = text;
      stack.length = 0;
      continue;
    }
    while (stack.length && (stack.at(-1) as { level: number }).level >= level) stack.pop();
    stack.push({ level, text });
    sawProse = true;
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

/**
 * Removes Markdown markup that would otherwise be indexed as words: images and badges (their alt
 * text is "Build Status", not content), link targets and reference definitions, emphasis, code
 * ticks, HTML tags.
 */
function stripMarkdown(md: string): string {
  return md
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<img\b[^>]*>/gi, '')
    .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
    .replace(/!\[[^\]]*\]\[[^\]]*\]/g, '')
    .replace(/^\s{0,3}\[[^\]]+\]:\s*\S+.*$/gm, '')
    .replace(/\[\s*\]\([^)]*\)/g, '')
    .replace(/\[\s*\]\[[^\]]*\]/g, '')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1')
    .replace(/^\s*(```|~~~).*$/gm, '')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/(\*\*|__|\*|_)(?=\S)([^*_]+?)\1/g, '$2')
    .replace(/^\s{0,3}>\s?/gm, '')
    .replace(/^\s*[-*+]\s+/gm, '• ')
    .replace(/<[^>]+>/g, '')
    .replace(/&nbsp;/g, ' ');
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
