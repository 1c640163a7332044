/**
 * The workflow's JSON Schema check without a server: every keyword real servers use, judged the
 * same as ajv (the reference, run here in Node, where `new Function` is allowed), the errors the
 * model reads, and the schemas it refuses (invalid, a `$ref` to a URL, a cycle with no base case,
 * over the byte budget).
 */
import fs from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import { jsonSchemaArgsChecker, jsonSchemaProblems } from '../../shared/tools/json-schema-check';
import { SIZE_BUDGETS } from '../../shared/temporal-limits';
import { PROJECT_ROOT } from '../../shared/project-root';

/** ajv as the reference: the dialect the schema names (2020-12 when it names none), format as an annotation. */
function reference(schema: Record<string, unknown>): (v: unknown) => boolean {
  const draft07 = typeof schema.$schema === 'string' && schema.$schema.includes('draft-07');
  const ajv = draft07
    ? new Ajv({ strict: false, validateFormats: false })
    : new Ajv2020({ strict: false, validateFormats: false });
  const validate = ajv.compile(schema);
  return (v) => validate(v) === true;
}

const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  ...extra,
});

/** [what, schema, valid values, invalid values] */
const CASES: [string, Record<string, unknown>, unknown[], unknown[]][] = [
  [
    'a $ref to a sibling property, nested (zod-to-json-schema reusing a schema)',
    {
      $schema: 'http://json-schema.org/draft-07/schema#',
      ...obj(
        {
          flag: { type: ['boolean', 'string'] },
          again: { $ref: '#/properties/flag', description: 'reused' },
          third: { $ref: '#/properties/again' },
        },
        { required: ['flag'], additionalProperties: false },
      ),
    },
    [{ flag: true }, { flag: 'yes', again: false, third: 'x' }],
    [{}, { flag: 1 }, { flag: true, again: 2 }, { flag: true, third: null }, { flag: true, other: 1 }],
  ],
  [
    'draft-07 definitions, recursive through properties',
    {
      $schema: 'http://json-schema.org/draft-07/schema#',
      ...obj(
        { tree: { $ref: '#/definitions/node' } },
        {
          definitions: {
            node: obj(
              {
                name: { type: 'string' },
                children: { type: 'array', items: { $ref: '#/definitions/node' } },
              },
              { required: ['name'] },
            ),
          },
        },
      ),
    },
    [{ tree: { name: 'a', children: [{ name: 'b', children: [{ name: 'c' }] }] } }],
    [{ tree: { name: 'a', children: [{ children: [] }] } }, { tree: { name: 1 } }],
  ],
  [
    '$defs and a root recursion (#)',
    obj({ value: { type: 'integer' }, next: { $ref: '#' } }, { required: ['value'] }),
    [{ value: 1, next: { value: 2, next: { value: 3 } } }],
    [{ value: 1, next: { value: 'x' } }, { value: 1.5 }],
  ],
  [
    'an anchor',
    obj({ a: { $ref: '#item' } }, { $defs: { item: { $anchor: 'item', type: 'string', minLength: 2 } } }),
    [{ a: 'ok' }],
    [{ a: 'x' }, { a: 3 }],
  ],
  [
    'if / then / else',
    obj(
      { kind: { enum: ['file', 'url'] }, path: { type: 'string' }, url: { type: 'string' } },
      {
        required: ['kind'],
        if: { properties: { kind: { const: 'file' } } },
        then: { required: ['path'] },
        else: { required: ['url'] },
      },
    ),
    [
      { kind: 'file', path: '/a' },
      { kind: 'url', url: 'http://x' },
    ],
    [{ kind: 'file', url: 'x' }, { kind: 'url' }, { kind: 'other', url: 'x' }],
  ],
  [
    'dependentRequired, dependentSchemas and draft-07 dependencies',
    obj(
      { card: { type: 'string' }, billing: { type: 'string' }, cvv: { type: 'string' } },
      {
        dependentRequired: { card: ['billing'] },
        dependentSchemas: { billing: { required: ['cvv'] } },
      },
    ),
    [{}, { card: 'c', billing: 'b', cvv: '1' }, { cvv: '1' }],
    [{ card: 'c' }, { billing: 'b' }],
  ],
  [
    'draft-07 dependencies, both forms',
    {
      $schema: 'http://json-schema.org/draft-07/schema#',
      ...obj(
        {},
        { dependencies: { a: ['b'], c: { properties: { d: { type: 'number' } }, required: ['d'] } } },
      ),
    },
    [{ a: 1, b: 2 }, { c: 1, d: 2 }, {}],
    [{ a: 1 }, { c: 1 }, { c: 1, d: 'x' }],
  ],
  [
    'unevaluatedProperties through allOf and $ref',
    obj(
      { id: { type: 'string' } },
      {
        allOf: [{ $ref: '#/$defs/named' }],
        anyOf: [{ properties: { x: true } }, { properties: { y: true } }],
        unevaluatedProperties: false,
        $defs: { named: { properties: { name: { type: 'string' } } } },
      },
    ),
    [{ id: 'a', name: 'n' }, { x: 1 }, { y: 2, id: 'b' }],
    [{ id: 'a', extra: 1 }, { name: 1 }],
  ],
  [
    'unevaluatedProperties with a schema, and if/then annotations',
    obj(
      { a: { type: 'string' } },
      {
        if: { properties: { a: { const: 'x' } }, required: ['a'] },
        then: { properties: { b: { type: 'number' } } },
        unevaluatedProperties: { type: 'boolean' },
      },
    ),
    [
      { a: 'x', b: 1 },
      { a: 'y', c: true },
      { a: 'x', b: 2, c: false },
    ],
    [{ a: 'y', b: 1 }, { c: 'no' }],
  ],
  [
    'prefixItems, items, contains, unevaluatedItems',
    obj({
      t: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: { type: 'boolean' } },
      c: { type: 'array', contains: { type: 'integer', minimum: 10 }, minContains: 2, maxContains: 3 },
      u: { type: 'array', prefixItems: [{ type: 'string' }], unevaluatedItems: false },
      uniq: { type: 'array', uniqueItems: true, minItems: 1, maxItems: 3 },
    }),
    [{ t: ['a', 1, true, false] }, { c: [10, 11, 'x'] }, { u: ['a'] }, { uniq: [{ a: 1 }, { a: 2 }] }],
    [
      { t: ['a', 'b'] },
      { t: ['a', 1, 'x'] },
      { c: [10] },
      { c: [10, 11, 12, 13] },
      { u: ['a', 'b'] },
      { uniq: [] },
      { uniq: [{ a: 1 }, { a: 1 }] },
      { uniq: [1, 2, 3, 4] },
    ],
  ],
  [
    'draft-07 tuple items and additionalItems',
    {
      $schema: 'http://json-schema.org/draft-07/schema#',
      ...obj({
        p: { type: 'array', items: [{ type: 'number' }, { type: 'number' }], additionalItems: false },
      }),
    },
    [{ p: [1, 2] }, { p: [1] }],
    [{ p: [1, 2, 3] }, { p: ['x'] }],
  ],
  [
    'Unicode patterns, patternProperties, propertyNames',
    obj(
      { name: { type: 'string', pattern: '^\\p{L}+$' } },
      {
        patternProperties: { '^x-\\p{Ll}+$': { type: 'string' } },
        propertyNames: { maxLength: 12 },
        additionalProperties: false,
      },
    ),
    [{ name: 'Zoë' }, { name: '東京' }, { 'x-ok': 's' }],
    [{ name: 'a1' }, { 'x-OK': 's' }, { 'x-ok': 1 }, { averyveryverylongname: 1 }],
  ],
  [
    'numbers: bounds, exclusive bounds, multipleOf, integer',
    obj({
      n: { type: 'integer', minimum: 1, maximum: 10 },
      r: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
      m: { type: 'number', multipleOf: 0.5 },
    }),
    [{ n: 1 }, { n: 10.0 }, { r: 0.5 }, { m: 2.5 }],
    [{ n: 0 }, { n: 2.5 }, { r: 0 }, { r: 1 }, { m: 0.3 }, { n: '3' }],
  ],
  [
    'strings: lengths count code points; enum, const, not, oneOf',
    obj({
      s: { type: 'string', minLength: 2, maxLength: 3 },
      e: { enum: ['a', 1, null, { k: [1] }] },
      c: { const: { x: 1 } },
      n: { not: { type: 'string' } },
      o: { oneOf: [{ type: 'integer' }, { type: 'number', minimum: 5 }] },
    }),
    [{ s: '😀😀' }, { e: null }, { e: { k: [1] } }, { c: { x: 1 } }, { n: 1 }, { o: 1 }, { o: 5.5 }],
    [{ s: '😀' }, { s: 'abcd' }, { e: 'b' }, { c: { x: 2 } }, { n: 's' }, { o: 6 }, { o: 2.5 }],
  ],
  [
    'object counts, booleans as schemas, anyOf of nulls (pydantic Optional)',
    obj(
      { opt: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null }, never: false, any: true },
      { minProperties: 1, maxProperties: 2 },
    ),
    [{ opt: null }, { opt: 's', any: [1] }],
    [{}, { never: 1 }, { opt: 1 }, { opt: 's', any: 1, x: 2 }],
  ],
  [
    'OpenAPI 3.0 nullable (zod-to-json-schema openApi3 target)',
    obj({ a: { type: 'string', nullable: true } }),
    [{ a: null }, { a: 's' }],
    [{ a: 1 }],
  ],
];

