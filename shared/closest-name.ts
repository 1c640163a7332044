/**
 * "Did you mean …?" for names a person typed: the known name closest to a wrong one, when it is
 * close enough to be a slip (a case, a letter or two). Pure.
 */

/** Edits (insert, delete, replace, swap of neighbours) between two strings, stopping past `max`. */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, (prev2[j - 2] as number) + 1);
      row.push(d);
    }
    prev2 = prev;
    prev = row;
  }
  return prev[b.length] as number;
}

/** The known name a wrong one most likely meant (same letters in another case, or 1–2 edits away), if any. */
export function closestName(wrong: string, known: readonly string[]): string | undefined {
  const lower = wrong.trim().toLowerCase();
  const cased = known.find((k) => k.toLowerCase() === lower);
  if (cased) return cased;
  const max = lower.length > 6 ? 2 : 1;
  let best: string | undefined;
  let bestDistance = max + 1;
  for (const k of known) {
    const d = distance(lower, k.toLowerCase(), max);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}
