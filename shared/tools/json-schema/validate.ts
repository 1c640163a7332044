/**
 * Validates a value against a JSON Schema (draft-04 to 2020-12), inside the workflow: pure and
 * deterministic, no code generation (ajv compiles with `new Function`), no caches beyond one
 * validator's life. Every assertion of 2020-12 is followed, `unevaluatedProperties` and
 * `unevaluatedItems` too; `format` is an annotation, as the specification's default is; `$ref`
 * siblings apply (as in 2019-09 and later, and as ajv does for every draft). The schema must have
 * passed {@link schemaProblems}.
 */
import { backtracksBadly, isRecord, jsonEqual, patternRegExp } from './patterns';
import { REF_KEYWORDS, SchemaDocument } from './refs';

/** One way a value misses the schema: where (`a.b[0]`, `(arguments)`) and what to fix. */
export interface SchemaIssue {
  path: string;
  message: string;
}

/** Most issues reported for one value: enough to fix it, bounded for history and messages. */
const MAX_ISSUES = 20;
/** In-place applicators followed one inside another (problems refuse real cycles; this bounds the rest). */
const MAX_IN_PLACE_HOPS = 256;
/** Deepest nesting of arrays and objects a value may have: keeps validation far from the stack's limit. */
export const MAX_VALUE_DEPTH = 64;
/** Where a value's issues are reported when they concern the value as a whole. */
export const ROOT_PATH = '(arguments)';

/** The properties and items a schema evaluated (what `unevaluated*` leaves alone). */
interface Evaluated {
  props: Set<string>;
  items: Set<number> | 'all';
}

type Schema = Record<string, unknown>;

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isRecord(value);
    case 'null':
      return value === null;
    default:
      return typeof value === type;
  }
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

function child(path: string, key: string | number): string {
  const base = path === ROOT_PATH ? '' : path;
  if (typeof key === 'number') return `${base}[${key}]`;
  const name = /^[A-Za-z_$][\w$-]*$/.test(key) ? key : JSON.stringify(key);
  return base ? `${base}.${name}` : name;
}

function depthOf(value: unknown, limit: number): number {
  if (typeof value !== 'object' || value === null) return 0;
  let deepest = 0;
  for (const item of Object.values(value)) {
    deepest = Math.max(deepest, depthOf(item, limit));
    if (deepest >= limit) break;
  }
  return deepest + 1;
}

function merge(into: Evaluated, from: Evaluated): void {
  for (const p of from.props) into.props.add(p);
  if (into.items === 'all') return;
  if (from.items === 'all') into.items = 'all';
  else for (const i of from.items) into.items.add(i);
}

/** A validator for one schema document; build it once per tool and use it for every call. */
export class SchemaValidator {
  private readonly doc: SchemaDocument;
  private readonly regexps = new Map<string, RegExp | null>();

  constructor(schema: unknown) {
    this.doc = new SchemaDocument(schema);
  }

  /** Where and how `value` misses the schema; empty when it matches. */
  issues(value: unknown): SchemaIssue[] {
    if (depthOf(value, MAX_VALUE_DEPTH + 1) > MAX_VALUE_DEPTH)
      return [{ path: ROOT_PATH, message: `nests deeper than ${MAX_VALUE_DEPTH} levels` }];
    const out: SchemaIssue[] = [];
    this.validate(this.doc.root, value, ROOT_PATH, 0, out);
    return out;
  }

  /**
   * A pattern's regular expression, or null for one this check leaves to the server: a pattern
   * that can backtrack catastrophically would stall the workflow task that tests it.
   */
  private regexp(pattern: string): RegExp | null {
    if (!this.regexps.has(pattern))
      this.regexps.set(pattern, backtracksBadly(pattern) ? null : patternRegExp(pattern));
    return this.regexps.get(pattern) ?? null;
  }

