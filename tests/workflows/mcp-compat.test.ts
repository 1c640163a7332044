/**
 * MCP servers from npm, as users install them, through real discovery and real calls on a dev
 * server: the three reference servers this repository depends on, `server-sequential-thinking` and
 * `server-postgres` in a folder of their own (where npm resolves zod 3, and the SDK writes `$ref`s),
 * and two widely used community servers that run offline (`@eslint/mcp`, `mcp-server-code-runner`).
 * Each run calls one tool with good arguments (the server answers) and one with bad arguments (the
 * workflow refuses them, naming the field). A server of schemas that cannot be checked (a `$ref` to
 * a URL, a cycle with no base case, 1 MB) has those tools skipped, saying why, and the run goes on.
 *
 * The last test writes what the runs saw as the compatibility table of docs/mcp.md, and fails when
 * the table there differs (DURABLE_AGENT_UPDATE_DOCS=1 rewrites it).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { Worker } from '@temporalio/worker';
import { closeMcpConnections } from '../../activities/mcp';
import { McpPool } from '../../activities/mcp/pool';
import type { AgentEvent, AgentInput, AgentResult } from '../../shared/agent';
import { eventsQuery } from '../../shared/agent';
import { PROJECT_ROOT } from '../../shared/project-root';
import { createAgentWorker } from '../../workers/worker';
import { notificationDelivery } from '../../client/deliver';
import { scheduledActivityTypes } from '../../testkit/history';
import { MCP_SERVERS, mcpConfig } from '../../testkit/mcp';
import type { McpServerSet } from '../../testkit/mcp-servers';
import { installMcpServers, mcpServerOf, resolvedVersion } from '../../testkit/mcp-servers';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { PG_URL, fixtureName } from '../../testkit/sql-fixtures';
import { tempDir, testConfig, uid, workflowBundle } from '../../testkit/temporal';
import { useLocalEnv } from '../support/environments';

const temporal = useLocalEnv();
const dir = tempDir('mcp-compat');
const table = fixtureName('mcpc');
let worker: Worker;
let running: Promise<void>;
let taskQueue: string;
let pool: McpPool;
let config: ReturnType<typeof mcpConfig>;

/** One row of the compatibility table, as the runs below saw it. */
interface Row {
  server: string;
  pkg: string;
  version: string;
  offered: string[];
  listed: number;
  notes: string[];
}
const rows = new Map<string, Row>();

/** The servers, in table order: config name → package (and the set it is installed in, if not ours). */
const SERVERS: { name: string; pkg: string; set?: McpServerSet }[] = [
  { name: 'filesystem', pkg: '@modelcontextprotocol/server-filesystem' },
  { name: 'memory', pkg: '@modelcontextprotocol/server-memory' },
  { name: 'everything', pkg: '@modelcontextprotocol/server-everything' },
  { name: 'thinking', pkg: '@modelcontextprotocol/server-sequential-thinking', set: 'reference' },
  { name: 'postgres', pkg: '@modelcontextprotocol/server-postgres', set: 'reference' },
  { name: 'eslint', pkg: '@eslint/mcp', set: 'eslint' },
  { name: 'coderunner', pkg: 'mcp-server-code-runner', set: 'code-runner' },
];

function ownVersion(pkg: string): string {
  const file = path.join(PROJECT_ROOT, 'node_modules', pkg, 'package.json');
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
}

