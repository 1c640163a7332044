/**
 * `$ref`s inside one schema document: JSON pointers (`#/properties/a`, `#/definitions/A`,
 * `#/$defs/A`, `#/items/0`, nested and recursive), anchors (`#name` from `$anchor`,
 * `$dynamicAnchor` or a draft-07 `"$id": "#name"`), and the document's own `$id` followed by either.
 * A reference to anything else (a URL, another file) cannot be followed: the workflow fetches nothing.
 */
import { isRecord } from './patterns';

/** What a reference names: the schema, or why it cannot be followed. */
export type Resolved = { schema: unknown } | { problem: string };

/** The schema keywords that hold one schema, a list of schemas, or a map of named schemas. */
export const ONE_SCHEMA = [
  'additionalProperties',
  'propertyNames',
  'additionalItems',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
] as const;
export const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'] as const;
export const SCHEMA_MAPS = [
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
] as const;

/** A schema document: its root, its `$id`, and its anchors, for resolving references. */
export class SchemaDocument {
  private readonly anchors = new Map<string, unknown>();
  private readonly cache = new Map<string, Resolved>();
  /** The root's `$id` without a fragment, when it has one. */
  readonly base: string | undefined;

  constructor(readonly root: unknown) {
    const id = isRecord(root) && typeof root.$id === 'string' ? root.$id : undefined;
    this.base = id?.replace(/#.*$/, '') || undefined;
    this.collectAnchors(root, 0);
  }

  /** The schema `ref` names, or why it names nothing this document holds. */
  resolve(ref: string): Resolved {
    let found = this.cache.get(ref);
    if (!found) {
      found = this.lookup(ref);
      this.cache.set(ref, found);
    }
    return found;
  }

  private lookup(ref: string): Resolved {
    let fragment: string;
    if (ref.startsWith('#')) fragment = ref.slice(1);
    else if (this.base !== undefined && (ref === this.base || ref.startsWith(`${this.base}#`)))
      fragment = ref.slice(this.base.length + 1);
    else
      return {
        problem: `"$ref": ${JSON.stringify(ref)} points outside the schema (a URL or another document); only references inside it (#/…) can be followed`,
      };
    let decoded: string;
    try {
      decoded = decodeURIComponent(fragment);
    } catch {
      return { problem: `"$ref": ${JSON.stringify(ref)} is not a valid URI fragment` };
    }
    if (decoded === '') return { schema: this.root };
    if (!decoded.startsWith('/')) {
      return this.anchors.has(decoded)
        ? { schema: this.anchors.get(decoded) }
        : { problem: `"$ref": ${JSON.stringify(ref)} names no anchor of this schema` };
    }
    let node: unknown = this.root;
    for (const raw of decoded.slice(1).split('/')) {
      const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      if (Array.isArray(node) && /^(0|[1-9]\d*)$/.test(token) && Number(token) < node.length) {
        node = node[Number(token)];
      } else if (isRecord(node) && Object.hasOwn(node, token)) {
        node = node[token];
      } else {
        return { problem: `"$ref": ${JSON.stringify(ref)} points to nothing in this schema` };
      }
    }
    return { schema: node };
  }

  private collectAnchors(node: unknown, depth: number): void {
    if (depth > 64) return;
    if (Array.isArray(node)) {
      for (const item of node) this.collectAnchors(item, depth + 1);
      return;
    }
    if (!isRecord(node)) return;
    for (const key of ['$anchor', '$dynamicAnchor'] as const) {
      const name = node[key];
      if (typeof name === 'string' && !this.anchors.has(name)) this.anchors.set(name, node);
    }
    // Draft-07 and earlier name a location with a fragment-only $id.
    if (typeof node.$id === 'string' && node.$id.startsWith('#') && node.$id.length > 1)
      if (!this.anchors.has(node.$id.slice(1))) this.anchors.set(node.$id.slice(1), node);
    for (const [key, value] of Object.entries(node)) {
      // `enum`, `const`, `default` and `examples` hold data, not schemas.
      if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples') continue;
      this.collectAnchors(value, depth + 1);
    }
  }
}

/**
 * The keywords that refer to another schema. Inside one document without embedded resources,
 * `$dynamicRef` and `$recursiveRef` name what `$ref` would: there is no other scope to search.
 */
export const REF_KEYWORDS = ['$ref', '$dynamicRef', '$recursiveRef'] as const;
