/**
 * Citation numbering for search results, shared by the workflow (which owns the numbering) and by
 * clients (which resolve `[[a3]]` marks in a final answer).
 *
 * Pure and deterministic on purpose: it runs inside the workflow sandbox, so it uses no Node
 * built-ins, no clock and no randomness, and its state is plain JSON that survives continue-as-new.
 *
 * Numbering: one counter per run, shared by every source. A knowledge-base hit, then two web hits,
 * then another knowledge-base hit are `a1 d2 d3 a4`. The letter says where a result came from; the
 * number alone is unique, so a mark can never be ambiguous even if two sources shared a letter, and
 * a UI can sort citations by the order the agent saw them.
 */
import { z } from 'zod';
import { schemaOnce } from './schema-once';
import { jsonBytes } from './temporal-limits';

/** Where a search result came from: a web page or a chunk of a knowledge-base file. */
export type SearchSourceType = 'url' | 'file';

/**
 * The full record of one search result, as UIs, events and the `citations` query show it. Field
 * names follow the tool conventions (snake_case), so UIs built for them read these unchanged.
 */
export interface SearchRecord {
  title: string;
  /** Web address, or a `file://` URL with `#chunk-N` for a knowledge-base chunk. */
  url: string;
  /**
   * The passage: in a search result, what the model reads (capped, see
   * {@link ApplyCitationsOptions.maxTextChars}); in a run's citations, a snippet of it
   * ({@link CITATION_SNIPPET_CHARS}).
   */
  text: string;
  /** ISO date when the source states one. */
  published_date: string | null;
  source_type: SearchSourceType;
  /** Knowledge-base file, relative to the folder it was added from; null for web pages. */
  filename: string | null;
  /** The source's own relevance score (not comparable across sources). */
  score: number | null;
  /** How the score came about: rank, provider, chunk number and the like. */
  score_details: Record<string, string | number>;
  /** Unique within the run, from 1; assigned by {@link applyCitations}. */
  cite_index: number;
  /** The tool that found it: `knowledge_base_search` or `web_search`. */
  search_type: string;
  /** One letter naming the source: `a` knowledge base, one letter per web provider. */
  sign: string;
}

/** A search result as a search activity returns it: everything but the run-wide cite index. */
export type UncitedSearchRecord = Omit<SearchRecord, 'cite_index'>;

/** Schema of {@link UncitedSearchRecord}; activities and the workflow check records against it. */
export const UncitedSearchRecordSchema = schemaOnce('shared/citations#UncitedSearchRecordSchema', () =>
  z.object({
    title: z.string(),
    url: z.string(),
    text: z.string(),
    published_date: z.string().nullable(),
    source_type: z.enum(['url', 'file']),
    filename: z.string().nullable(),
    score: z.number().nullable(),
    score_details: z.record(z.string(), z.union([z.string(), z.number()])),
    search_type: z.string(),
    sign: z.string().regex(/^[a-z]$/),
  }),
);

/** `ToolResult.data` of every search activity. */
export interface SearchToolData {
  records: UncitedSearchRecord[];
}

const SearchToolDataSchema = schemaOnce('shared/citations#SearchToolDataSchema', () =>
  z.object({ records: z.array(UncitedSearchRecordSchema) }),
);

/**
 * The records in a search activity's `ToolResult.data`, or undefined when `data` is not search data
 * (a tool of another kind, or an activity from an older build), so the caller can pass it through.
 */
export function searchRecordsOf(data: unknown): UncitedSearchRecord[] | undefined {
  const parsed = SearchToolDataSchema.safeParse(data);
  return parsed.success ? parsed.data.records : undefined;
}

/** The lean result the model reads. */
export interface LeanSearchResult {
  title: string;
  text: string;
  /** Sign plus cite index, e.g. `b3`. */
  index: string;
  /** How the model cites it in its answer, e.g. `[[b3]]`. */
  reference_mark: string;
}

/**
 * Citation state of one run: plain JSON, kept in workflow state and carried across continue-as-new.
 * `records` holds every cited record once, in cite-index order.
 */
export interface CitationState {
  /** The cite index the next new result gets. */
  next: number;
  records: SearchRecord[];
  /** Oldest citations dropped to keep the state within its budget (see {@link boundCitationState}). */
  dropped?: number;
}

/** The state of a run that has not searched yet. */
export function createCitationState(): CitationState {
  return { next: 1, records: [] };
}

