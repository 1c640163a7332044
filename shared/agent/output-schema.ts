/**
 * Structured output: the JSON Schema a run's final answer must match (`output` in the agent input).
 * The workflow validates answers itself, so this validator is pure and deterministic (no Node
 * built-ins, no code generation: ajv compiles validators with `new Function`, which the workflow
 * sandbox must not depend on). It supports the subset of JSON Schema below, which covers what
 * `z.toJSONSchema` writes for plain data; any other keyword is refused when the run starts, so a
 * schema is never half-enforced.
 */
import { z } from 'zod';
import { SIZE_BUDGETS, formatBytes, jsonBytes } from '../temporal-limits';
import { backtracksBadly, jsonEqual, patternRegExp } from '../tools/json-schema/patterns';

/** Repair turns an invalid answer gets unless the run's policy says otherwise. */
export const DEFAULT_OUTPUT_REPAIRS = 2;

/** Keywords that only describe: accepted and not checked (`format` is an annotation, as the spec's default). */
const ANNOTATIONS = new Set([
  '$schema',
  '$id',
  '$comment',
  'title',
  'description',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  'format',
  'contentEncoding',
  'contentMediaType',
]);

/** Keywords the validator checks. */
const ASSERTIONS = new Set([
  'type',
  'enum',
  'const',
  'properties',
  'required',
  'additionalProperties',
  'propertyNames',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'anyOf',
  'oneOf',
  'allOf',
  '$ref',
  '$defs',
  'definitions',
]);

/** The keywords an output schema may use, for error messages and docs. */
export const OUTPUT_SCHEMA_KEYWORDS: readonly string[] = [...ASSERTIONS, ...ANNOTATIONS];

const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'object', 'array']);

/** Deepest schema nesting accepted, and deepest `$ref` chain followed while validating. */
const MAX_SCHEMA_DEPTH = 32;
/** Most problems reported for one answer: enough to repair it, bounded for history and messages. */
const MAX_ISSUES = 20;

/** A JSON Schema object (the subset above). */
export type OutputSchema = Record<string, unknown>;

