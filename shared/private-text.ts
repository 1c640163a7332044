/**
 * Keeps private text (tasks, prompts, tool arguments and results, notification text) out of what
 * leaves the process for operators: span status messages and log lines. Error messages often echo
 * what they were given (`Cannot evaluate "2 +* x"`), so a message is reduced to its fixed wording:
 * quoted parts, URL paths, email addresses and every word that also occurs in the call's own input
 * are replaced. Pure functions, so spans, logs and activities can share them.
 */

/** What replaces a word of private text. */
export const REDACTED = '[redacted]';

/** Longest sanitized message: enough for the fixed wording of an error, too short for a dump. */
export const MAX_SANITISED_CHARS = 300;

/** Words shorter than this are not treated as private (they would blank out "at", "of", numbers). */
const MIN_PRIVATE_WORD_CHARS = 3;

/** Nesting followed when collecting words; deeper values are covered by the quote and URL rules. */
const MAX_DEPTH = 12;

/** A set of lower-case words that must not appear in a sanitized message. */
export type PrivateWords = ReadonlySet<string>;

const WORD = /[\p{L}\p{N}]+/gu;

const cache = new WeakMap<object, PrivateWords>();

/**
 * Every word (letters and digits, 3+ characters, lower-cased) in the string leaves of `value`: the
 * arguments of a call, a memo. Object keys are not collected (they are schema field names). Cached
 * per object, since a failing call may be described several times (span, exception, log line).
 */
export function privateWords(value: unknown): PrivateWords {
  if (value !== null && typeof value === 'object') {
    const hit = cache.get(value);
    if (hit) return hit;
    const words = new Set<string>();
    collect(value, words, 0);
    cache.set(value, words);
    return words;
  }
  const words = new Set<string>();
  collect(value, words, 0);
  return words;
}

function collect(value: unknown, into: Set<string>, depth: number): void {
  if (typeof value === 'string') {
    for (const m of value.matchAll(WORD)) {
      if (m[0].length >= MIN_PRIVATE_WORD_CHARS) into.add(m[0].toLowerCase());
    }
  } else if (typeof value === 'number' || typeof value === 'bigint') {
    collect(String(value), into, depth);
  } else if (value !== null && typeof value === 'object' && depth < MAX_DEPTH) {
    for (const v of Array.isArray(value) ? value : Object.values(value)) collect(v, into, depth + 1);
  }
}

// Quoted text in any of the usual quote styles; a single quote opens only after a non-word
// character, so apostrophes ("can't") are left alone.
const QUOTED = /"[^"\n]*"|“[^”\n]*”|‘[^’\n]*’|`[^`\n]*`|(?<![\p{L}\p{N}])'[^'\n]*'(?![\p{L}\p{N}])/gu;
const URL = /\b([a-z][a-z0-9+.-]*):\/\/(?:[^\s/@"'<>]*@)?([^\s/?#"'<>]+)([^\s"'<>]*)/gi;
const EMAIL = /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+/gu;

/**
 * The message with private text replaced: quoted parts become `"…"`, URLs keep only scheme and host,
 * email addresses become `[email]`, and any whitespace-separated word containing one of `words`
 * becomes `[redacted]`. One line, at most {@link MAX_SANITISED_CHARS} characters.
 */
export function sanitizeMessage(message: string, words: PrivateWords = new Set()): string {
  let out = message
    .replace(/\s*\r?\n\s*/g, ' ')
    .replace(QUOTED, '"…"')
    .replace(
      URL,
      (_m, scheme: string, host: string, rest: string) => `${scheme}://${host}${rest ? '/…' : ''}`,
    )
    .replace(EMAIL, '[email]');
  if (words.size > 0) {
    out = out.replace(/\S+/g, (chunk) => {
      for (const m of chunk.matchAll(WORD)) {
        if (words.has(m[0].toLowerCase())) return REDACTED;
      }
      return chunk;
    });
  }
  return out.length > MAX_SANITISED_CHARS ? `${out.slice(0, MAX_SANITISED_CHARS - 1)}…` : out;
}

/** An error reduced to what may be shown to operators. */
export interface ErrorSummary {
  /** The failure type (`ApplicationFailure` type such as `InvalidExpression`), else the error's name. */
  type: string;
  /** The sanitized message. */
  message: string;
}

const TYPE_NAME = /^[\p{L}\p{N}_.$:-]{1,100}$/u;

/** The type of a thrown value: an ApplicationFailure's `type`, else the error's name, else `Error`. */
export function errorTypeOf(err: unknown): string {
  if (err !== null && typeof err === 'object') {
    const { type, name } = err as { type?: unknown; name?: unknown };
    if (typeof type === 'string' && TYPE_NAME.test(type)) return type;
    if (typeof name === 'string' && TYPE_NAME.test(name)) return name;
  }
  return 'Error';
}

/** A thrown value's type and sanitized message. */
export function summariseError(err: unknown, words?: PrivateWords): ErrorSummary {
  const raw =
    err !== null && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string'
      ? (err as { message: string }).message
      : String(err);
  return { type: errorTypeOf(err), message: sanitizeMessage(raw, words) };
}

/** `Type: sanitized message`, the form errors take on spans and in log lines. */
export function describeError(err: unknown, words?: PrivateWords): string {
  const { type, message } = summariseError(err, words);
  return message ? `${type}: ${message}` : type;
}