  /** Adds to `out` where `v` misses `s`; what `s` evaluated of `v` when it matches, null when not. */
  private validate(s: unknown, v: unknown, path: string, hops: number, out: SchemaIssue[]): Evaluated | null {
    const ev: Evaluated = { props: new Set(), items: new Set() };
    if (s === true || s === undefined) return ev;
    if (s === false) {
      if (out.length < MAX_ISSUES) out.push({ path, message: 'is not allowed here' });
      return null;
    }
    if (!isRecord(s)) return ev;
    let ok = true;
    const fail = (p: string, message: string) => {
      ok = false;
      if (out.length < MAX_ISSUES) out.push({ path: p, message });
    };
    /** Applies `sub` to the same value (its annotations count); false when it does not match. */
    const inPlace = (sub: unknown): Evaluated | null => {
      if (hops >= MAX_IN_PLACE_HOPS) {
        fail(path, 'the schema refers to itself too deeply to check');
        return null;
      }
      const r = this.validate(sub, v, path, hops + 1, out);
      if (r === null) ok = false;
      return r;
    };
    /** Applies `sub` to a part of the value. */
    const below = (sub: unknown, item: unknown, p: string): boolean => {
      const matched = this.validate(sub, item, p, 0, out) !== null;
      if (!matched) ok = false;
      return matched;
    };
    const apply = (sub: unknown): void => {
      const r = inPlace(sub);
      if (r) merge(ev, r);
    };

    for (const keyword of REF_KEYWORDS) {
      const ref = s[keyword];
      if (typeof ref !== 'string') continue;
      const found = this.doc.resolve(ref);
      if ('problem' in found) fail(path, found.problem);
      else apply(found.schema);
    }
    if (!this.types(s, v, path, fail)) return null;
    if (Array.isArray(s.enum) && !s.enum.some((e) => jsonEqual(e, v))) {
      const listed = s.enum.slice(0, 20).map(show).join(', ');
      fail(path, `must be one of ${listed}${s.enum.length > 20 ? ', …' : ''}; got ${show(v)}`);
    }
    if ('const' in s && !jsonEqual(s.const, v)) fail(path, `must be ${show(s.const)}; got ${show(v)}`);
    if (typeof v === 'string') this.string(s, v, path, fail);
    if (typeof v === 'number') number(s, v, path, fail);
    if (Array.isArray(v)) this.array(s, v, path, ev, below, fail);
    if (isRecord(v)) this.object(s, v, path, ev, below, apply, fail);

    if (Array.isArray(s.allOf)) for (const sub of s.allOf) apply(sub);
    for (const key of ['anyOf', 'oneOf'] as const) {
      const options = s[key];
      if (!Array.isArray(options)) continue;
      const tries = options.map((sub) => {
        const own: SchemaIssue[] = [];
        return { r: this.validate(sub, v, path, hops + 1, own), own };
      });
      const matching = tries.filter((t) => t.r !== null);
      if (matching.length === 0) {
        // The closest shape's problems say more than "matches none".
        const closest = tries.reduce((a, b) => (b.own.length < a.own.length ? b : a));
        fail(path, `matches none of the ${options.length} allowed shapes (${key})`);
        for (const issue of closest.own) fail(issue.path, issue.message);
      } else if (key === 'oneOf' && matching.length > 1) {
        fail(path, `matches ${matching.length} of the shapes; oneOf allows exactly one`);
      } else for (const t of matching) merge(ev, t.r as Evaluated);
    }
    if (s.not !== undefined && this.validate(s.not, v, path, hops + 1, []) !== null)
      fail(path, 'must not match the schema under "not"');
    if (s.if !== undefined) {
      const cond = this.validate(s.if, v, path, hops + 1, []);
      const branch = cond ? s.then : s.else;
      if (cond) merge(ev, cond);
      if (branch !== undefined) apply(branch);
    }
    this.unevaluated(s, v, path, ev, below, fail);
    return ok ? ev : null;
  }

  private types(s: Schema, v: unknown, path: string, fail: (p: string, m: string) => void): boolean {
    if (s.type === undefined) return true;
    const types = (Array.isArray(s.type) ? s.type : [s.type]) as string[];
    // OpenAPI 3.0's `nullable` (zod-to-json-schema's openApi3 target), as ajv reads it.
    if (types.some((t) => hasType(v, t)) || (s.nullable === true && v === null)) return true;
    const got = typeName(v);
    fail(
      path,
      `expected ${types.join(' or ')}, got ${got}${got === 'object' || got === 'array' ? '' : ` ${show(v)}`}`,
    );
    return false;
  }

