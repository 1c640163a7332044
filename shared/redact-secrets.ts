/**
 * Removes credentials from text that leaves an activity (error messages and stacks bound for the
 * worker log and workflow history): the configured secret values themselves, passwords inside
 * URLs, secret query parameters, authorization headers and bearer tokens. Pure, so every floor
 * can use it.
 */

/** What a removed secret is replaced with. */
export const SECRET_MASK = '***';

/** Known secrets shorter than this are not searched for (they would mask ordinary words). */
const MIN_SECRET_CHARS = 4;

const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]*@/gi;
const SECRET_PARAMS =
  /([?&;\s](?:password|passwd|pwd|pass|secret|token|api[_-]?key|access[_-]?token|auth|sig|signature)=)[^&\s#;"']+/gi;
const SECRET_HEADERS =
  /\b(authorization|proxy-authorization|x-api-key|api-key|x-goog-api-key|cookie|set-cookie)(["']?\s*[:=]\s*["']?)(?:(?:Bearer|Basic|Token)\s+)?[^\s"',;}]+/gi;
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{6,}/g;
const API_KEY_SHAPES = /\b(sk-(?:ant-)?)[A-Za-z0-9_-]{12,}/g;

/** `text` with every secret masked; `known` are the worker's configured secret values. */
export function redactSecrets(text: string, known: readonly string[] = []): string {
  let out = text;
  for (const s of [...new Set(known)]
    .filter((k) => k.length >= MIN_SECRET_CHARS)
    .sort((a, b) => b.length - a.length))
    out = out.split(s).join(SECRET_MASK);
  return out
    .replace(URL_USERINFO, `$1${SECRET_MASK}@`)
    .replace(SECRET_PARAMS, `$1${SECRET_MASK}`)
    .replace(SECRET_HEADERS, `$1$2${SECRET_MASK}`)
    .replace(BEARER, `$1 ${SECRET_MASK}`)
    .replace(API_KEY_SHAPES, `$1${SECRET_MASK}`);
}

/** Keys of maps whose every value may be a secret (an MCP server's environment, request headers). */
const SECRET_MAPS = /^(env|headers)$/;

/** Keys whose string values are secrets wherever they appear in a configuration. */
const SECRET_KEYS = /(password|passwd|secret|token|apikey|api_key|credentials?)$/i;

/**
 * Every secret value in a configuration object: values under secret-sounding keys, every URL that
 * carries credentials, and the password inside it (raw and percent-decoded).
 */
export function secretsOfConfig(config: unknown, depth = 0): string[] {
  const out: string[] = [];
  if (depth > 8 || config === null || typeof config !== 'object') return out;
  for (const [key, value] of Object.entries(config)) {
    if (SECRET_MAPS.test(key) && value && typeof value === 'object' && !Array.isArray(value)) {
      out.push(
        ...Object.values(value as Record<string, unknown>).filter((v): v is string => typeof v === 'string'),
      );
    } else if (typeof value === 'string') {
      if (SECRET_KEYS.test(key)) out.push(value);
      else if (/:\/\/[^/\s]*@/.test(value)) out.push(value, ...urlPassword(value));
    } else out.push(...secretsOfConfig(value, depth + 1));
  }
  return out;
}

function urlPassword(url: string): string[] {
  try {
    const { password, username } = new URL(url);
    return [password, decodeURIComponent(password), ...(password ? [] : [username])].filter(Boolean);
  } catch {
    // Unparseable: the whole string is masked already; take what sits between :// and @.
    const m = /:\/\/([^@]*)@/.exec(url);
    const userinfo = m?.[1] ?? '';
    const colon = userinfo.indexOf(':');
    return [userinfo, colon >= 0 ? userinfo.slice(colon + 1) : ''].filter(Boolean);
  }
}

/** Argument names whose values are secrets whatever they hold (`password`, `apiKey`, `auth_token`). */
const SECRET_ARG_KEYS = /(password|passwd|secret|token|api[_-]?key|credentials?|authorization|cookie)$/i;

/** How much of a value {@link redactedPreview} keeps. */
export interface PreviewBounds {
  /** Characters of one string. */
  readonly chars: number;
  /** Entries of one array or object. */
  readonly items: number;
  /** Levels of nesting. */
  readonly depth: number;
}

/** Characters read past a cut, so a secret that straddles it is still recognised and masked. */
const SECRET_LOOKAHEAD_CHARS = 256;

/**
 * A copy of `value` fit to be shown to people (approval notices and summaries), whatever its size:
 * strings over `chars` are cut with `…`, arrays and objects keep their first `items` entries and
 * say how many more there are, nesting stops at `depth`. Values under secret-sounding names become
 * {@link SECRET_MASK}, and secrets inside strings are masked as {@link redactSecrets} does.
 */
export function redactedPreview(value: unknown, bounds: PreviewBounds, depth = 0): unknown {
  if (typeof value === 'string') {
    if (value.length <= bounds.chars) return redactSecrets(value);
    return `${redactSecrets(value.slice(0, bounds.chars + SECRET_LOOKAHEAD_CHARS)).slice(0, bounds.chars)}…`;
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth >= bounds.depth) return Array.isArray(value) ? '[…]' : '{…}';
  if (Array.isArray(value)) {
    const kept = value.slice(0, bounds.items).map((v) => redactedPreview(v, bounds, depth + 1));
    return value.length > bounds.items ? [...kept, `… ${value.length - bounds.items} more`] : kept;
  }
  const out: Record<string, unknown> = {};
  let n = 0;
  let more = 0;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined) continue;
    if (n++ >= bounds.items) {
      more += 1;
      continue;
    }
    out[k.length > bounds.chars ? `${k.slice(0, bounds.chars)}…` : k] =
      SECRET_ARG_KEYS.test(k) && v !== null && v !== '' ? SECRET_MASK : redactedPreview(v, bounds, depth + 1);
  }
  if (more > 0) out['…'] = `${more} more`;
  return out;
}
