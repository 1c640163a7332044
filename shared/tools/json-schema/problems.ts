/**
 * Whether a JSON Schema can be checked inside the workflow, and if not, why: it is not valid JSON
 * Schema (a keyword's value of the wrong kind, a pattern that is no regular expression), a `$ref`
 * points outside it or to nothing, its references loop without reading any of the value (a cycle
 * with no base case), or it is too big or too deep. Pure: workflow code imports it.
 */
import { SIZE_BUDGETS, formatBytes, jsonBytes } from '../../temporal-limits';
import { isRecord, patternRegExp } from './patterns';
import { ONE_SCHEMA, REF_KEYWORDS, SCHEMA_LISTS, SCHEMA_MAPS, SchemaDocument } from './refs';

/** Deepest nesting of schema objects walked; deeper ones are refused rather than risk the stack. */
export const MAX_SCHEMA_DEPTH = 64;
/** Most problems listed for one schema: enough to fix it, bounded for events and logs. */
const MAX_PROBLEMS = 20;

const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'object', 'array']);
const COUNTS = [
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'minContains',
  'maxContains',
];

/** Where in the schema, for messages: `properties.a.items`, or `the schema` at its root. */
function where(path: readonly string[]): string {
  return path.length ? path.join('.') : 'the schema';
}