test.each(CASES)('%s: judged as ajv judges it', (_what, schema, valid, invalid) => {
  expect(jsonSchemaProblems(schema)).toEqual([]);
  const check = jsonSchemaArgsChecker(schema);
  const ref = reference(schema);
  for (const v of valid) expect([v, ref(v), check(v).ok]).toEqual([v, true, true]);
  for (const v of invalid) expect([v, ref(v), check(v).ok]).toEqual([v, false, false]);
});

test('valid arguments come back unchanged: no defaults added, unknown fields kept when the schema allows them', () => {
  const check = jsonSchemaArgsChecker(obj({ a: { type: 'string', default: 'd' } }), { name: 't' });
  const args = { extra: { kept: true } };
  expect(check(args)).toEqual({ ok: true, value: args });
});

test('errors name each field and what to fix, for the model to read', () => {
  const check = jsonSchemaArgsChecker(
    obj(
      {
        a: { type: 'number' },
        b: { type: 'integer', minimum: 1 },
        mode: { enum: ['fast', 'slow'] },
        items: { type: 'array', items: { type: 'string', pattern: '^[a-z]+$' } },
      },
      { required: ['a', 'b'], additionalProperties: false },
    ),
    { name: 'get-sum' },
  );
  const r = check({ a: 'one', mode: 'medium', items: ['ok', 'NO'], c: 1 });
  expect(r).toEqual({
    ok: false,
    error:
      'Invalid arguments for get-sum: b: is required; a: expected number, got string "one"; ' +
      'mode: must be one of "fast", "slow"; got "medium"; items[1]: must match the pattern ^[a-z]+$; got "NO"; ' +
      'c: is not a field of the schema (its fields: a, b, mode, items). Fix them and call the tool again.',
  });
  expect(check([])).toEqual({
    ok: false,
    error:
      'Invalid arguments for get-sum: (arguments): expected object, got array. Fix them and call the tool again.',
  });
  // anyOf: the closest shape's problems, not just "matches none".
  const union = jsonSchemaArgsChecker(
    obj({ at: { anyOf: [obj({ x: { type: 'number' } }, { required: ['x'] }), { type: 'string' }] } }),
  );
  expect(union({ at: { x: 's' } })).toEqual({
    ok: false,
    error:
      'Invalid arguments: at: matches none of the 2 allowed shapes (anyOf); at.x: expected number, got string "s". Fix them and call the tool again.',
  });
});

