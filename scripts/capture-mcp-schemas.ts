/**
 * Captures the tool schemas of the MCP schema corpus (tests/fixtures/mcp-schemas/corpus.json):
 * from real servers (listed over stdio, as discovery lists them), and from the generators servers
 * use, run here: zod-to-json-schema with zod 3 (in the folder where npm resolved zod 3 for
 * server-sequential-thinking), zod 4's `z.toJSONSchema`, and pydantic 2 (`model_json_schema`, as the
 * Python SDK's FastMCP builds a tool's schema from its arguments). The Go SDK's schemas
 * (jsonschema-go's `For[T]`) are written by hand from its documented output: Go is not installed
 * here. Each entry keeps the valid and invalid arguments written for it by hand; a new entry starts
 * with none, and the corpus test fails until it has some.
 *
 *   npx tsx scripts/capture-mcp-schemas.ts
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { McpPool } from '../activities/mcp/pool';
import { PROJECT_ROOT } from '../shared/project-root';
import { MCP_SERVERS, mcpConfig } from '../testkit/mcp';
import { installMcpServers, mcpServerOf } from '../testkit/mcp-servers';
import { PG_URL } from '../testkit/sql-fixtures';

const CORPUS = path.join(PROJECT_ROOT, 'tests', 'fixtures', 'mcp-schemas', 'corpus.json');

/** One schema of the corpus, with arguments its reference validator accepts and refuses. */
export interface CorpusEntry {
  id: string;
  generator: string;
  source: string;
  schema: Record<string, unknown>;
  valid: unknown[];
  invalid: unknown[];
}

type Captured = Omit<CorpusEntry, 'valid' | 'invalid'>;

/** The tools taken from each server: those whose schemas use the most of JSON Schema. */
const SERVER_TOOLS: Record<string, string[]> = {
  filesystem: ['read_text_file', 'edit_file', 'search_files'],
  memory: ['create_entities', 'create_relations'],
  everything: ['get-annotated-message', 'get-resource-reference', 'trigger-long-running-operation'],
  thinking: ['sequentialthinking'],
  postgres: ['query'],
  eslint: ['lint-files'],
  coderunner: ['run-code'],
};

async function fromServers(): Promise<Captured[]> {
  for (const set of ['reference', 'eslint', 'code-runner'] as const) installMcpServers(set);
  const servers = {
    filesystem: {
      pkg: '@modelcontextprotocol/server-filesystem',
      entry: MCP_SERVERS.filesystem,
      args: [PROJECT_ROOT],
    },
    memory: { pkg: '@modelcontextprotocol/server-memory', entry: MCP_SERVERS.memory, args: [] },
    everything: {
      pkg: '@modelcontextprotocol/server-everything',
      entry: MCP_SERVERS.everything,
      args: ['stdio'],
    },
    thinking: { ...mcpServerOf('reference', '@modelcontextprotocol/server-sequential-thinking'), args: [] },
    postgres: { ...mcpServerOf('reference', '@modelcontextprotocol/server-postgres'), args: [PG_URL] },
    eslint: { ...mcpServerOf('eslint', '@eslint/mcp'), args: [] },
    coderunner: { ...mcpServerOf('code-runner', 'mcp-server-code-runner'), args: [] },
  };
  const pool = new McpPool(
    mcpConfig(
      Object.fromEntries(
        Object.entries(servers).map(([name, s]) => [
          name,
          { command: process.execPath, args: [s.entry, ...s.args] },
        ]),
      ),
    ),
  );
  const out: Captured[] = [];
  try {
    for (const [name, s] of Object.entries(servers)) {
      const version = 'version' in s ? s.version : ownVersion(s.pkg);
      const pkg = 'pkg' in s ? s.pkg : s.name;
      const { tools } = await pool.tools(name);
      for (const tool of SERVER_TOOLS[name] ?? []) {
        const t = tools.find((x) => x.name === tool);
        if (!t) throw new Error(`${pkg} has no tool ${tool}`);
        out.push({
          id: `${pkg}/${tool}`,
          generator: 'server',
          source: `${pkg} ${version}, tools/list`,
          schema: t.inputSchema,
        });
      }
    }
  } finally {
    await pool.close();
  }
  return out;
}

function ownVersion(pkg: string): string {
  const file = path.join(PROJECT_ROOT, 'node_modules', pkg, 'package.json');
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
}