  private string(s: Schema, v: string, path: string, fail: (p: string, m: string) => void): void {
    // Lengths count code points, as JSON Schema does.
    const length = [...v].length;
    if (typeof s.minLength === 'number' && length < s.minLength)
      fail(path, `needs at least ${s.minLength} characters; has ${length}`);
    if (typeof s.maxLength === 'number' && length > s.maxLength)
      fail(path, `allows at most ${s.maxLength} characters; has ${length}`);
    if (typeof s.pattern === 'string' && this.regexp(s.pattern)?.test(v) === false)
      fail(path, `must match the pattern ${s.pattern}; got ${show(v)}`);
  }

  private array(
    s: Schema,
    v: unknown[],
    path: string,
    ev: Evaluated,
    below: (sub: unknown, item: unknown, p: string) => boolean,
    fail: (p: string, m: string) => void,
  ): void {
    // 2020-12: prefixItems, then items for the rest; earlier drafts: items as a list, then additionalItems.
    const tuple: unknown[] = Array.isArray(s.prefixItems)
      ? s.prefixItems
      : Array.isArray(s.items)
        ? s.items
        : [];
    const rest = Array.isArray(s.prefixItems) || !Array.isArray(s.items) ? s.items : s.additionalItems;
    v.forEach((item, i) => {
      const sub: unknown = i < tuple.length ? tuple[i] : rest;
      if (sub === undefined) return;
      below(sub, item, child(path, i));
      if (ev.items !== 'all') ev.items.add(i);
    });
    if (rest !== undefined) ev.items = 'all';
    if (s.contains !== undefined) {
      const matches = v.flatMap((item, i) =>
        this.validate(s.contains, item, child(path, i), 0, []) ? [i] : [],
      );
      if (ev.items !== 'all') for (const i of matches) ev.items.add(i);
      const min = typeof s.minContains === 'number' ? s.minContains : 1;
      if (matches.length < min)
        fail(
          path,
          `needs at least ${min} item(s) matching the schema under "contains"; has ${matches.length}`,
        );
      if (typeof s.maxContains === 'number' && matches.length > s.maxContains)
        fail(
          path,
          `allows at most ${s.maxContains} item(s) matching the schema under "contains"; has ${matches.length}`,
        );
    }
    if (typeof s.minItems === 'number' && v.length < s.minItems)
      fail(path, `needs at least ${s.minItems} items; has ${v.length}`);
    if (typeof s.maxItems === 'number' && v.length > s.maxItems)
      fail(path, `allows at most ${s.maxItems} items; has ${v.length}`);
    if (s.uniqueItems === true) {
      const dup = v.findIndex((x, i) => v.slice(0, i).some((y) => jsonEqual(x, y)));
      if (dup >= 0) fail(child(path, dup), 'repeats an earlier item; items must be unique');
    }
  }