/** One way an answer misses the schema: where (`address.city`, `items[0]`, `(answer)`) and what. */
export interface OutputIssue {
  path: string;
  message: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonNegativeInt(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** A schema location for messages (they follow the field name `output`): `properties.city`. */
function at(path: string[]): string {
  return path.length ? path.join('.') : 'the schema';
}

/**
 * What is wrong with an output schema, as messages naming where: not an object, too big, a
 * keyword outside the supported subset, a malformed value, a `$ref` that points nowhere. Empty
 * when the schema can be enforced.
 */
export function outputSchemaProblems(schema: unknown): string[] {
  if (!isRecord(schema)) {
    return ['must be a JSON Schema object, such as { "type": "object", "properties": { … } }'];
  }
  const bytes = jsonBytes(schema);
  if (bytes > SIZE_BUDGETS.outputSchemaBytes) {
    return [
      `the schema is ${formatBytes(bytes)} as JSON; at most ${formatBytes(SIZE_BUDGETS.outputSchemaBytes)} is accepted (describe fewer fields, or shorten descriptions)`,
    ];
  }
  const problems: string[] = [];
  const walk = (s: unknown, path: string[]): void => {
    if (problems.length >= MAX_ISSUES) return;
    if (typeof s === 'boolean') return;
    if (!isRecord(s)) {
      problems.push(`${at(path)} must be a schema object (or true/false)`);
      return;
    }
    if (path.length > MAX_SCHEMA_DEPTH) {
      problems.push(`${at(path)} nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
      return;
    }
    for (const [key, value] of Object.entries(s)) {
      const here = [...path, key];
      if (ANNOTATIONS.has(key)) continue;
      if (!ASSERTIONS.has(key)) {
        // The supported keywords are listed once, with the first keyword refused.
        const listed = problems.some((p) => p.includes('; supported: '));
        problems.push(
          `${at(here)}: the keyword "${key}" is not supported in output schemas` +
            (listed ? '' : `; supported: ${OUTPUT_SCHEMA_KEYWORDS.join(', ')}`),
        );
        continue;
      }
      switch (key) {
        case 'type': {
          const types = Array.isArray(value) ? value : [value];
          if (types.length === 0 || !types.every((t) => typeof t === 'string' && TYPES.has(t))) {
            problems.push(`${at(here)} must be one of ${[...TYPES].join(', ')} (or a list of them)`);
          }
          break;
        }
        case 'enum':
          if (!Array.isArray(value) || value.length === 0)
            problems.push(`${at(here)} must be a non-empty list`);
          break;
        case 'required':
          if (!Array.isArray(value) || !value.every((k) => typeof k === 'string')) {
            problems.push(`${at(here)} must be a list of property names`);
          }
          break;
        case 'properties':
        case '$defs':
        case 'definitions':
          if (!isRecord(value)) problems.push(`${at(here)} must be an object of schemas`);
          else for (const [name, sub] of Object.entries(value)) walk(sub, [...here, name]);
          break;
        case 'additionalProperties':
        case 'propertyNames':
        case 'items':
          walk(value, here);
          break;
        case 'prefixItems':
        case 'anyOf':
        case 'oneOf':
        case 'allOf':
          if (!Array.isArray(value) || value.length === 0)
            problems.push(`${at(here)} must be a non-empty list of schemas`);
          else value.forEach((sub, i) => walk(sub, [...here, String(i)]));
          break;
        case 'minItems':
        case 'maxItems':
        case 'minLength':
        case 'maxLength':
          if (!isNonNegativeInt(value)) problems.push(`${at(here)} must be a non-negative integer`);
          break;
        case 'minimum':
        case 'maximum':
        case 'exclusiveMinimum':
        case 'exclusiveMaximum':
          if (typeof value !== 'number') problems.push(`${at(here)} must be a number`);
          break;
        case 'multipleOf':
          if (typeof value !== 'number' || !(value > 0))
            problems.push(`${at(here)} must be a positive number`);
          break;
        case 'uniqueItems':
          if (typeof value !== 'boolean') problems.push(`${at(here)} must be true or false`);
          break;
        case 'pattern':
          if (typeof value !== 'string') problems.push(`${at(here)} must be a regular expression`);
          else
            try {
              patternRegExp(value);
              if (backtracksBadly(value)) {
                problems.push(
                  `${at(here)} repeats a group that ends in a repeat, such as (a+)+: matching it can take exponential time, and it runs inside the workflow; write it without the nested repeat`,
                );
              }
            } catch (err) {
              problems.push(`${at(here)} is not a valid regular expression: ${(err as Error).message}`);
            }
          break;
        case '$ref':
          if (typeof value !== 'string' || resolveRef(schema, value) === undefined) {
            problems.push(
              `${at(here)} must point into this schema: "#", "#/$defs/<name>" or "#/definitions/<name>"`,
            );
          }
          break;
      }
    }
  };
  walk(schema, []);
  return problems;
}

/** The schema a local `$ref` names, or undefined. */
function resolveRef(root: OutputSchema, ref: unknown): unknown {
  if (ref === '#') return root;
  if (typeof ref !== 'string') return undefined;
  const m = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref);
  if (!m) return undefined;
  const defs = root[m[1] as string];
  const name = (m[2] as string).replace(/~1/g, '/').replace(/~0/g, '~');
  return isRecord(defs) && Object.hasOwn(defs, name) ? defs[name] : undefined;
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function hasType(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  return actual === type || (type === 'number' && actual === 'integer');
}

function child(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path === '(answer)' ? '' : path}[${key}]`;
  const name = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
  return path === '(answer)' ? name : `${path}.${name}`;
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/**
 * Where and how `value` misses `schema` (empty when it matches). The schema must have passed
 * `outputSchemaProblems`. Deterministic, and bounded: at most MAX_ISSUES issues.
 */
export function validateOutput(schema: OutputSchema, value: unknown): OutputIssue[] {
  const issues: OutputIssue[] = [];
  collect(schema, schema, value, '(answer)', 0, issues);
  return issues;
}

type Sink = (path: string, message: string) => void;

/** Adds to `issues` where `v` misses `s`; `refs` counts the `$ref` hops taken to get here. */
function collect(
  root: OutputSchema,
  s: unknown,
  v: unknown,
  path: string,
  refs: number,
  issues: OutputIssue[],
): void {
  const add: Sink = (p, message) => {
    if (issues.length < MAX_ISSUES) issues.push({ path: p, message });
  };
  const check = (sub: unknown, item: unknown, p: string, hops = refs) =>
    collect(root, sub, item, p, hops, issues);
  if (s === true || s === undefined) return;
  if (s === false) return add(path, 'is not allowed');
  if (!isRecord(s)) return;
  if (s.$ref !== undefined) {
    if (refs >= MAX_SCHEMA_DEPTH) return add(path, 'the schema refers to itself too deeply');
    check(resolveRef(root, s.$ref), v, path, refs + 1);
  }
  if (s.type !== undefined) {
    const types = (Array.isArray(s.type) ? s.type : [s.type]) as string[];
    if (!types.some((t) => hasType(v, t))) {
      return add(
        path,
        `expected ${types.join(' or ')}, got ${typeOf(v) === 'integer' ? 'number' : typeOf(v)}`,
      );
    }
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => jsonEqual(e, v))) {
    add(path, `must be one of ${s.enum.map(show).join(', ')}; got ${show(v)}`);
  }
  if ('const' in s && !jsonEqual(s.const, v)) add(path, `must be ${show(s.const)}; got ${show(v)}`);
  if (typeof v === 'string') checkString(s, v, path, add);
  if (typeof v === 'number') checkNumber(s, v, path, add);
  if (Array.isArray(v)) {
    const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
    v.forEach((item, i) => check(i < prefix.length ? prefix[i] : s.items, item, child(path, i)));
    if (typeof s.minItems === 'number' && v.length < s.minItems) {
      add(path, `needs at least ${s.minItems} items; has ${v.length}`);
    }
    if (typeof s.maxItems === 'number' && v.length > s.maxItems) {
      add(path, `allows at most ${s.maxItems} items; has ${v.length}`);
    }
    if (s.uniqueItems === true) {
      const dup = v.findIndex((x, i) => v.slice(0, i).some((y) => jsonEqual(x, y)));
      if (dup >= 0) add(child(path, dup), 'repeats an earlier item; items must be unique');
    }
  }
  if (isRecord(v)) {
    const properties = isRecord(s.properties) ? s.properties : {};
    for (const key of Array.isArray(s.required) ? (s.required as string[]) : []) {
      if (!Object.hasOwn(v, key)) add(child(path, key), 'is required');
    }
    for (const [key, item] of Object.entries(v)) {
      if (s.propertyNames !== undefined) check(s.propertyNames, key, child(path, key));
      if (Object.hasOwn(properties, key)) check(properties[key], item, child(path, key));
      else if (s.additionalProperties === false) add(child(path, key), 'is not a field of the schema');
      else check(s.additionalProperties, item, child(path, key));
    }
  }
  if (Array.isArray(s.allOf)) for (const sub of s.allOf) check(sub, v, path);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = s[key];
    if (!Array.isArray(options)) continue;
    const misses = options.map((sub) => {
      const own: OutputIssue[] = [];
      collect(root, sub, v, path, refs, own);
      return own;
    });
    const matching = misses.filter((m) => m.length === 0).length;
    if (matching === 0) {
      // The closest shape's problems say more than "matches none".
      const closest = misses.reduce((a, b) => (b.length < a.length ? b : a));
      add(path, `matches none of the ${options.length} allowed shapes (${key})`);
      for (const issue of closest) add(issue.path, issue.message);
    } else if (key === 'oneOf' && matching > 1) {
      add(path, `matches ${matching} of the shapes; oneOf allows exactly one`);
    }
  }
}

function checkString(s: Record<string, unknown>, v: string, path: string, add: Sink): void {
  // Lengths count code points, as JSON Schema does.
  const length = [...v].length;
  if (typeof s.minLength === 'number' && length < s.minLength)
    add(path, `needs at least ${s.minLength} characters; has ${length}`);
  if (typeof s.maxLength === 'number' && length > s.maxLength)
    add(path, `allows at most ${s.maxLength} characters; has ${length}`);
  if (typeof s.pattern === 'string' && !patternRegExp(s.pattern).test(v))
    add(path, `must match the pattern ${s.pattern}`);
}

function checkNumber(s: Record<string, unknown>, v: number, path: string, add: Sink): void {
  if (typeof s.minimum === 'number' && v < s.minimum) add(path, `must be at least ${s.minimum}; got ${v}`);
  if (typeof s.maximum === 'number' && v > s.maximum) add(path, `must be at most ${s.maximum}; got ${v}`);
  if (typeof s.exclusiveMinimum === 'number' && v <= s.exclusiveMinimum)
    add(path, `must be more than ${s.exclusiveMinimum}; got ${v}`);
  if (typeof s.exclusiveMaximum === 'number' && v >= s.exclusiveMaximum)
    add(path, `must be less than ${s.exclusiveMaximum}; got ${v}`);
  if (typeof s.multipleOf === 'number') {
    const q = v / s.multipleOf;
    if (Math.abs(q - Math.round(q)) > 1e-9) add(path, `must be a multiple of ${s.multipleOf}; got ${v}`);
  }
}

/** An answer read against the schema: its value, or why it does not match. */
export type CheckedOutput = { ok: true; value: unknown } | { ok: false; issues: OutputIssue[] };

/**
 * Deepest nesting of arrays and objects an answer may have. Validation (and measuring) recurse
 * through the value; bounding its depth first keeps them far from the stack's limit, so checking an
 * answer can never throw inside workflow code.
 */
const MAX_OUTPUT_DEPTH = 64;

/** How deep the JSON text's arrays and objects nest (brackets inside strings do not count). */
function nesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '[' || c === '{') deepest = Math.max(deepest, ++depth);
    else if (c === ']' || c === '}') depth -= 1;
  }
  return deepest;
}

/** A Markdown code fence around the whole answer, which models add though asked for bare JSON. */
const FENCED = /^\s*```[A-Za-z]*\s*\n([\s\S]*?)\n?```\s*$/;

/** Parses an answer as JSON (a code fence around it is forgiven) and validates it. */
export function checkOutput(schema: OutputSchema, answer: string | null): CheckedOutput {
  const text = (answer ?? '').replace(FENCED, '$1').trim();
  if (text === '') return { ok: false, issues: [{ path: '(answer)', message: 'is empty; expected JSON' }] };
  const depth = nesting(text);
  if (depth > MAX_OUTPUT_DEPTH) {
    return {
      ok: false,
      issues: [{ path: '(answer)', message: `nests ${depth} levels deep; at most ${MAX_OUTPUT_DEPTH}` }],
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return {
      ok: false,
      issues: [{ path: '(answer)', message: `is not valid JSON (${(err as Error).message})` }],
    };
  }
  const bytes = jsonBytes(value);
  if (bytes > SIZE_BUDGETS.modelOutputBytes) {
    const budget = formatBytes(SIZE_BUDGETS.modelOutputBytes);
    return {
      ok: false,
      issues: [{ path: '(answer)', message: `is ${formatBytes(bytes)} as JSON; at most ${budget}` }],
    };
  }
  const issues = validateOutput(schema, value);
  return issues.length ? { ok: false, issues } : { ok: true, value };
}

/** Issues as one line each: `address.city: is required`. */
export function formatOutputIssues(issues: OutputIssue[]): string {
  return issues.map((i) => `${i.path}: ${i.message}`).join('; ');
}

/**
 * The output schema of a zod schema, for `output` in an agent input. Convert once (at module level,
 * not per run): the result is plain JSON Schema of the subset above.
 */
export function outputSchemaFromZod(schema: z.ZodType): OutputSchema {
  const json = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'throw' }) as OutputSchema;
  // The dialect adds nothing a provider needs; every model call would carry it.
  delete json.$schema;
  const problems = outputSchemaProblems(json);
  if (problems.length)
    throw new TypeError(`This zod schema cannot be an output schema: ${problems.join('; ')}`);
  return json;
}