/** zod 3 + zod-to-json-schema, run where npm resolved them for the reference servers. */
function fromZod3(): Captured[] {
  const cwd = installMcpServers('reference');
  const script = `
const { z } = require('zod');
const { zodToJsonSchema } = require('zod-to-json-schema');
const point = z.object({ x: z.number(), y: z.number() });
const shape = z.object({
  from: point,
  to: point,
  label: z.string().min(1).max(40).optional(),
  color: z.enum(['red', 'green', 'blue']).default('red'),
  tags: z.array(z.string().regex(/^[a-z][a-z0-9-]*$/)).max(5).optional(),
  weight: z.number().int().min(0).max(100).multipleOf(5).nullable(),
}).strict();
const node = z.lazy(() => z.object({ name: z.string(), children: z.array(node).optional() }));
const tree = z.object({ root: node, depth: z.number().int().positive() });
const action = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('create'), name: z.string(), email: z.string().email() }),
  z.object({ kind: z.literal('delete'), id: z.string().uuid() }),
]);
const request = z.object({
  action,
  headers: z.record(z.string()),
  when: z.string().datetime().optional(),
  range: z.tuple([z.number(), z.number()]),
  meta: z.intersection(z.object({ a: z.string() }), z.object({ b: z.boolean() })),
});
const shared = z.object({ id: z.string().cuid() });
const withDefs = z.object({ owner: shared, reviewer: shared.optional(), url: z.string().url() });
const out = {
  'reused-objects': zodToJsonSchema(shape),
  'recursive-lazy': zodToJsonSchema(tree),
  'union-record-tuple-intersection': zodToJsonSchema(request),
  'definitions-strategy': zodToJsonSchema(withDefs, { definitions: { shared } }),
  'openapi3-target': zodToJsonSchema(shape, { target: 'openApi3' }),
};
process.stdout.write(JSON.stringify({ versions: [require('zod/package.json').version, JSON.parse(require('fs').readFileSync('node_modules/zod-to-json-schema/package.json', 'utf8')).version], out }));
`;
  const r = spawnSync(process.execPath, ['-e', script], { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`zod 3 capture failed: ${r.stderr}`);
  const { versions, out } = JSON.parse(r.stdout) as {
    versions: string[];
    out: Record<string, Record<string, unknown>>;
  };
  return Object.entries(out).map(([id, schema]) => ({
    id: `zod-to-json-schema/${id}`,
    generator: 'zod-to-json-schema',
    source: `zod ${versions[0]} + zod-to-json-schema ${versions[1]}`,
    schema,
  }));
}

/** zod 4's own `z.toJSONSchema`, as the MCP SDK calls it for input schemas. */
function fromZod4(): Captured[] {
  const Category = z.enum(['bug', 'feature', 'question']).meta({ id: 'Category' });
  interface Comment {
    text: string;
    replies?: Comment[];
  }
  const CommentSchema: z.ZodType<Comment> = z.object({
    text: z.string().min(1),
    get replies() {
      return z.array(CommentSchema).optional();
    },
  });
  const issue = z.object({
    title: z.string().min(3).max(120),
    category: Category,
    labels: z.array(z.string()).default([]),
    assignee: z.email().nullable().optional(),
    estimate: z.number().positive().lte(40).optional(),
    due: z.iso.date().optional(),
    thread: CommentSchema.optional(),
    position: z.tuple([z.int(), z.int()]).optional(),
    extra: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
  });
  const event = z.discriminatedUnion('type', [
    z.object({ type: z.literal('click'), x: z.int().nonnegative(), y: z.int().nonnegative() }),
    z.object({ type: z.literal('key'), key: z.string().length(1), shift: z.boolean().default(false) }),
  ]);
  const events = z.object({
    events: z.array(event).min(1),
    id: z.uuid(),
    name: z.string().regex(/^\p{L}[\p{L} ]*$/u),
  });
  const version = (
    JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'node_modules', 'zod', 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;
  const to = (s: z.ZodType, target?: 'draft-7') =>
    z.toJSONSchema(s, { io: 'input', ...(target ? { target } : {}) }) as Record<string, unknown>;
  return [
    { id: 'zod4/recursive-getter-and-registry', schema: to(issue) },
    { id: 'zod4/discriminated-union-unicode', schema: to(events) },
    { id: 'zod4/draft-7-target', schema: to(issue, 'draft-7') },
  ].map((e) => ({ ...e, generator: 'zod 4 toJSONSchema', source: `zod ${version}` }));
}

/** pydantic 2, as FastMCP builds a tool's argument schema (a model of the function's parameters). */
function fromPydantic(): Captured[] {
  const script = `
import json, enum, datetime, uuid
from typing import Annotated, Literal, Optional, Union
import pydantic
from pydantic import BaseModel, Field

class Priority(str, enum.Enum):
    low = "low"
    high = "high"

class Address(BaseModel):
    street: str
    city: str
    zip: Annotated[str, Field(pattern=r"^[0-9]{5}$")]

class Folder(BaseModel):
    name: str
    children: list["Folder"] = []

class Cat(BaseModel):
    pet_type: Literal["cat"]
    meows: int

class Dog(BaseModel):
    pet_type: Literal["dog"]
    barks: float

class create_ticketArguments(BaseModel):
    title: Annotated[str, Field(min_length=1, max_length=80, description="Short summary")]
    priority: Priority = Priority.low
    due: Optional[datetime.date] = None
    assignee_id: Optional[uuid.UUID] = None
    address: Optional[Address] = None
    points: Annotated[int, Field(ge=1, le=13)] = 1
    ratio: Annotated[float, Field(gt=0, lt=1, multiple_of=0.25)] = 0.5
    tags: list[str] = []
    scores: dict[str, int] = {}

class organizeArguments(BaseModel):
    root: Folder
    pet: Union[Cat, Dog] = Field(discriminator="pet_type")
    pair: tuple[int, str]
    mode: Literal["copy", "move"] = "copy"
    note: Union[str, int, None] = None

out = {
  "fastmcp-style-arguments": create_ticketArguments.model_json_schema(),
  "recursive-discriminated-tuple": organizeArguments.model_json_schema(),
}
print(json.dumps({"version": pydantic.VERSION, "out": out}))
`;
  const r = spawnSync('python3', ['-c', script], { encoding: 'utf8' });
  if (r.status !== 0)
    throw new Error(`pydantic capture failed (is pydantic 2 installed for python3?): ${r.stderr}`);
  const { version, out } = JSON.parse(r.stdout) as {
    version: string;
    out: Record<string, Record<string, unknown>>;
  };
  return Object.entries(out).map(([id, schema]) => ({
    id: `pydantic/${id}`,
    generator: 'pydantic model_json_schema',
    source: `pydantic ${version}`,
    schema,
  }));
}

/**
 * The Go SDK's schemas (github.com/google/jsonschema-go `For[T]`), written by hand from its
 * documentation and source: structs are objects with `additionalProperties: false` and every field
 * without `omitempty` required; pointers and slices admit null; unsigned integers have minimum 0,
 * sized integers their range; fixed arrays their length; maps `additionalProperties`; time.Time a
 * string; the `jsonschema` tag is the description. No `$ref` (For refuses recursive types).
 */
function fromGo(): Captured[] {
  // type SearchArgs struct {
  //   Query    string            `json:"query" jsonschema:"what to look for"`
  //   Limit    *int              `json:"limit,omitempty"`
  //   Kinds    []string          `json:"kinds"`
  //   Boost    map[string]float64 `json:"boost,omitempty"`
  //   Level    uint8             `json:"level"`
  //   Since    time.Time         `json:"since,omitempty"`
  //   Box      [2]float64        `json:"box,omitempty"`
  //   Owner    struct{ Name string `json:"name"`; Age uint `json:"age,omitempty"` } `json:"owner"`
  // }
  const schema = {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'what to look for' },
      limit: { type: ['null', 'integer'] },
      kinds: { type: ['null', 'array'], items: { type: 'string' } },
      boost: { type: 'object', additionalProperties: { type: 'number' } },
      level: { type: 'integer', minimum: 0, maximum: 255 },
      since: { type: 'string' },
      box: { type: 'array', items: { type: 'number' }, minItems: 2, maxItems: 2 },
      owner: {
        type: 'object',
        properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } },
        required: ['name'],
        additionalProperties: false,
      },
    },
    required: ['query', 'kinds', 'level', 'owner'],
    additionalProperties: false,
  };
  return [
    {
      id: 'go-sdk/struct-with-pointers-slices-maps',
      generator: 'Go SDK (jsonschema-go For[T])',
      source: 'written by hand from jsonschema-go’s documented output (Go is not installed here)',
      schema,
    },
  ];
}

async function main(): Promise<void> {
  const captured = [...(await fromServers()), ...fromZod3(), ...fromZod4(), ...fromPydantic(), ...fromGo()];
  const before = fs.existsSync(CORPUS) ? (JSON.parse(fs.readFileSync(CORPUS, 'utf8')) as CorpusEntry[]) : [];
  const cases = new Map(before.map((e) => [e.id, e]));
  const corpus: CorpusEntry[] = captured.map((c) => ({
    ...c,
    valid: cases.get(c.id)?.valid ?? [],
    invalid: cases.get(c.id)?.invalid ?? [],
  }));
  fs.mkdirSync(path.dirname(CORPUS), { recursive: true });
  fs.writeFileSync(CORPUS, `${JSON.stringify(corpus, null, 2)}\n`);
  const missing = corpus.filter((e) => e.valid.length === 0 || e.invalid.length === 0).map((e) => e.id);
  console.log(`${corpus.length} schemas in ${path.relative(PROJECT_ROOT, CORPUS)}`);
  if (missing.length) console.log(`write valid and invalid arguments for: ${missing.join(', ')}`);
}

void main();