test('deep values and deep recursion are refused with a message, never a thrown error', () => {
  const check = jsonSchemaArgsChecker(obj({ next: { $ref: '#' } }));
  let deep: Record<string, unknown> = {};
  for (let i = 0; i < 100; i++) deep = { next: deep };
  expect(check(deep)).toEqual({
    ok: false,
    error: expect.stringContaining('(arguments): nests deeper than 64 levels'),
  });
  let fine: Record<string, unknown> = {};
  for (let i = 0; i < 60; i++) fine = { next: fine };
  expect(check(fine).ok).toBe(true);
});

test('a backtracking pattern is left to the server: the check never stalls the workflow task', () => {
  const check = jsonSchemaArgsChecker(obj({ s: { type: 'string', pattern: '^(a+)+$' } }));
  const started = Date.now();
  expect(check({ s: `${'a'.repeat(40)}!` }).ok).toBe(true);
  expect(Date.now() - started).toBeLessThan(100);
  expect(check({ s: 1 }).ok).toBe(false);
});

test('schemas it cannot follow are refused, saying why', () => {
  const problems: [string, unknown, RegExp][] = [
    ['not a schema', 'string', /it is not a JSON Schema/],
    [
      'a $ref to a URL',
      obj({ a: { $ref: 'https://example.com/a.json' } }),
      /properties\.a: "\$ref": "https:\/\/example\.com\/a\.json" points outside the schema \(a URL or another document\)/,
    ],
    ['a $ref to another file', obj({ a: { $ref: 'defs.json#/A' } }), /points outside the schema/],
    [
      'a $ref to nothing',
      obj({ a: { $ref: '#/definitions/Missing' } }),
      /"#\/definitions\/Missing" points to nothing/,
    ],
    ['an unknown anchor', obj({ a: { $ref: '#nope' } }), /names no anchor/],
    [
      'a cycle with no base case',
      obj(
        { a: { $ref: '#/$defs/A' } },
        { $defs: { A: { $ref: '#/$defs/B' }, B: { allOf: [{ $ref: '#/$defs/A' }] } } },
      ),
      /a cycle with no base case/,
    ],
    ['the root referring to itself', { $ref: '#' }, /a cycle with no base case/],
    ['a bad type', obj({ a: { type: 'text' } }), /properties\.a\.type: must be one of string, number/],
    [
      'a bad pattern',
      obj({ a: { type: 'string', pattern: '([a-z' } }),
      /properties\.a\.pattern: is not a valid regular expression/,
    ],
    ['required not a list', obj({}, { required: 'a' }), /required: must be a list of property names/],
    ['a negative length', obj({ a: { type: 'string', minLength: -1 } }), /minLength: must be a whole number/],
    [
      'anyOf not a list',
      obj({ a: { anyOf: { type: 'string' } } }),
      /anyOf: must be a non-empty list of schemas/,
    ],
    ['properties not schemas', obj({ a: 3 }), /properties\.a: must be a schema/],
    [
      'an embedded document',
      obj({ a: { $id: 'https://x.example/a', type: 'string' } }),
      /embedded schema with its own \$id/,
    ],
  ];
  for (const [what, schema, reason] of problems) {
    const found = jsonSchemaProblems(schema);
    expect([what, found.join('; ')]).toEqual([what, expect.stringMatching(reason)]);
  }
  // Recursion through properties or items has a base case: the value ends.
  expect(jsonSchemaProblems(obj({ next: { $ref: '#' } }))).toEqual([]);
  expect(
    jsonSchemaProblems({ anyOf: [{ type: 'string' }, { type: 'array', items: { $ref: '#' } }] }),
  ).toEqual([]);
});

