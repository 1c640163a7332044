/**
 * MCP tools as pure logic: which input schemas discovery offers (only those the workflow's argument
 * check follows faithfully, never a wrong one), the names the model calls them by, and `mcp:`
 * references.
 */
import { z } from 'zod';
import { schemaProblem } from '../../activities/mcp/discover';
import { modelNameFor, parseMcpRef } from '../../shared/tools/mcp';

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  ...extra,
});

test('a schema the argument check cannot follow is skipped, saying why', () => {
  const problems: [string, unknown, RegExp][] = [
    ['not an object', { type: 'string' }, /not a JSON Schema of type "object"/],
    ['no type', { properties: { a: { type: 'string' } } }, /not a JSON Schema of type "object"/],
    [
      'if/then',
      object(
        { a: { type: 'string' } },
        { if: { properties: { a: { const: 'x' } } }, then: { required: ['b'] } },
      ),
      /cannot be represented: Conditional schemas/,
    ],
    [
      'dependentRequired',
      object({ a: { type: 'string' }, b: { type: 'string' } }, { dependentRequired: { a: ['b'] } }),
      /cannot be represented: dependentSchemas and dependentRequired/,
    ],
    ['unevaluatedProperties', object({}, { unevaluatedProperties: false }), /cannot be represented/],
    ['an external $ref', object({ a: { $ref: 'https://example.com/a.json' } }), /External \$ref/],
    [
      'a draft-07 definitions $ref',
      object({ a: { $ref: '#/definitions/A' } }, { definitions: { A: { type: 'string' } } }),
      /Reference not found: #\/definitions\/A/,
    ],
    // A Unicode property escape means something else without the `u` flag: valid names would be refused.
    [
      'a Unicode pattern',
      object({ name: { type: 'string', pattern: '^\\p{L}+$' } }),
      /pattern "\^\\\\p\{L\}\+\$" needs Unicode regular expressions/,
    ],
    [
      'a Unicode patternProperties key',
      object({ m: { type: 'object', patternProperties: { '^\\u{1F600}': { type: 'string' } } } }),
      /needs Unicode regular expressions/,
    ],
  ];
  for (const [what, schema, reason] of problems)
    expect([what, schemaProblem(schema)]).toEqual([what, expect.stringMatching(reason)]);
});

test('a schema the check follows is offered, and the check agrees with it', () => {
  const cases: [unknown, unknown[], unknown[]][] = [
    [
      object({ n: { type: 'integer', minimum: 1 } }, { required: ['n'] }),
      [{ n: 2 }],
      [{ n: 1.5 }, { n: 0 }, {}],
    ],
    [
      object({ a: { $ref: '#/$defs/A' } }, { $defs: { A: { type: 'string', enum: ['x', 'y'] } } }),
      [{ a: 'x' }],
      [{ a: 'z' }],
    ],
    [object({ a: { type: ['string', 'null'] } }), [{ a: null }, { a: 's' }], [{ a: 1 }]],
    [
      object({ a: { anyOf: [{ type: 'string' }, { type: 'number' }] } }),
      [{ a: 1 }, { a: 's' }],
      [{ a: true }],
    ],
    [object({ a: { type: 'string' } }, { additionalProperties: false }), [{ a: 's' }], [{ a: 's', b: 1 }]],
    [object({ name: { type: 'string', pattern: '^[a-z]+$' } }), [{ name: 'abc' }], [{ name: 'ABC' }]],
  ];
  for (const [schema, valid, invalid] of cases) {
    expect(schemaProblem(schema)).toBeNull();
    const check = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    for (const v of valid) expect([v, check.safeParse(v).success]).toEqual([v, true]);
    for (const v of invalid) expect([v, check.safeParse(v).success]).toEqual([v, false]);
  }
  // Properties the schema allows but does not name reach the server as sent.
  const open = z.fromJSONSchema(object({ a: { type: 'string' } }) as Parameters<typeof z.fromJSONSchema>[0]);
  expect(open.parse({ a: 's', extra: { kept: true } })).toEqual({ a: 's', extra: { kept: true } });
});

test('the model calls a tool by its own name unless it clashes or is no valid tool name: then <server>__<tool>', () => {
  expect(modelNameFor('files', 'read_file', new Set(['calculator']))).toBe('read_file');
  expect(modelNameFor('files', 'read_file', new Set(['read_file']))).toBe('files__read_file');
  expect(modelNameFor('docs', 'search.v2', new Set())).toBe('docs__search_v2');
  expect(modelNameFor('s', 'x'.repeat(100), new Set())).toHaveLength(64);
  expect(modelNameFor('files', 'read_file', new Set(['read_file', 'files__read_file']))).toBeNull();
});

test('mcp: references name a server or one of its tools; malformed ones say what to write', () => {
  expect(parseMcpRef('mcp:files')).toEqual({ server: 'files' });
  expect(parseMcpRef('mcp:files/read_text_file')).toEqual({ server: 'files', tool: 'read_text_file' });
  expect(parseMcpRef('mcp:')).toMatch(/an MCP server name is 1–64 letters.*write mcp:<server>/);
  expect(parseMcpRef('mcp:files/bad tool')).toMatch(/an MCP tool name is 1–128 letters/);
});
