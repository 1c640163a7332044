/**
 * MCP tools as pure logic: which input schemas discovery offers (only those the workflow's argument
 * check follows faithfully, never a wrong one), the names the model calls them by, and `mcp:`
 * references.
 */
import { schemaProblem } from '../../activities/mcp/discover';
import { resourcesToolSpec } from '../../activities/mcp/resources';
import { jsonSchemaProblems } from '../../shared/tools/json-schema-check';
import { modelNameFor, parseMcpPromptRef, parseMcpRef } from '../../shared/tools/mcp';

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  ...extra,
});

test('a schema is skipped only when the argument check cannot follow it, saying why', () => {
  const problems: [string, unknown, RegExp][] = [
    ['not an object', { type: 'string' }, /not a JSON Schema of type "object"/],
    ['no type', { properties: { a: { type: 'string' } } }, /not a JSON Schema of type "object"/],
    [
      'an external $ref',
      object({ a: { $ref: 'https://example.com/a.json' } }),
      /cannot be checked: properties\.a: "\$ref": "https:\/\/example\.com\/a\.json" points outside the schema/,
    ],
    [
      'a cycle',
      object({ a: { $ref: '#/$defs/A' } }, { $defs: { A: { $ref: '#/$defs/A' } } }),
      /no base case/,
    ],
    [
      'invalid JSON Schema',
      object({ a: { type: 'text' } }),
      /cannot be checked: properties\.a\.type: must be one of/,
    ],
  ];
  for (const [what, schema, reason] of problems)
    expect([what, schemaProblem(schema)]).toEqual([what, expect.stringMatching(reason)]);
  // Many problems: the first three, and that there are more; bounded for the run's events.
  const many = object(Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, { type: 'text' }])));
  const reason = schemaProblem(many) ?? '';
  expect(reason).toMatch(/^its input schema cannot be checked: properties\.f0\.type: must be one of .*…$/);
  expect(reason.length).toBeLessThanOrEqual(360);
});

test('schemas as servers write them are offered: $refs to properties and definitions, if/then/else, dependentRequired, unevaluatedProperties, Unicode patterns', () => {
  const offered: unknown[] = [
    object({
      a: { type: ['boolean', 'string'] },
      b: { $ref: '#/properties/a' },
      c: { $ref: '#/properties/b' },
    }),
    object({ a: { $ref: '#/definitions/A' } }, { definitions: { A: { type: 'string' } } }),
    object(
      { a: { type: 'string' } },
      { if: { properties: { a: { const: 'x' } } }, then: { required: ['b'] } },
    ),
    object({ a: { type: 'string' }, b: { type: 'string' } }, { dependentRequired: { a: ['b'] } }),
    object({}, { unevaluatedProperties: false }),
    object({ name: { type: 'string', pattern: '^\\p{L}+$' } }),
    object({ m: { type: 'object', patternProperties: { '^\\u{1F600}': { type: 'string' } } } }),
  ];
  for (const schema of offered) expect([schema, schemaProblem(schema)]).toEqual([schema, null]);
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

test('the resources tool names what the server has, within its budget, and says how many more there are', () => {
  const resources = Array.from({ length: 1000 }, (_, i) => ({
    uri: `file:///docs/${i}.md`,
    name: `doc ${i}`,
    mimeType: 'text/markdown',
    description: 'x'.repeat(500),
  }));
  const spec = resourcesToolSpec('docs', { resources, templates: [], more: false, digest: 'd' });
  expect(spec).toEqual(
    expect.objectContaining({
      name: 'docs__resources',
      tool: 'resources/*',
      readOnly: true,
      idempotent: true,
    }),
  );
  expect(spec.description).toContain('It has 1000 resources and 0 templates:');
  expect(spec.description).toContain('- doc 0 <file:///docs/0.md> (text/markdown): xxx');
  expect(spec.description).toMatch(/… and 9\d\d more: list them to see all\.$/);
  expect(Buffer.byteLength(spec.description)).toBeLessThan(4 * 1024);
  expect(jsonSchemaProblems(spec.inputSchema)).toEqual([]);
  const empty = resourcesToolSpec('db', { resources: [], templates: [], more: false, digest: 'd' });
  expect(empty.description).toContain('It has none listed now.');
});

test('prompts are named mcp:<server>/prompt/<name>; as a tool, the name says where it belongs', () => {
  expect(parseMcpPromptRef('mcp:everything/prompt/args-prompt')).toEqual({
    server: 'everything',
    prompt: 'args-prompt',
  });
  expect(parseMcpPromptRef('mcp:everything/args-prompt')).toMatch(
    /an MCP prompt is named mcp:<server>\/prompt\/<name>/,
  );
  expect(parseMcpPromptRef('mcp:everything/prompt/a b')).toMatch(/a prompt name of 1–128 letters/);
  expect(parseMcpRef('mcp:everything/prompt/args-prompt')).toMatch(/is a prompt, not a tool/);
  expect(parseMcpRef('mcp:everything/resources/*')).toEqual({ server: 'everything', tool: 'resources/*' });
});
