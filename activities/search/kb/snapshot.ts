/**
 * The searchable snapshot of the knowledge base: every chunk's text and an inverted index of its
 * terms, in one JSON file that a reader loads in tens of milliseconds. Writers rebuild it from the
 * per-document files after each indexing run and replace it atomically (write, fsync, rename), so
 * readers never need the writers' lock and never see half a snapshot.
 *
 * Fields: a chunk's body and its heading are indexed per chunk; a document's title and file name
 * per document (every chunk of the document shares them), which keeps the file small and lets the
 * ranking bound how much a title word can lift.
 */
import fs from 'node:fs';
import path from 'node:path';
import { analyze, isUnigram } from './analyze';
import type { Chunk } from './documents';

/** Term frequencies of one text: term → count. */
export type TermCounts = Record<string, number>;

/** A chunk with its analysed fields, as stored in a document file. */
export interface AnalyzedChunk extends Chunk {
  /** Term counts of the body and of the heading. */
  body: TermCounts;
  head: TermCounts;
  /** Word counts (field lengths) of the body and heading. */
  bodyLen: number;
  headLen: number;
}

/** One document file: the parsed document and its analysis, written when the file is (re)indexed. */
export interface DocumentRecord {
  path: string;
  filename: string;
  hash: string;
  title: string;
  titleTerms: TermCounts;
  titleLen: number;
  nameTerms: TermCounts;
  nameLen: number;
  chunks: AnalyzedChunk[];
}

/** The snapshot file's content. */
export interface Snapshot {
  version: typeof SNAPSHOT_VERSION;
  /** Bumped on every rebuild, so caches can tell snapshots apart. */
  generation: number;
  docs: { path: string; filename: string; title: string; titleLen: number; nameLen: number }[];
  /** Chunks in document order: document index, chunk number, heading, text, field lengths. */
  chunks: { d: number; n: number; h: string; t: string; bl: number; hl: number }[];
  /** Chunk postings: term → flat [chunk, body tf, heading tf, …]. */
  chunkTerms: Record<string, number[]>;
  /** Document postings: term → flat [doc, title tf, file-name tf, …]. */
  docTerms: Record<string, number[]>;
  /** Chunks that contain each term in any field (the IDF's document frequency). */
  df: Record<string, number>;
  avg: { body: number; head: number; title: number; name: number };
}

/** Bump when the snapshot or document-file format changes; an older index is rebuilt by `kb add`. */
export const SNAPSHOT_VERSION = 2;

/** File names become words too: `kitchen/sourdough-starter.md` → `kitchen sourdough starter`. */
export function filenameWords(filename: string): string {
  return filename
    .replace(/\.[a-z0-9]+$/i, '')
    .replace(/(^|\/)(readme|index)$/i, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ');
}

/**
 * A term's entry in a term-keyed object, or undefined. Term maps come from JSON, where a term such
 * as `constructor` would otherwise find the object prototype's property.
 */
export function own<T>(map: Record<string, T>, term: string): T | undefined {
  return Object.hasOwn(map, term) ? map[term] : undefined;
}

function counts(text: string): { terms: TermCounts; len: number } {
  const terms = Object.create(null) as TermCounts;
  let len = 0;
  for (const t of analyze(text, { cjkUnigrams: true })) {
    terms[t.term] = (terms[t.term] ?? 0) + 1;
    if (!isUnigram(t.term)) len += 1;
  }
  return { terms, len };
}

/** Analyses a parsed document into the record its document file holds. */
export function analyzeDocument(doc: {
  path: string;
  filename: string;
  hash: string;
  title: string;
  chunks: readonly Chunk[];
}): DocumentRecord {
  const title = counts(doc.title);
  const name = counts(filenameWords(doc.filename));
  return {
    path: doc.path,
    filename: doc.filename,
    hash: doc.hash,
    title: doc.title,
    titleTerms: title.terms,
    titleLen: title.len,
    nameTerms: name.terms,
    nameLen: name.len,
    chunks: doc.chunks.map((c) => {
      const body = counts(c.text);
      const head = counts(c.heading);
      return { ...c, body: body.terms, head: head.terms, bodyLen: body.len, headLen: head.len };
    }),
  };
}

/** Builds a snapshot from document records (in any order; sorted by path for stable output). */
export function buildSnapshot(records: DocumentRecord[], generation: number): Snapshot {
  const docs = [...records].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const snap: Snapshot = {
    version: SNAPSHOT_VERSION,
    generation,
    docs: [],
    chunks: [],
    chunkTerms: Object.create(null) as Record<string, number[]>,
    docTerms: Object.create(null) as Record<string, number[]>,
    df: Object.create(null) as Record<string, number>,
    avg: { body: 0, head: 0, title: 0, name: 0 },
  };
  const sum = { body: 0, head: 0, title: 0, name: 0 };
  docs.forEach((doc, d) => {
    snap.docs.push({
      path: doc.path,
      filename: doc.filename,
      title: doc.title,
      titleLen: doc.titleLen,
      nameLen: doc.nameLen,
    });
    const docWide = new Set([...Object.keys(doc.titleTerms), ...Object.keys(doc.nameTerms)]);
    for (const term of docWide) {
      (snap.docTerms[term] ??= []).push(d, own(doc.titleTerms, term) ?? 0, own(doc.nameTerms, term) ?? 0);
      snap.df[term] = (snap.df[term] ?? 0) + doc.chunks.length;
    }
    for (const c of doc.chunks) {
      const i = snap.chunks.length;
      snap.chunks.push({ d, n: c.no, h: c.heading, t: c.text, bl: c.bodyLen, hl: c.headLen });
      for (const term of new Set([...Object.keys(c.body), ...Object.keys(c.head)])) {
        (snap.chunkTerms[term] ??= []).push(i, own(c.body, term) ?? 0, own(c.head, term) ?? 0);
        // Already counted for this chunk through the document's title or file name.
        if (!docWide.has(term)) snap.df[term] = (snap.df[term] ?? 0) + 1;
      }
      sum.body += c.bodyLen;
      sum.head += c.headLen;
      sum.title += doc.titleLen;
      sum.name += doc.nameLen;
    }
  });
  const n = Math.max(1, snap.chunks.length);
  snap.avg = {
    body: Math.max(1, sum.body / n),
    head: Math.max(1, sum.head / n),
    title: Math.max(1, sum.title / n),
    name: Math.max(1, sum.name / n),
  };
  return snap;
}

/** Writes `content` to `file` so that readers see either the old or the new file, never a mix. */
export function writeFileAtomic(file: string, content: string | Uint8Array): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  const fd = fs.openSync(tmp, 'w');
  try {
    if (typeof content === 'string') fs.writeSync(fd, content);
    else fs.writeSync(fd, content);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
}
