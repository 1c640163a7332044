/**
 * The task's own words, for the two places a small model loses them on the way to a fact in the
 * user's documents: the search query it writes (two or three words, often only the topic: "travel
 * policy" for "Up to what amount does my manager approve expense claims, per our travel policy?") and
 * the passage it reads back (it answers from the passage's first sentence, or from the one that has
 * a number, rather than from the one that says what was asked). Words are compared as the knowledge
 * base compares them: lower-cased, stemmed, stop words left out.
 */
import { normalizeWord } from '../../search/kb/analyze';

/** Words that say where to look or how to ask, not what is asked. */
const ASKING_WORDS = new Set(
  [
    'according',
    'note',
    'notes',
    'document',
    'documents',
    'doc',
    'docs',
    'knowledge',
    'base',
    'say',
    'many',
    'much',
    'says',
    'tell',
    'per',
    'need',
    'look',
  ].map((w) => normalizeWord(w) ?? w),
);

/** Longest query the mend makes: the model's own words and the task's, well under the tool's limits. */
const QUERY_CHARS = 200;

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu;

/** A text's words with their analysed terms, stop words and asking words left out. */
function words(text: string): { word: string; term: string }[] {
  const out: { word: string; term: string }[] = [];
  for (const m of text.matchAll(WORD)) {
    const term = normalizeWord(m[0]);
    if (term && !ASKING_WORDS.has(term)) out.push({ word: m[0], term });
  }
  return out;
}

/** The distinct terms of a text that say what it is about. */
export function contentTerms(text: string): Set<string> {
  return new Set(words(text).map((w) => w.term));
}

/**
 * The model's search query with the task's words it left out appended, so a lexical search ranks
 * the passage that answers the task rather than the document's opening. The model's words stay
 * first; nothing is added when it already has them all.
 */
export function searchQueryWithTask(query: string, task: string): string {
  const have = contentTerms(query);
  const extra: string[] = [];
  for (const { word, term } of words(task)) {
    if (have.has(term)) continue;
    have.add(term);
    extra.push(word);
  }
  if (!extra.length) return query;
  let out = query.trim();
  for (const word of extra) {
    if (out.length + 1 + word.length > QUERY_CHARS) break;
    out = out ? `${out} ${word}` : word;
  }
  return out;
}

/** A sentence shares at least this many of the task's terms to be pointed out. */
const MIN_SHARED_TERMS = 2;

/**
 * The sentence of `passages` that shares the most of the task's terms (the first of equals), when
 * it shares at least two that its passage's title does not have; undefined otherwise. Words of the
 * title say what the whole document is about ("rainbow" in "Why Rainbows Form"), so every sentence
 * of it would match them: only the task's other words tell the sentence that answers apart.
 */
export function bestSentence(passages: { title: string; text: string }[], task: string): string | undefined {
  const quantity = ASKS_QUANTITY.test(task);
  let best: { sentence: string; shared: number } | undefined;
  for (const passage of passages) {
    const topic = contentTerms(passage.title);
    const wanted = new Set([...contentTerms(task)].filter((t) => !topic.has(t)));
    const sentences = passage.text.split(/(?<=[.!?])\s+(?=\S)/).map((x) => x.trim());
    sentences.forEach((sentence, i) => {
      const matched = [...contentTerms(sentence)].filter((t) => wanted.has(t)).length;
      if (matched < MIN_SHARED_TERMS) return;
      // Of sentences as close to the task, the one with a number answers "how many".
      const shared = matched + (quantity && HAS_QUANTITY.test(sentence) ? 0.5 : 0);
      if (shared <= (best?.shared ?? 0)) return;
      // "It is tiny and works well for…": what "it" is was said in the sentence before.
      const before = i > 0 && STARTS_WITH_PRONOUN.test(sentence) ? `${sentences[i - 1] as string} ` : '';
      best = { sentence: `${before}${sentence}`, shared };
    });
  }
  return best?.sentence;
}

/** A question whose answer is a quantity. */
const ASKS_QUANTITY = /\bhow (?:many|much|long|often|far|old)\b|\bwhat (?:amount|number|percentage)\b/i;
/** A number, in digits or in words. */
const HAS_QUANTITY =
  /\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|half|twice|once)\b/i;

/** A sentence that names its subject only by a pronoun. */
const STARTS_WITH_PRONOUN = /^(?:it|its|this|that|these|those|they|their|them|he|she)\b/i;