/** Options of {@link applyCitations}. */
export interface ApplyCitationsOptions {
  /** Longest text the model reads per result, in characters (default 1,500). */
  maxTextChars?: number;
  /** The query, quoted in the message for an empty result. */
  query?: string;
}

/** What {@link applyCitations} returns. */
export interface AppliedCitations {
  /** The new state; the input state is not modified. */
  state: CitationState;
  /** What the model reads: a JSON array of {@link LeanSearchResult}, or advice when nothing was found. */
  content: string;
  /** This call's results with their cite indexes, duplicates merged, in rank order. */
  records: SearchRecord[];
  /**
   * For each of `records`: its position in the records given and its index (`a3`), so the model
   * activity can render the same content from the stored full records (see {@link renderSearchPicks}).
   */
  picks: [number, string][];
}

/** Default of {@link ApplyCitationsOptions.maxTextChars}. */
export const DEFAULT_MAX_TEXT_CHARS = 1500;

/**
 * Longest text a citation keeps in run state, in characters: a snippet for UIs. The model reads up
 * to {@link DEFAULT_MAX_TEXT_CHARS} of each result; keeping only a snippet keeps the state (carried
 * through continue-as-new, returned by the `citations` query) small.
 */
export const CITATION_SNIPPET_CHARS = 300;

/**
 * Numbers one search call's results and builds what the model reads. A result seen earlier in the
 * run (same web address, or same knowledge-base chunk) keeps its earlier index, so the model can
 * cite it consistently; duplicates within the call are merged into their first (best-ranked)
 * occurrence. New results get the next indexes in rank order.
 */
export function applyCitations(
  state: CitationState,
  records: readonly UncitedSearchRecord[],
  opts: ApplyCitationsOptions = {},
): AppliedCitations {
  const maxChars = Math.max(1, Math.floor(opts.maxTextChars ?? DEFAULT_MAX_TEXT_CHARS));
  const known = new Map<string, SearchRecord>();
  for (const r of state.records) known.set(citationKey(r), r);

  let next = state.next;
  const added: SearchRecord[] = [];
  const inCall = new Set<string>();
  const out: SearchRecord[] = [];
  const picks: [number, string][] = [];
  records.forEach((r, position) => {
    const key = citationKey(r);
    if (inCall.has(key)) return;
    inCall.add(key);
    let cited = known.get(key);
    if (!cited) {
      cited = { ...r, text: capText(r.text, CITATION_SNIPPET_CHARS), cite_index: next };
      next += 1;
      known.set(key, cited);
      added.push(cited);
    }
    out.push(cited);
    picks.push([position, citationIndex(cited)]);
  });

  const newState: CitationState = { ...state, next, records: [...state.records, ...added] };
  if (out.length === 0)
    return { state: newState, content: noResultsMessage(opts.query), records: [], picks: [] };
  return { state: newState, content: renderSearchPicks(records, picks, maxChars), records: out, picks };
}

/**
 * What the model reads of one search call: the picked results (position in `records`, index) as a
 * JSON array of {@link LeanSearchResult}, each text capped at `maxTextChars`. The workflow renders it
 * for small results; the model activity renders it from the content store for large ones.
 */
export function renderSearchPicks(
  records: readonly Pick<UncitedSearchRecord, 'title' | 'text'>[],
  picks: readonly (readonly [number, string])[],
  maxTextChars = DEFAULT_MAX_TEXT_CHARS,
): string {
  const lean: LeanSearchResult[] = picks.map(([position, index]) => {
    const r = records[position];
    return {
      title: r?.title ?? '',
      text: capText(r?.text ?? '', maxTextChars),
      index,
      reference_mark: `[[${index}]]`,
    };
  });
  return JSON.stringify(lean);
}

/** Search records with their text cut to a snippet: what a run keeps when the full records are stored. */
export function compactSearchRecords(
  records: readonly UncitedSearchRecord[],
  maxChars = CITATION_SNIPPET_CHARS,
): UncitedSearchRecord[] {
  return records.map((r) => ({ ...r, text: capText(r.text, maxChars) }));
}

/**
 * Keeps a citation state within `maxBytes` of JSON: the oldest citations lose their snippet first,
 * then the oldest are dropped (counted in `dropped`; their marks no longer resolve). Returns the
 * same state when it fits.
 */