  private object(
    s: Schema,
    v: Record<string, unknown>,
    path: string,
    ev: Evaluated,
    below: (sub: unknown, item: unknown, p: string) => boolean,
    apply: (sub: unknown) => void,
    fail: (p: string, m: string) => void,
  ): void {
    const properties = isRecord(s.properties) ? s.properties : {};
    const patterns = isRecord(s.patternProperties) ? s.patternProperties : {};
    for (const key of Array.isArray(s.required) ? (s.required as string[]) : [])
      if (!Object.hasOwn(v, key)) fail(child(path, key), 'is required');
    const keys = Object.keys(v);
    for (const key of keys) {
      const item = v[key];
      let matched = false;
      if (Object.hasOwn(properties, key)) {
        matched = true;
        below(properties[key], item, child(path, key));
      }
      for (const [pattern, sub] of Object.entries(patterns)) {
        const re = this.regexp(pattern);
        // A pattern left to the server counts as matching: a valid value is never refused for it.
        if (re !== null && !re.test(key)) continue;
        matched = true;
        if (re !== null) below(sub, item, child(path, key));
      }
      if (matched) ev.props.add(key);
      else if (s.additionalProperties === false) {
        const fields = Object.keys(properties);
        fail(
          child(path, key),
          `is not a field of the schema${fields.length ? ` (its fields: ${fields.slice(0, 20).join(', ')})` : ''}`,
        );
      } else if (s.additionalProperties !== undefined) {
        below(s.additionalProperties, item, child(path, key));
        ev.props.add(key);
      }
      if (s.propertyNames !== undefined) below(s.propertyNames, key, `${child(path, key)} (its name)`);
    }
    if (typeof s.minProperties === 'number' && keys.length < s.minProperties)
      fail(path, `needs at least ${s.minProperties} fields; has ${keys.length}`);
    if (typeof s.maxProperties === 'number' && keys.length > s.maxProperties)
      fail(path, `allows at most ${s.maxProperties} fields; has ${keys.length}`);
    const dependencies = { ...(isRecord(s.dependencies) ? s.dependencies : {}) };
    if (isRecord(s.dependentRequired)) Object.assign(dependencies, s.dependentRequired);
    for (const [key, needs] of Object.entries(dependencies)) {
      if (!Object.hasOwn(v, key) || !Array.isArray(needs)) continue;
      for (const need of needs as string[])
        if (!Object.hasOwn(v, need)) fail(child(path, need), `is required when ${show(key)} is given`);
    }
    const schemas = [
      ...Object.entries(isRecord(s.dependencies) ? s.dependencies : {}).filter(([, d]) => !Array.isArray(d)),
      ...Object.entries(isRecord(s.dependentSchemas) ? s.dependentSchemas : {}),
    ];
    for (const [key, sub] of schemas) if (Object.hasOwn(v, key)) apply(sub);
  }

  private unevaluated(
    s: Schema,
    v: unknown,
    path: string,
    ev: Evaluated,
    below: (sub: unknown, item: unknown, p: string) => boolean,
    fail: (p: string, m: string) => void,
  ): void {
    if (s.unevaluatedProperties !== undefined && isRecord(v)) {
      for (const key of Object.keys(v)) {
        if (ev.props.has(key)) continue;
        if (s.unevaluatedProperties === false) fail(child(path, key), 'is not a field the schema allows');
        else below(s.unevaluatedProperties, v[key], child(path, key));
        ev.props.add(key);
      }
    }
    if (s.unevaluatedItems !== undefined && Array.isArray(v) && ev.items !== 'all') {
      const done = ev.items;
      v.forEach((item, i) => {
        if (done.has(i)) return;
        if (s.unevaluatedItems === false) fail(child(path, i), 'is an item the schema does not allow');
        else below(s.unevaluatedItems, item, child(path, i));
      });
      ev.items = 'all';
    }
  }
}

function number(s: Schema, v: number, path: string, fail: (p: string, m: string) => void): void {
  // Draft-04 writes exclusive bounds as true/false beside minimum/maximum.
  const exMin = s.exclusiveMinimum === true;
  const exMax = s.exclusiveMaximum === true;
  if (typeof s.minimum === 'number' && (exMin ? v <= s.minimum : v < s.minimum))
    fail(path, `must be ${exMin ? 'more than' : 'at least'} ${s.minimum}; got ${v}`);
  if (typeof s.maximum === 'number' && (exMax ? v >= s.maximum : v > s.maximum))
    fail(path, `must be ${exMax ? 'less than' : 'at most'} ${s.maximum}; got ${v}`);
  if (typeof s.exclusiveMinimum === 'number' && v <= s.exclusiveMinimum)
    fail(path, `must be more than ${s.exclusiveMinimum}; got ${v}`);
  if (typeof s.exclusiveMaximum === 'number' && v >= s.exclusiveMaximum)
    fail(path, `must be less than ${s.exclusiveMaximum}; got ${v}`);
  if (typeof s.multipleOf === 'number') {
    // A quotient within rounding of a whole number counts (0.3 is a multiple of 0.1).
    const q = v / s.multipleOf;
    if (Math.abs(q - Math.round(q)) > 1e-9 * Math.max(1, Math.abs(q)))
      fail(path, `must be a multiple of ${s.multipleOf}; got ${v}`);
  }
}
