/**
 * JSON Schema `pattern`s as the workflow runs them: ECMA-262 regular expressions with the `u` flag,
 * and a guard against the shapes that backtrack catastrophically (the check runs inside a workflow
 * task, where a regular expression that takes seconds stalls the run). Pure: workflow code imports it.
 */

/**
 * A `pattern` as a regular expression: with the `u` flag, as JSON Schema means it, or without for a
 * pattern that only the older syntax accepts (zod 3 writes some, such as `\'`). Throws when neither
 * compiles.
 */
export function patternRegExp(pattern: string): RegExp {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return new RegExp(pattern);
  }
}

/**
 * Whether a pattern repeats, without bound (`+`, `*`, `{n,}`), a group that ends in a repeat and
 * does not start with a fixed literal: `(a+)+`, `(\\w+\\s?)*`, `((x|y)+)*`, the classic shapes of
 * catastrophic backtracking. A group that starts or ends with a literal, as zod's email and
 * hostname patterns do (`(?:[a-z]+\\.)*`, `(?:\\.[a-z]…)*`), is not refused; nor are fixed or
 * bounded counts (`{4}`, `{2,5}`).
 */
export function backtracksBadly(pattern: string): boolean {
  const starts: number[] = [];
  let lastRepeats = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i += 1;
      lastRepeats = false;
    } else if (c === '[') {
      while (i < pattern.length && pattern[i] !== ']') i += pattern[i] === '\\' ? 2 : 1;
      lastRepeats = false;
    } else if (c === '(') {
      const prefix = /^\(\?(?:[:=!]|<[=!]|<[A-Za-z_]\w*>)/.exec(pattern.slice(i));
      starts.push(i + (prefix ? prefix[0].length : 1));
      lastRepeats = false;
    } else if (c === ')') {
      const start = starts.pop() ?? i;
      const next = pattern.slice(i + 1);
      const unbounded = next.startsWith('+') || next.startsWith('*') || /^\{\d+,\}/.test(next);
      if (lastRepeats && unbounded && !startsWithFixedLiteral(pattern.slice(start, i))) return true;
    } else if (c === '{') {
      // `{n}` counts exactly; `{n,m}` and `{n,}` repeat.
      lastRepeats = /^\{\d+,\d*\}/.test(pattern.slice(i));
      i = pattern.indexOf('}', i) < 0 ? i : pattern.indexOf('}', i);
    } else {
      lastRepeats = c === '+' || c === '*' || c === '?';
    }
  }
  return false;
}

/** Whether a group's content starts with one literal character that is not itself repeated. */
function startsWithFixedLiteral(content: string): boolean {
  const c = content[0];
  if (c === undefined || '[(.^$|'.includes(c)) return false;
  let width = 1;
  if (c === '\\') {
    if (/^\\[dDwWsSbBpPux0-9]/.test(content)) return false;
    width = 2;
  }
  const after = content[width];
  return (
    after !== '+' &&
    after !== '*' &&
    after !== '?' &&
    !(after === '{' && /^\{\d+,/.test(content.slice(width)))
  );
}

/** JSON equality, key order aside (for `enum`, `const` and `uniqueItems`). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]))
    );
  }
  return false;
}

/** A plain JSON object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
