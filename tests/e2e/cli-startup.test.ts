/**
 * The CLI starts from its bundles (bin/cli-entry.js): `--help` loads no Temporal code at all,
 * `status` and `notify` take Temporal's client, zod and gRPC from the vendor bundle only (never a
 * second copy from node_modules), answers are those of the sources run through tsx, and the bundle
 * follows source edits. What is loaded is read from require.cache when the command exits, not from
 * a clock: the start-up figures themselves are bench/cli-startup.ts's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../shared/project-root';
import { runCli } from '../../testkit/processes';
import { tempDir, uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const dev = useDevServer({ worker: true, queue: 'cli-startup' });

// Bundles of this file's own (in the checkout, where their npm packages resolve): other files'
// commands use the default ones meanwhile, which this file must not rebuild under them.
const MAIN = path.join(PROJECT_ROOT, '.data', 'test', uid('cli-startup'), 'main.js');
const VENDOR = path.join(path.dirname(MAIN), 'vendor.js');
const dumps = tempDir('cli-startup');
const PRELOAD = path.join(dumps, 'dump-modules.js');
fs.writeFileSync(
  PRELOAD,
  "process.on('exit', () => require('node:fs').writeFileSync(process.env.CLI_STARTUP_MODULES, " +
    'JSON.stringify(Object.keys(require.cache))));\n',
);

afterAll(() => fs.rmSync(path.dirname(MAIN), { recursive: true, force: true }));

/** Runs the CLI from this file's bundles; with the files it had loaded when it exited. */
async function fromBundle(args: string[]) {
  const dump = path.join(dumps, `${uid('modules')}.json`);
  const out = await runCli(args, {
    ...dev.env,
    DURABLE_AGENT_CLI_BUNDLE: MAIN,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${PRELOAD}`,
    CLI_STARTUP_MODULES: dump,
  });
  return { out, modules: JSON.parse(fs.readFileSync(dump, 'utf8')) as string[] };
}

/** The same command line through tsx, as the CLI ran before it had bundles. */
const fromSource = (args: string[]) => runCli(args, { ...dev.env, DURABLE_AGENT_CLI_BUNDLE: 'off' });

/** Files of Temporal's SDK, gRPC, protobuf or zod loaded from node_modules. */
const clientPackages = (modules: string[]) =>
  modules.filter((m) => /[/\\]node_modules[/\\](@temporalio|@grpc|protobufjs|zod)[/\\]/.test(m));

test('--help loads the main bundle only: no Temporal client, no zod, no vendor bundle', async () => {
  fs.rmSync(path.dirname(MAIN), { recursive: true, force: true });
  const { out, modules } = await fromBundle(['--help']);
  expect(out.code).toBe(0);
  expect(out.stdout).toContain('Usage: durable-agent [options] [command]');
  expect(out).toEqual(await fromSource(['--help']));
  expect(modules).toContain(MAIN);
  expect(modules).not.toContain(VENDOR);
  expect(clientPackages(modules)).toEqual([]);
}, 120_000);

test('status and notify take the client from the vendor bundle, with the answers of the sources', async () => {
  const unknown = ['status', uid('no-such-run')];
  const status = await fromBundle(unknown);
  expect(status.out.code).toBe(1);
  expect(status.out.stderr).toContain(`error: `);
  expect(status.out).toEqual(await fromSource(unknown));
  expect(status.modules).toEqual(expect.arrayContaining([MAIN, VENDOR]));
  expect(clientPackages(status.modules)).toEqual([]);

  const inbox = `inbox:${uid('startup')}`;
  const notify = await fromBundle(['notify', inbox, 'from the bundle', '--json']);
  expect(notify.out.code).toBe(0);
  expect(JSON.parse(notify.out.stdout)).toMatchObject({ target: inbox, no: 0, count: 1 });
  expect(clientPackages(notify.modules)).toEqual([]);
  const listed = await fromSource(['notifications', inbox, '--json']);
  expect(JSON.parse(listed.stdout)).toMatchObject({
    count: 1,
    notifications: [{ message: 'from the bundle' }],
  });
}, 120_000);

test('a source edit rebuilds the bundle on the next command', async () => {
  await fromBundle(['--help']);
  const manifest = () =>
    JSON.parse(fs.readFileSync(`${MAIN}.json`, 'utf8')) as { inputs: Record<string, [number, number]> };
  expect(Object.keys(manifest().inputs)).toEqual(expect.arrayContaining(['cli/main.ts', 'cli/options.ts']));
  const builtAt = fs.statSync(MAIN).mtimeMs;

  expect((await fromBundle(['--help'])).out.code).toBe(0);
  expect(fs.statSync(MAIN).mtimeMs).toBe(builtAt);

  // A source touched (as an edit would): the next command rebuilds and records the new stamp.
  const source = path.join(PROJECT_ROOT, 'cli', 'options.ts');
  const later = new Date(Date.now() + 1000);
  fs.utimesSync(source, later, later);
  expect((await fromBundle(['--help'])).out.code).toBe(0);
  expect(manifest().inputs['cli/options.ts']?.[0]).toBe(fs.statSync(source).mtimeMs);
  expect(fs.statSync(MAIN).mtimeMs).not.toBe(builtAt);
}, 120_000);