// The worker stops (inner afterAll) before the file's dev server does (outer afterAll).
describe('MCP servers from npm', () => {
  beforeAll(async () => {
    for (const set of ['reference', 'eslint', 'code-runner'] as const) installMcpServers(set);
    fs.writeFileSync(path.join(dir, 'plan.md'), '# Plan\nOwner: Ada\n');
    fs.writeFileSync(
      path.join(dir, 'eslint.config.js'),
      "export default [{ files: ['**/*.js'], rules: { 'no-unused-vars': 'error' } }];\n",
    );
    fs.writeFileSync(path.join(dir, 'unused.js'), 'const unused = 1;\n');
    fs.writeFileSync(path.join(dir, 'bad-schemas.json'), JSON.stringify(badSchemaTools()));
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, name text)`);
    await admin.end();
    const node = (entry: string, ...args: string[]) => ({
      command: process.execPath,
      args: [entry, ...args],
    });
    const runTmp = path.join(dir, 'tmp');
    fs.mkdirSync(runTmp);
    config = mcpConfig({
      filesystem: node(MCP_SERVERS.filesystem, dir),
      memory: { ...node(MCP_SERVERS.memory), env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') } },
      everything: node(MCP_SERVERS.everything, 'stdio'),
      thinking: {
        ...node(mcpServerOf('reference', SERVERS[3]!.pkg).entry),
        env: { DISABLE_THOUGHT_LOGGING: 'true' },
      },
      postgres: node(mcpServerOf('reference', SERVERS[4]!.pkg).entry, PG_URL),
      eslint: { ...node(mcpServerOf('eslint', '@eslint/mcp').entry), cwd: dir },
      // The code runner writes each snippet to $TMPDIR/tmp.<ext>: a folder of this file's own.
      coderunner: {
        ...node(mcpServerOf('code-runner', 'mcp-server-code-runner').entry),
        env: { TMPDIR: runTmp },
      },
      fixtures: {
        command: process.execPath,
        args: [
          '--import',
          'tsx',
          path.join(PROJECT_ROOT, 'testkit', 'mcp-schema-server.ts'),
          path.join(dir, 'bad-schemas.json'),
        ],
        cwd: PROJECT_ROOT,
      },
    });
    pool = new McpPool(config);
    taskQueue = uid('mcp-compat');
    worker = await createAgentWorker({
      connection: temporal.env.nativeConnection,
      namespace: temporal.env.namespace ?? 'default',
      config: testConfig({ mcp: config, taskQueue }),
      taskQueue,
      workflowBundle: await workflowBundle(),
      deliver: notificationDelivery(temporal.env.client, taskQueue),
    });
    running = worker.run();
  }, 300_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await pool?.close();
    await closeMcpConnections();
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`DROP TABLE IF EXISTS ${table}`);
    await admin.end();
  });

  /** Tools of the fixture server: one good, three whose schemas cannot be checked. */
  function badSchemaTools() {
    const huge = Object.fromEntries(
      Array.from({ length: 20_000 }, (_, i) => [
        `field_${i}`,
        { type: 'string', description: 'padding text' },
      ]),
    );
    return [
      {
        name: 'echo_args',
        description: 'Echoes its arguments',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
      {
        name: 'url_ref',
        description: 'A $ref to a URL',
        inputSchema: { type: 'object', properties: { a: { $ref: 'https://json.example/a.json' } } },
      },
      {
        name: 'cyclic',
        description: 'A cycle with no base case',
        inputSchema: {
          type: 'object',
          properties: { a: { $ref: '#/$defs/A' } },
          $defs: { A: { $ref: '#/$defs/B' }, B: { $ref: '#/$defs/A' } },
        },
      },
      { name: 'huge', description: 'A 1 MB schema', inputSchema: { type: 'object', properties: huge } },
    ];
  }

  async function run(input: AgentInput) {
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('mcp-compat'),
      args: [input],
    });
    const result = (await handle.result()) as AgentResult;
    const events = await handle.query(eventsQuery, {});
    return { result, events, scheduled: scheduledActivityTypes(await handle.fetchHistory()) };
  }

  /** The tools a run's discovery offered (the first `mcp_tools` event) and why it skipped others (one event each). */
  function discovered(events: AgentEvent[]): { offered: string[]; skipped: Record<string, string> } {
    const text = events.find((e) => e.kind === 'mcp_tools' && !e.tool)?.text ?? '';
    const names = text.replace(/^MCP tools: /, '').split('; skipped: ')[0] ?? '';
    const skipped = Object.fromEntries(
      events
        .filter((e) => e.kind === 'mcp_tools' && e.tool)
        .map((e) => [e.tool, e.text?.replace(/^skipped: /, '')]),
    ) as Record<string, string>;
    return { offered: names.split(', ').filter(Boolean), skipped };
  }

  /** Counts `$ref`s in a schema. */
  function refs(schema: unknown): number {
    return (JSON.stringify(schema).match(/"\$ref"/g) ?? []).length;
  }

  /**
   * Runs one good and one bad call of `tool` on `server`; checks the answer and the refusal, and
   * notes the server's row.
   */
  async function exercise(
    server: string,
    tool: string,
    good: Record<string, unknown>,
    bad: Record<string, unknown>,
    refusal: string,
  ): Promise<{ answer: string; offered: string[] }> {
    const out = await run({
      task: `use ${server}`,
      tools: [`mcp:${server}`],
      policy: { approvals: { tools: { [`mcp:${server}`]: 'never' } } },
      model: {
        provider: 'scripted',
        turns: [callTurn([tool, bad, 'bad']), callTurn([tool, good, 'good']), answerTurn('{{result:good}}')],
      },
    });
    const rejected = out.events.find((e) => e.kind === 'tool_rejected');
    expect(rejected?.text).toContain(`Invalid arguments for ${tool}: ${refusal}`);
    expect(out.scheduled.filter((t) => t === `mcp:${server}/${tool}`)).toHaveLength(1);
    expect(out.result.stopReason).toBe('final_answer');
    const { offered, skipped } = discovered(out.events);
    const { tools: listed, capabilities } = await pool.tools(server);
    const spec = SERVERS.find((s) => s.name === server)!;
    const notes: string[] = [];
    const dialects = new Set(
      listed.map((t) =>
        (typeof t.inputSchema.$schema === 'string' ? t.inputSchema.$schema : '')
          .replace(/^https?:\/\/json-schema\.org\//, '')
          .replace(/\/schema#?$/, ''),
      ),
    );
    dialects.delete('');
    if (dialects.size) notes.push(`schemas ${[...dialects].join(', ')}`);
    const refCount = listed.reduce((n, t) => n + refs(t.inputSchema), 0);
    if (refCount) notes.push(`${refCount} \`$ref\`${refCount > 1 ? 's' : ''} in schemas`);
    const zod = spec.set ? resolvedVersion(spec.set, 'zod') : ownVersion('zod');
    notes.push(`zod ${zod.split('.')[0]} resolved`);
    for (const [tool, why] of Object.entries(skipped)) notes.push(`skipped \`${tool}\`: ${why}`);
    if (capabilities.prompts) {
      const prompts = await pool.use(server, async (client) => (await client.listPrompts()).prompts);
      notes.push(`prompts: ${prompts.map((p) => `\`${p.name}\``).join(', ')}`);
    }
    notes.push(`called \`${tool}\``);
    rows.set(server, {
      server,
      pkg: spec.pkg,
      version: spec.set ? mcpServerOf(spec.set, spec.pkg).version : ownVersion(spec.pkg),
      offered,
      listed: listed.length,
      notes,
    });
    return { answer: out.result.answer ?? '', offered };
  }

  test('server-sequential-thinking (zod 3 beside server-postgres: its schema has $refs): a scripted run calls sequentialthinking and gets its answer', async () => {
    const listed = (await pool.tools('thinking')).tools;
    expect(JSON.stringify(listed[0]?.inputSchema)).toContain('"$ref":"#/properties/nextThoughtNeeded"');
    expect(resolvedVersion('reference', 'zod')).toMatch(/^3\./);
    const { answer, offered } = await exercise(
      'thinking',
      'sequentialthinking',
      {
        thought: 'Split the task in two.',
        nextThoughtNeeded: false,
        thoughtNumber: 1,
        totalThoughts: 1,
        isRevision: false,
      },
      { thought: 'x', nextThoughtNeeded: true, thoughtNumber: 0, totalThoughts: 1, isRevision: 3 },
      'thoughtNumber: must be at least 1; got 0; isRevision: expected boolean or string, got number 3',
    );
    expect(offered).toEqual(['sequentialthinking']);
    expect(JSON.parse(answer)).toEqual(
      expect.objectContaining({ thoughtNumber: 1, totalThoughts: 1, nextThoughtNeeded: false }),
    );
  }, 120_000);

  test('server-postgres against the test PostgreSQL: query answers rows, and its resources are its tables’ schemas', async () => {
    const { answer } = await exercise(
      'postgres',
      'query',
      { sql: `SELECT count(*)::int AS n FROM ${table}` },
      { sql: 42 },
      'sql: expected string, got number 42',
    );
    expect(JSON.parse(answer)).toEqual([{ n: 0 }]);
    // Its resources are its tables' schemas: the run lists them and reads one.
    const base = new URL(PG_URL);
    base.protocol = 'postgres:';
    base.password = '';
    const uri = new URL(`${table}/schema`, base).href;
    const read = await run({
      task: 'describe the table',
      tools: ['mcp:postgres/resources/*'],
      model: {
        provider: 'scripted',
        turns: [
          callTurn(['postgres__resources', {}, 'list']),
          callTurn(['postgres__resources', { uri }, 'read']),
          answerTurn('{{result:list}}\n---\n{{result:read}}'),
        ],
      },
    });
    const [listing = '', schema = ''] = (read.result.answer ?? '').split('\n---\n');
    expect(listing).toContain(`- "${table}" database schema <${uri}> (application/json)`);
    expect(schema).toContain(`[resource <${uri}> (application/json)]`);
    expect(JSON.parse(schema.slice(schema.indexOf('\n') + 1))).toEqual([
      { column_name: 'id', data_type: 'integer' },
      { column_name: 'name', data_type: 'text' },
    ]);
  }, 120_000);

  test('@eslint/mcp (zod 4): lint-files reports the unused variable', async () => {
    const { answer } = await exercise(
      'eslint',
      'lint-files',
      { filePaths: [path.join(dir, 'unused.js')] },
      { filePaths: [] },
      'filePaths: needs at least 1 items; has 0',
    );
    expect(answer).toContain("'unused' is assigned a value but never used");
  }, 120_000);

  test('mcp-server-code-runner (zod 3): run-code runs a snippet', async () => {
    const { answer } = await exercise(
      'coderunner',
      'run-code',
      { code: 'console.log(6 * 7)', languageId: 'javascript' },
      { code: 'x', languageId: 'cobol' },
      'languageId: must be one of "javascript", "php"',
    );
    expect(answer.trim()).toBe('42');
  }, 120_000);

  test('the reference servers this repository depends on: filesystem, memory, everything', async () => {
    const files = await exercise(
      'filesystem',
      'read_text_file',
      { path: path.join(dir, 'plan.md') },
      { path: path.join(dir, 'plan.md'), head: 'ten' },
      'head: expected number, got string "ten"',
    );
    expect(files.answer).toContain('Owner: Ada');
    const memory = await exercise(
      'memory',
      'create_entities',
      { entities: [{ name: 'Ada', entityType: 'person', observations: [] }] },
      { entities: [{ name: 'Ada' }] },
      'entities[0].entityType: is required',
    );
    expect(memory.answer).toContain('"name": "Ada"');
    const everything = await exercise(
      'everything',
      'get-sum',
      { a: 2, b: 3 },
      { a: 'two', b: 3 },
      'a: expected number, got string "two"',
    );
    expect(everything.answer).toContain('5');
  }, 180_000);

  test('bad schemas (a $ref to a URL, a cycle with no base case, 1 MB) are skipped, saying why; the run goes on with the other tools', async () => {
    const out = await run({
      task: 'use the fixtures',
      tools: ['mcp:fixtures'],
      policy: { approvals: { tools: { 'mcp:fixtures': 'never' } } },
      model: {
        provider: 'scripted',
        turns: [callTurn(['echo_args', { text: 'still here' }, 'e']), answerTurn('{{result:e}}')],
      },
    });
    const { offered, skipped } = discovered(out.events);
    expect(offered).toEqual(['echo_args']);
    expect(skipped).toEqual({
      'mcp:fixtures/url_ref':
        'its input schema cannot be checked: properties.a: "$ref": "https://json.example/a.json" points outside the schema (a URL or another document); only references inside it (#/…) can be followed',
      'mcp:fixtures/cyclic':
        'its input schema cannot be checked: #/$defs/A: its references lead back to it without reading any of the value (a cycle with no base case)',
      'mcp:fixtures/huge': expect.stringMatching(
        /^its input schema cannot be checked: it is 1\.\d+ MiB as JSON, over the 32 KiB a tool's schema may take$/,
      ),
    });
    const summary = out.events.find((e) => e.kind === 'mcp_tools' && !e.tool)?.text;
    expect(summary).toBe(
      'MCP tools: echo_args; skipped: mcp:fixtures/url_ref, mcp:fixtures/cyclic, mcp:fixtures/huge',
    );
    expect(JSON.parse(out.result.answer ?? '')).toEqual({
      tool: 'echo_args',
      arguments: { text: 'still here' },
    });
  }, 120_000);

  /** The compatibility table of docs/mcp.md, as the runs above saw it. */
  function renderTable(): string {
    const lines = [
      '| server | version | tools offered | notes |',
      '| ------ | ------- | ------------- | ----- |',
    ];
    for (const { name } of SERVERS) {
      const r = rows.get(name);
      if (!r) throw new Error(`no row for ${name}: its test did not run or failed`);
      lines.push(
        `| \`${r.pkg}\` | ${r.version} | ${r.offered.filter((t) => !t.endsWith('__resources')).length} of ${r.listed} tools${r.offered.some((t) => t.endsWith('__resources')) ? ' and its resources' : ''}: ${r.offered.map((t) => `\`${t}\``).join(', ')} | ${r.notes.join('; ')} |`,
      );
    }
    return lines.join('\n');
  }

  test('docs/mcp.md holds the compatibility table these runs make', () => {
    const file = path.join(PROJECT_ROOT, 'docs', 'mcp.md');
    const doc = fs.readFileSync(file, 'utf8');
    const start = '<!-- compatibility table: written by tests/workflows/mcp-compat.test.ts -->';
    const end = '<!-- end of compatibility table -->';
    // As prettier (which the repository's check runs on docs) lays the table out.
    const formatted = spawnSync(
      process.execPath,
      [path.join(PROJECT_ROOT, 'node_modules', 'prettier', 'bin', 'prettier.cjs'), '--stdin-filepath', file],
      { input: renderTable(), encoding: 'utf8' },
    );
    expect(formatted.stderr).toBe('');
    const table = formatted.stdout;
    const block = `${start}\n\n${table.trim()}\n\n${end}`;
    const current = doc.slice(doc.indexOf(start), doc.indexOf(end) + end.length);
    if (process.env.DURABLE_AGENT_UPDATE_DOCS === '1') fs.writeFileSync(file, doc.replace(current, block));
    else
      expect({ hint: 'run with DURABLE_AGENT_UPDATE_DOCS=1 to rewrite it', table: current }).toEqual({
        hint: 'run with DURABLE_AGENT_UPDATE_DOCS=1 to rewrite it',
        table: block,
      });
  });
});