test('a schema over the byte budget is refused, and a checker for a refused schema refuses every call', () => {
  const big = obj(
    Object.fromEntries(
      Array.from({ length: 20_000 }, (_, i) => [
        `field_${i}`,
        { type: 'string', description: 'x'.repeat(20) },
      ]),
    ),
  );
  expect(JSON.stringify(big).length).toBeGreaterThan(1024 * 1024);
  expect(jsonSchemaProblems(big)).toEqual([
    expect.stringMatching(/^it is 1\.\d+ MiB as JSON, over the 32 KiB a tool's schema may take$/),
  ]);
  expect(SIZE_BUDGETS.toolSchemaBytes).toBe(32 * 1024);
  const check = jsonSchemaArgsChecker(obj({ a: { $ref: 'https://example.com/a.json' } }), { name: 'x' });
  expect(check({ a: 1 })).toEqual({
    ok: false,
    error: expect.stringMatching(
      /^The tool x cannot be called: its argument schema cannot be checked \(properties\.a: "\$ref"/,
    ),
  });
});

test('the check imports only our own pure modules and generates no code (the workflow sandbox runs it)', () => {
  const dir = path.join(PROJECT_ROOT, 'shared', 'tools');
  const files = [
    path.join(dir, 'json-schema-check.ts'),
    ...fs.readdirSync(path.join(dir, 'json-schema')).map((f) => path.join(dir, 'json-schema', f)),
  ];
  expect(files.length).toBeGreaterThanOrEqual(5);
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    const imports = [...text.matchAll(/from '([^']+)'/g)].map((m) => m[1]);
    expect([file, imports.filter((i) => !i?.startsWith('.'))]).toEqual([file, []]);
    expect([file, /new Function|\beval\(/.test(text.replace(/\/\*[\s\S]*?\*\//g, ''))]).toEqual([
      file,
      false,
    ]);
  }
});