function isCount(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function isStringList(value: unknown): boolean {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

/**
 * What is wrong with `schema` for the workflow's argument check, as messages naming where; empty
 * when it can be checked faithfully. `budgetBytes` bounds its size as JSON.
 */
export function schemaProblems(
  schema: unknown,
  budgetBytes: number = SIZE_BUDGETS.toolSchemaBytes,
): string[] {
  if (typeof schema === 'boolean') return [];
  if (!isRecord(schema)) return ['it is not a JSON Schema: a schema is an object (or true/false)'];
  let bytes: number;
  try {
    bytes = jsonBytes(schema);
  } catch {
    return ['it is not a JSON Schema: it cannot be written as JSON'];
  }
  if (bytes > budgetBytes) {
    return [
      `it is ${formatBytes(bytes)} as JSON, over the ${formatBytes(budgetBytes)} a tool's schema may take`,
    ];
  }
  const doc = new SchemaDocument(schema);
  const problems: string[] = [];
  const add = (path: readonly string[], message: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(`${where(path)}: ${message}`);
  };
  /** Every schema object seen, with where it was first seen and the schemas it applies in place. */
  const seen = new Map<object, { path: string[]; inPlace: unknown[] }>();

  const walk = (node: unknown, path: string[]): void => {
    if (typeof node === 'boolean') return;
    if (!isRecord(node)) return add(path, 'must be a schema (an object, or true/false)');
    if (seen.has(node)) return;
    if (path.length > MAX_SCHEMA_DEPTH) return add(path, `nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
    const inPlace: unknown[] = [];
    seen.set(node, { path, inPlace });
    const at = (...more: string[]) => [...path, ...more];
    for (const [key, value] of Object.entries(node)) {
      if ((ONE_SCHEMA as readonly string[]).includes(key)) {
        if (['not', 'if', 'then', 'else'].includes(key)) inPlace.push(value);
        walk(value, at(key));
      } else if ((SCHEMA_LISTS as readonly string[]).includes(key)) {
        if (!Array.isArray(value) || value.length === 0) add(at(key), 'must be a non-empty list of schemas');
        else {
          if (key !== 'prefixItems') inPlace.push(...(value as unknown[]));
          value.forEach((sub, i) => walk(sub, at(key, String(i))));
        }
      } else if ((SCHEMA_MAPS as readonly string[]).includes(key)) {
        if (!isRecord(value)) add(at(key), 'must be an object of schemas');
        else
          for (const [name, sub] of Object.entries(value)) {
            if (key === 'patternProperties') checkPattern(name, at(key, name), add);
            if (key === 'dependentSchemas') inPlace.push(sub);
            walk(sub, at(key, name));
          }
      } else if ((REF_KEYWORDS as readonly string[]).includes(key)) {
        if (typeof value !== 'string') add(at(key), 'must be a reference (a string such as "#/$defs/name")');
        else {
          const found = doc.resolve(value);
          if ('problem' in found) add(path, found.problem);
          else {
            inPlace.push(found.schema);
            walk(found.schema, [value]);
          }
        }
      } else {
        keyword(key, value, at(key), add, inPlace, walk, path.length === 0);
      }
    }
  };
  walk(schema, []);
  if (problems.length === 0) {
    const cycle = inPlaceCycle(seen);
    if (cycle)
      add(
        cycle,
        'its references lead back to it without reading any of the value (a cycle with no base case)',
      );
  }
  return problems;
}

type Add = (path: readonly string[], message: string) => void;

/** Checks one keyword that holds no schema of its own (or, for `items` and `dependencies`, may). */
function keyword(
  key: string,
  value: unknown,
  path: string[],
  add: Add,
  inPlace: unknown[],
  walk: (node: unknown, path: string[]) => void,
  root: boolean,
): void {
  switch (key) {
    case 'type': {
      const types = Array.isArray(value) ? value : [value];
      if (types.length === 0 || !types.every((t) => typeof t === 'string' && TYPES.has(t)))
        add(path, `must be one of ${[...TYPES].join(', ')} (or a list of them)`);
      break;
    }
    case 'enum':
      if (!Array.isArray(value)) add(path, 'must be a list of values');
      break;
    case 'required':
      if (!isStringList(value)) add(path, 'must be a list of property names');
      break;
    case 'minimum':
    case 'maximum':
      if (typeof value !== 'number') add(path, 'must be a number');
      break;
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      // A number since draft-06; true/false (modifying minimum/maximum) in draft-04.
      if (typeof value !== 'number' && typeof value !== 'boolean') add(path, 'must be a number');
      break;
    case 'multipleOf':
      if (typeof value !== 'number' || !(value > 0)) add(path, 'must be a number above 0');
      break;
    case 'uniqueItems':
    case 'nullable':
      if (typeof value !== 'boolean') add(path, 'must be true or false');
      break;
    case 'pattern':
      if (typeof value !== 'string') add(path, 'must be a regular expression (a string)');
      else checkPattern(value, path, add);
      break;
    case 'format':
      if (typeof value !== 'string') add(path, 'must be a string');
      break;
    case 'items':
      // A list of schemas (a tuple, up to draft 2019-09) or one schema for every item.
      if (Array.isArray(value)) value.forEach((sub, i) => walk(sub, [...path, String(i)]));
      else walk(value, path);
      break;
    case 'dependentRequired':
      if (!isRecord(value) || !Object.values(value).every(isStringList))
        add(path, 'must map property names to lists of property names');
      break;
    case 'dependencies':
      if (!isRecord(value)) add(path, 'must map property names to schemas or lists of property names');
      else
        for (const [name, dep] of Object.entries(value)) {
          if (Array.isArray(dep)) {
            if (!isStringList(dep)) add([...path, name], 'must be a list of property names');
          } else {
            inPlace.push(dep);
            walk(dep, [...path, name]);
          }
        }
      break;
    case '$id':
      if (typeof value !== 'string') add(path, 'must be a URI');
      else if (!root && !value.startsWith('#'))
        add(
          path,
          'an embedded schema with its own $id (another document inside this one) cannot be followed',
        );
      break;
    default:
      if (COUNTS.includes(key) && !isCount(value)) add(path, 'must be a whole number, 0 or more');
  }
}

function checkPattern(pattern: string, path: string[], add: Add): void {
  try {
    patternRegExp(pattern);
  } catch (err) {
    add(path, `is not a valid regular expression: ${(err as Error).message}`);
  }
}

/**
 * A schema whose in-place applicators (`$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`,
 * `dependentSchemas`) lead back to itself: checking any value would loop forever. Recursion through
 * `properties` or `items` is fine: it ends with the value.
 */
function inPlaceCycle(seen: Map<object, { path: string[]; inPlace: unknown[] }>): string[] | null {
  const state = new Map<object, 'open' | 'done'>();
  const visit = (node: unknown): string[] | null => {
    if (!isRecord(node)) return null;
    const s = state.get(node);
    if (s === 'done') return null;
    if (s === 'open') return seen.get(node)?.path ?? [];
    state.set(node, 'open');
    for (const next of seen.get(node)?.inPlace ?? []) {
      const found = visit(next);
      if (found) return found;
    }
    state.set(node, 'done');
    return null;
  };
  for (const node of seen.keys()) {
    const found = visit(node);
    if (found) return found;
  }
  return null;
}
