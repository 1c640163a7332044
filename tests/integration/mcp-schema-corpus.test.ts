/**
 * The corpus of real tool schemas (tests/fixtures/mcp-schemas/corpus.json, captured by
 * scripts/capture-mcp-schemas.ts from real servers and from the generators servers use: zod 3 with
 * zod-to-json-schema, zod 4, pydantic, the Go SDK). Every schema is offered to the model by real
 * discovery (served over stdio by an SDK server), exactly as written; on each, valid and invalid
 * arguments are judged by the workflow's check exactly as ajv, the reference, judges them.
 */
import fs from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import { MockActivityEnvironment } from '@temporalio/testing';
import { FileContentStore } from '../../activities/content/file-store';
import { discover } from '../../activities/mcp/discover';
import type { McpModelToolSpec } from '../../activities/mcp/discover';
import { McpPool } from '../../activities/mcp/pool';
import { PROJECT_ROOT } from '../../shared/project-root';
import type { McpCatalog } from '../../shared/tools/mcp';
import { jsonSchemaArgsChecker, jsonSchemaProblems } from '../../shared/tools/json-schema-check';
import { mcpConfig } from '../../testkit/mcp';
import { tempDir } from '../../testkit/temporal';

interface CorpusEntry {
  id: string;
  generator: string;
  source: string;
  schema: Record<string, unknown>;
  valid: unknown[];
  invalid: unknown[];
}

const corpus = JSON.parse(
  fs.readFileSync(path.join(PROJECT_ROOT, 'tests', 'fixtures', 'mcp-schemas', 'corpus.json'), 'utf8'),
) as CorpusEntry[];

/** ajv for the dialect the schema names (2020-12, MCP's default, when it names none); `format` an annotation, as the specification's default. */
function reference(schema: Record<string, unknown>): (v: unknown) => boolean {
  const draft07 = typeof schema.$schema === 'string' && schema.$schema.includes('draft-07');
  const ajv = draft07
    ? new Ajv({ strict: false, validateFormats: false })
    : new Ajv2020({ strict: false, validateFormats: false });
  const validate = ajv.compile(schema);
  return (v) => validate(v) === true;
}

test('the corpus holds schemas of every generator, each with valid and invalid arguments', () => {
  const generators = new Set(corpus.map((e) => e.generator));
  expect([...generators].sort()).toEqual(
    [
      'Go SDK (jsonschema-go For[T])',
      'pydantic model_json_schema',
      'server',
      'zod 4 toJSONSchema',
      'zod-to-json-schema',
    ].sort(),
  );
  expect(corpus.length).toBeGreaterThanOrEqual(20);
  for (const e of corpus)
    expect([e.id, e.valid.length > 0, e.invalid.length > 0]).toEqual([e.id, true, true]);
  // What the issue was about: zod-to-json-schema reuses schemas by $ref, and definitions by #/definitions/….
  const refs = corpus.flatMap((e) =>
    [...JSON.stringify(e.schema).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]),
  );
  expect(refs).toEqual(
    expect.arrayContaining([
      '#/properties/nextThoughtNeeded',
      '#/properties/root',
      '#/definitions/shared',
      '#/$defs/Folder',
    ]),
  );
});

test.each(corpus.map((e) => [e.id, e] as const))('%s: judged exactly as ajv judges it', (_id, entry) => {
  expect(jsonSchemaProblems(entry.schema)).toEqual([]);
  const ours = jsonSchemaArgsChecker(entry.schema, { name: 'tool' });
  const ajv = reference(entry.schema);
  // The cases are right by the reference, and the workflow's check says the same of each.
  for (const v of entry.valid) expect([v, ajv(v), ours(v)]).toEqual([v, true, { ok: true, value: v }]);
  for (const v of entry.invalid) {
    const r = ours(v);
    expect([v, ajv(v), r.ok]).toEqual([v, false, false]);
    if (!r.ok)
      expect(r.error).toMatch(/^Invalid arguments for tool: .+\. Fix them and call the tool again\.$/);
  }
});

test('every schema of the corpus is offered to the model through real discovery, exactly as written', async () => {
  const dir = tempDir('mcp-corpus');
  const tools = corpus.map((e, i) => ({ name: `corpus_${i}`, description: e.id, inputSchema: e.schema }));
  fs.writeFileSync(path.join(dir, 'tools.json'), JSON.stringify(tools));
  const pool = new McpPool(
    mcpConfig({
      corpus: {
        command: process.execPath,
        args: [
          '--import',
          'tsx',
          path.join(PROJECT_ROOT, 'testkit', 'mcp-schema-server.ts'),
          path.join(dir, 'tools.json'),
        ],
        cwd: PROJECT_ROOT,
      },
    }),
  );
  try {
    const store = new FileContentStore(path.join(dir, 'store'));
    const catalog: McpCatalog = await new MockActivityEnvironment().run(discover, pool, store, {
      refs: ['mcp:corpus'],
      reserved: [],
    });
    expect(catalog.skipped).toEqual([]);
    expect(catalog.tools.map((t) => t.name)).toEqual(tools.map((t) => t.name));
    const offered = (await store.get(catalog.specsRef)) as McpModelToolSpec[];
    expect(offered.map((s) => [s.name, s.parameters])).toEqual(tools.map((t) => [t.name, t.inputSchema]));
  } finally {
    await pool.close();
  }
}, 60_000);