export function boundCitationState(state: CitationState, maxBytes: number): CitationState {
  // Each record costs its JSON and a comma (one fewer comma than records).
  const sizes = state.records.map((r) => jsonBytes(r) + 1);
  let total =
    jsonBytes({ ...state, records: [] }) + sizes.reduce((a, b) => a + b, 0) - (sizes.length ? 1 : 0);
  if (total <= maxBytes) return state;
  const records = [...state.records];
  for (let i = 0; i < records.length && total > maxBytes; i += 1) {
    const r = records[i] as SearchRecord;
    if (!r.text) continue;
    const stripped = { ...r, text: '' };
    const size = jsonBytes(stripped) + 1;
    total -= (sizes[i] as number) - size;
    sizes[i] = size;
    records[i] = stripped;
  }
  let drop = 0;
  while (drop < records.length && total > maxBytes) {
    total -= sizes[drop] as number;
    drop += 1;
  }
  return { ...state, records: records.slice(drop), dropped: (state.dropped ?? 0) + drop };
}

/** Advice for the model when a search found nothing. */
export function noResultsMessage(query?: string): string {
  const what = query?.trim() ? ` for "${query.trim()}"` : '';
  return (
    `No results found${what}. Try a shorter or broader query: fewer words, more general terms, ` +
    'or synonyms of the key words.'
  );
}

/** A citation as the `citations` query returns it. */
export interface Citation {
  /** Sign plus cite index, e.g. `a1`. */
  index: string;
  /** The mark as it appears in answers, e.g. `[[a1]]`. */
  reference_mark: string;
  record: SearchRecord;
}

/** Every citation of the run, in cite-index order, for the `citations` query. */
export function resolveCitations(state: CitationState): Citation[] {
  return state.records.map((record) => ({
    index: citationIndex(record),
    reference_mark: referenceMark(record),
    record,
  }));
}

/**
 * The record a reference resolves to: a cite index (`3`), an index (`b3`) or a mark (`[[b3]]`).
 * A letter that does not match the record's sign resolves to nothing: the mark is wrong.
 */
export function findCitation(state: CitationState, ref: string | number): SearchRecord | undefined {
  const m = typeof ref === 'number' ? null : /^\s*(?:\[\[)?\s*([a-z])?(\d+)\s*(?:\]\])?\s*$/.exec(ref);
  if (typeof ref === 'string' && !m) return undefined;
  const n = typeof ref === 'number' ? ref : Number(m?.[2]);
  const sign = m?.[1];
  const record = state.records.find((r) => r.cite_index === n);
  return record && (sign === undefined || record.sign === sign) ? record : undefined;
}

/**
 * The citations a text (usually the final answer) uses, each once in order of first use, and the
 * marks that resolve to nothing (a model inventing `[[z9]]`), so UIs can flag them.
 */
export function citationsInText(
  state: CitationState,
  text: string,
): { cited: Citation[]; unknown: string[] } {
  const cited: Citation[] = [];
  const unknown: string[] = [];
  const seen = new Set<string>();
  for (const m of text.matchAll(/\[\[\s*([a-z]\d+)\s*\]\]/g)) {
    const index = m[1] as string;
    if (seen.has(index)) continue;
    seen.add(index);
    const record = findCitation(state, index);
    if (record) cited.push({ index, reference_mark: `[[${index}]]`, record });
    else unknown.push(index);
  }
  return { cited, unknown };
}

function citationIndex(r: SearchRecord): string {
  return `${r.sign}${r.cite_index}`;
}

function referenceMark(r: SearchRecord): string {
  return `[[${citationIndex(r)}]]`;
}

/**
 * What makes two results the same source. Web addresses compare without fragment, trailing slash
 * or letter case of scheme and host, so providers that format one page differently still merge.
 * Knowledge-base URLs keep their `#chunk-N` fragment: different chunks of a file are different
 * passages. Records without a URL compare by source, title and text.
 */
export function citationKey(r: UncitedSearchRecord): string {
  const url = r.url.trim();
  if (!url) return `text:${r.sign}:${r.title}:${r.text}`;
  if (r.source_type === 'file') return `file:${url}`;
  const noFragment = url.replace(/#.*$/, '');
  const lowered = noFragment.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/?]*)/i, (head) => head.toLowerCase());
  return `url:${lowered.replace(/\/+(?=\?|$)/, '')}`;
}

/** Cuts text to at most `max` characters at a word boundary when one is near, marking the cut. */
function capText(text: string, max: number): string {
  const clean = text.trim();
  if (clean.length <= max) return clean;
  const cut = clean.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > max * 0.8 ? cut.slice(0, space) : cut}…`;
}
