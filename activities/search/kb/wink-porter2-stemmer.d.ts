/** Types of `wink-porter2-stemmer`, which ships none. */
declare module 'wink-porter2-stemmer' {
  /** The Porter2 (Snowball English) stem of a lower-case word. */
  function stem(word: string): string;
  export = stem;
}
