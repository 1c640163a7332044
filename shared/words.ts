/** Counts in words people read: `1 step`, `2 steps`, `0 tables`. */

/** A count and its noun, in the right number (English plural by `s`, or the `plural` given). */
export function counted(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
