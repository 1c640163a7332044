/**
 * Text analysis shared by indexing and querying: text becomes a list of terms with positions and
 * character offsets (the offsets let snippets mark the words that matched).
 *
 * Two analyzers run side by side on every text, so mixed-language documents work:
 * - Latin-script and other space-separated words are lower-cased, stop words dropped and the rest
 *   stemmed with Porter2 (the Snowball English stemmer Postgres' `english` configuration uses), so
 *   `encoding`, `encoded` and `encodes` meet.
 * - Runs of CJK characters (Han, Hiragana, Katakana, Hangul), which have no spaces, become
 *   overlapping character bigrams (`排序字典` → `排序 序字 字典`), the approach of the standard CJK
 *   analyzers: any two-character word of a query matches wherever it occurs, with no dictionary.
 *   A run of one character is kept as a unigram, so one-character words are found too.
 */
import porter2 from 'wink-porter2-stemmer';

/** One term of an analyzed text. */
export interface Token {
  /** The indexed form: a stem, a CJK bigram, or `1:` plus a lone CJK character. */
  term: string;
  /** Word position: consecutive words (and overlapping bigrams) differ by one. */
  pos: number;
  /** Character offsets of the surface text in the analyzed string. */
  start: number;
  end: number;
}

/**
 * English stop words: the words Postgres' English configuration ignores, minus none. They match
 * nearly every chunk, so they would only add noise to the ranking.
 */
const STOP_WORDS = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers ' +
    'herself it its itself they them their theirs themselves what which who whom this that these those am is ' +
    'are was were be been being have has had having do does did doing a an the and but if or because as until ' +
    'while of at by for with about against between into through during before after above below to from up ' +
    'down in out on off over under again further then once here there when where why how all any both each ' +
    'few more most other some such no nor not only own same so than too very s t can will just don should now ' +
    'd ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn ' +
    'weren won wouldn'
  ).split(' '),
);

const CJK_CLASS = '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}';
const CJK = new RegExp(`[${CJK_CLASS}]`, 'u');
/** A CJK run, or a word: letters and digits (not CJK), with an inner apostrophe (`don't`, `it's`). */
const PIECE = new RegExp(
  `[${CJK_CLASS}]+|(?:(?![${CJK_CLASS}])[\\p{L}\\p{N}])+(?:['’](?:(?![${CJK_CLASS}])\\p{L})+)?`,
  'gu',
);
/**
 * Where a camelCase or PascalCase identifier splits: `OrderedMap` is also `ordered` and `map`.
 * Letters and digits stay together (`utf8`, `es2015`, `zircon59` are names, not two words).
 */
const CAMEL = /(?<=\p{Ll})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u;

/** Longest word indexed; longer "words" are hashes, base64 or minified code, not language. */
const MAX_WORD_CHARS = 40;

const stemCache = new Map<string, string>();

/** The Porter2 stem of a lower-case word (memoised: the same few thousand words recur everywhere). */
function stem(word: string): string {
  let s = stemCache.get(word);
  if (s === undefined) {
    s = /^\p{N}+$/u.test(word) ? word : porter2(word);
    if (stemCache.size < 100_000) stemCache.set(word, s);
  }
  return s;
}

/** The analyzed form of one word, or undefined for a stop word. */
export function normalizeWord(raw: string): string | undefined {
  const word = raw
    .toLowerCase()
    .replace(/['’]s$/, '')
    .replace(/['’]/g, '');
  if (!word || word.length > MAX_WORD_CHARS || STOP_WORDS.has(word)) return undefined;
  return stem(word);
}

/** Options of {@link analyze}. */
export interface AnalyzeOptions {
  /** Also emit every CJK character as a unigram (documents); queries emit one only for a lone character. */
  cjkUnigrams?: boolean;
}

/** Whether a term is a CJK unigram (indexed beside the bigrams, not counted in field lengths). */
export function isUnigram(term: string): boolean {
  return term.startsWith('1:');
}

/** Analyzes `text` into terms (see the module comment). */
export function analyze(text: string, opts: AnalyzeOptions = {}): Token[] {
  const out: Token[] = [];
  let pos = 0;
  for (const m of text.matchAll(PIECE)) {
    const piece = m[0];
    const at = m.index;
    if (CJK.test(piece[0] as string)) {
      const chars = [...piece];
      let offset = at;
      if (chars.length === 1) {
        out.push({ term: `1:${piece}`, pos: pos++, start: at, end: at + piece.length });
        continue;
      }
      for (let i = 0; i < chars.length; i++) {
        const a = chars[i] as string;
        const b = chars[i + 1];
        if (opts.cjkUnigrams) out.push({ term: `1:${a}`, pos, start: offset, end: offset + a.length });
        if (b !== undefined) out.push({ term: a + b, pos, start: offset, end: offset + a.length + b.length });
        offset += a.length;
        pos += 1;
      }
      continue;
    }
    const term = normalizeWord(piece);
    // A stop word still takes a position, so "state of the art" is not an exact phrase "state art".
    if (term !== undefined) out.push({ term, pos, start: at, end: at + piece.length });
    const parts = piece.length > 3 ? piece.split(CAMEL) : [];
    if (parts.length > 1) {
      // The parts share the word's position: "OrderedMap" matches "ordered map" as a phrase-ish pair.
      let offset = at;
      for (const part of parts) {
        const t = normalizeWord(part);
        if (t !== undefined && t !== term)
          out.push({ term: t, pos, start: offset, end: offset + part.length });
        offset += part.length;
      }
    }
    pos += 1;
  }
  return out;
}

/** Terms of a query, each once, in order of first occurrence. */
export function queryTerms(query: string): string[] {
  return [...new Set(analyze(query).map((t) => t.term))];
}
