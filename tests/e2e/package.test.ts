/**
 * The library as users get it: `npm pack`, then in a fresh folder outside the repository, the
 * packed tarball installed with the example app (examples/own-app) and a consumer of every
 * documented entry. attw and publint find no problems; the consumer typechecks under strict with
 * node16 (CommonJS and ESM) and bundler resolution and runs as CommonJS and ESM; private paths are
 * refused; the library entries load no CLI-only module; the app typechecks and runs against a
 * dev server: its worker (the plugin, a tool of its own), its workflow (an agent as a step, an
 * inbox notification) and its client.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../shared/project-root';
import { useDevServer } from '../support/environments';

const exec = promisify(execFile);
const server = useDevServer();
const bin = (pkg: string, file: string) => path.join(PROJECT_ROOT, 'node_modules', pkg, file);

let work: string;
let tarball: string;
let app: string;

/** Runs a command, failing with its output when it fails. */
async function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  try {
    return await exec(cmd, args, { cwd, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

const CONSUMER = `
import { defineTool, DurableAgentPlugin, AgentClient, loadWorkerConfig, NotificationPriority } from 'durable-agent';
import type { AgentInput, AgentResult, ToolRunContext } from 'durable-agent';
import { AgentClientError } from 'durable-agent/client';
import type { RunVerdict } from 'durable-agent/client';
import { runAgent, notifyInbox, ApprovalRequests } from 'durable-agent/workflow';
import type { BuiltInToolActivities } from 'durable-agent/workflow';
import { createSqlActivities, createEmailActivities } from 'durable-agent/activities';
import { z } from 'zod';

const tool = defineTool({
  name: 'echo_text',
  description: 'Echoes its text.',
  input: z.object({ text: z.string() }),
  run: (args: { text: string }, ctx: ToolRunContext) => args.text + ' ' + ctx.attempt,
});
const input: AgentInput = { task: 't', model: { provider: 'scripted', turns: [{ content: 'ok' }] }, tools: ['echo_text'] };
const plugin = new DurableAgentPlugin({ tools: [tool], config: loadWorkerConfig({}) });
const answer: AgentResult['answer'] = null;
const typed: BuiltInToolActivities['sql_query'] | undefined = undefined;
const verdict: RunVerdict | undefined = undefined;
const error = new AgentClientError('not_found', 'x');
console.log(JSON.stringify({
  tool: tool.spec.name,
  plugin: plugin.name,
  client: typeof AgentClient,
  workflow: [typeof runAgent, typeof notifyInbox, typeof ApprovalRequests],
  activities: Object.keys(createSqlActivities({ config: loadWorkerConfig({}).databases })).concat(typeof createEmailActivities),
  priority: NotificationPriority.HIGH,
  code: error.code,
  rest: [input.task, answer, typed, verdict],
}));
`;

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'durable-agent-package-'));
  // `npm pack` runs the build (prepack), then packs what package.json's `files` names.
  const packed = await run('npm', ['pack', '--pack-destination', work, '--silent'], PROJECT_ROOT);
  tarball = path.join(work, packed.stdout.trim().split('\n').pop() as string);
  app = path.join(work, 'own-app');
  fs.cpSync(path.join(PROJECT_ROOT, 'examples', 'own-app'), app, {
    recursive: true,
    filter: (src) => !/node_modules|dist$/.test(src),
  });
  fs.writeFileSync(path.join(app, 'src', 'consumer.cts'), CONSUMER);
  fs.writeFileSync(path.join(app, 'src', 'consumer.mts'), CONSUMER);
  fs.mkdirSync(path.join(app, 'bundler'));
  fs.writeFileSync(path.join(app, 'bundler', 'consumer.ts'), CONSUMER);
  fs.writeFileSync(
    path.join(app, 'tsconfig.bundler.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'esnext',
        moduleResolution: 'bundler',
        strict: true,
        // Resolution under bundler; the library's own types were checked whole by the node16 build.
        skipLibCheck: true,
        types: ['node'],
        noEmit: true,
      },
      include: ['bundler'],
    }),
  );
  // The app's own dependencies, with durable-agent from the tarball (its peers come with it).
  await run(
    'npm',
    ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'],
    app,
  );
}, 600_000);

afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

test('attw and publint find no problems in the packed tarball', async () => {
  const attw = await run(
    process.execPath,
    [bin('@arethetypeswrong/cli', 'dist/index.js'), tarball],
    PROJECT_ROOT,
  );
  expect(attw.stdout).toContain('No problems found');
  const publint = await run(
    process.execPath,
    [bin('publint', 'src/cli.js'), 'run', tarball, '--strict'],
    PROJECT_ROOT,
  );
  expect(`${publint.stdout}${publint.stderr}`).not.toMatch(/error|warning|suggestion/i);
}, 120_000);

test('a consumer of every documented entry typechecks (node16 CommonJS and ESM, bundler) and runs as CommonJS and ESM', async () => {
  // tsc of the app's tsconfig: strict, node16, skipLibCheck false, the consumer in .cts and .mts.
  await run(
    process.execPath,
    [path.join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'],
    app,
  );
  await run(
    process.execPath,
    [path.join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.bundler.json'],
    app,
  );
  for (const file of ['consumer.cjs', 'consumer.mjs']) {
    const out = await run(process.execPath, [path.join('dist', file)], app);
    expect(JSON.parse(out.stdout)).toMatchObject({
      tool: 'echo_text',
      plugin: 'durable-agent',
      client: 'function',
      workflow: ['function', 'function', 'function'],
      activities: ['sql_query', 'sql_schema', 'function'],
      priority: 20,
      code: 'not_found',
    });
  }
}, 300_000);

test('private paths are refused, and the library entries load nothing only the CLI needs', async () => {
  const probe = `
    const before = new Set(Object.keys(require.cache));
    for (const e of ['durable-agent', 'durable-agent/client', 'durable-agent/activities']) require(e);
    let refused = '';
    try { require('durable-agent/dist/workers/plugin'); } catch (err) { refused = err.code; }
    const loaded = Object.keys(require.cache).filter((f) => !before.has(f));
    console.log(JSON.stringify({
      refused,
      cliOnly: loaded.filter((f) => /node_modules\\/(commander|node-llama-cpp|hono|@hono|esbuild|playwright-core)\\//.test(f) || /durable-agent\\/dist\\/(cli|server)\\//.test(f)),
    }));`;
  const out = await run(process.execPath, ['-e', probe], app);
  expect(JSON.parse(out.stdout)).toEqual({ refused: 'ERR_PACKAGE_PATH_NOT_EXPORTED', cliOnly: [] });
}, 60_000);

test('the example app from the tarball runs against a dev server: its tool, its workflow running an agent, its inbox', async () => {
  const out = await run(process.execPath, ['dist/main.js'], app, { TEMPORAL_ADDRESS: server.fx.address });
  const result = JSON.parse(out.stdout.trim().split('\n').pop() as string) as {
    verdict: unknown;
    inbox: string[];
  };
  expect(result.verdict).toEqual({ orderId: 'A-17', refund: true, reason: 'damaged in transit' });
  expect(result.inbox).toEqual(['Order A-17: Refund it: damaged in transit']);
}, 300_000);
