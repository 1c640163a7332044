/**
 * How providers ask a model natively for an answer matching the run's output schema. Whatever the
 * provider does, the workflow validates the answer itself; asking natively only makes a valid
 * answer likely on the first try.
 */

/** The name an answer schema goes by when its `title` cannot be one (also the Anthropic answer tool's name). */
export const DEFAULT_OUTPUT_NAME = 'final_answer';

/** Names OpenAI accepts for a `json_schema` response format, and Anthropic for a tool. */
const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The schema's name: its `title` when that is a valid name no tool has, else `final_answer`. */
export function outputName(schema: Record<string, unknown>, toolNames: readonly string[] = []): string {
  const title = typeof schema.title === 'string' ? schema.title.trim().replace(/\s+/g, '_') : '';
  return NAME.test(title) && !toolNames.includes(title) ? title : DEFAULT_OUTPUT_NAME;
}

/** Keywords OpenAI's strict structured outputs accept. */
const STRICT_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  '$ref',
  '$defs',
  'definitions',
  'title',
  'description',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A wrapped answer's JSON text unwrapped (`{"value": x}` → `x`); other text is left as it is. */
export function unwrapAnswer(text: string): string {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) && 'value' in parsed) {
      return JSON.stringify(parsed.value);
    }
  } catch {
    // Not JSON: the workflow's validation tells the model so.
  }
  return text;
}

/**
 * Whether OpenAI's strict mode can take the schema as it is: an object at the root, every object
 * closed (`additionalProperties: false`) with every property required, and only the keywords strict
 * mode supports. Otherwise the schema is sent with `strict: false`, as guidance.
 */
export function openAIStrictCompatible(schema: Record<string, unknown>): boolean {
  if (schema.type !== 'object') return false;
  const ok = (s: unknown): boolean => {
    if (!isRecord(s)) return false;
    if (!Object.keys(s).every((k) => STRICT_KEYWORDS.has(k))) return false;
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (types.includes('object')) {
      const properties = isRecord(s.properties) ? s.properties : {};
      const required = Array.isArray(s.required) ? s.required : [];
      if (s.additionalProperties !== false) return false;
      if (!Object.keys(properties).every((k) => required.includes(k))) return false;
    }
    const subs = [
      ...Object.values(isRecord(s.properties) ? s.properties : {}),
      ...Object.values(isRecord(s.$defs) ? s.$defs : {}),
      ...Object.values(isRecord(s.definitions) ? s.definitions : {}),
      ...(s.items === undefined ? [] : [s.items]),
      ...(Array.isArray(s.anyOf) ? (s.anyOf as unknown[]) : []),
    ];
    return subs.every(ok);
  };
  return ok(schema);
}

/**
 * An answer schema with an object at its root, as a tool's input schema and OpenAI's response
 * format require: another root is wrapped in `{ value }` (and the answer unwrapped on its way back).
 */
export function objectRootSchema(schema: Record<string, unknown>): {
  schema: Record<string, unknown>;
  wrapped: boolean;
} {
  if (schema.type === 'object') return { schema, wrapped: false };
  const { $defs, definitions, ...rest } = schema;
  return {
    schema: {
      type: 'object',
      properties: { value: rest },
      required: ['value'],
      additionalProperties: false,
      ...($defs === undefined ? {} : { $defs }),
      ...(definitions === undefined ? {} : { definitions }),
    },
    wrapped: true,
  };
}
