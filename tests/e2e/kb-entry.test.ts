/**
 * `durable-agent kb …` runs from a bundle of the kb commands (bin/kb-entry.js), rebuilt whenever a
 * source file it was built from changes, with the same answers as the TypeScript entry through tsx.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../shared/project-root';
import { runCli } from '../../testkit/processes';
import { tempDir, uid } from '../../testkit/temporal';

// A bundle of this file's own (in the checkout, where its npm packages resolve): other files' `kb`
// commands use the default one meanwhile, which this file must not delete under them.
const BUNDLE = path.join(PROJECT_ROOT, '.data', 'test', uid('kb-entry'), 'kb-main.js');
const MANIFEST = `${BUNDLE}.json`;
const dataDir = tempDir('kb-entry');
const search = ['kb', 'search', 'blossom end rot', '-n', '1', '--data-dir', dataDir];
const withBundle = { DURABLE_AGENT_KB_BUNDLE: BUNDLE };

type Manifest = { node: string; inputs: Record<string, [number, number]> };
const manifest = () => JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as Manifest;

beforeAll(async () => {
  const added = await runCli(
    ['kb', 'add', path.join(PROJECT_ROOT, 'examples', 'kb'), '--data-dir', dataDir],
    withBundle,
  );
  expect(added.code).toBe(0);
}, 120_000);

afterAll(() => fs.rmSync(path.dirname(BUNDLE), { recursive: true, force: true }));

test('kb search answers from the bundle, the same as through tsx, and the bundle follows source edits', async () => {
  fs.rmSync(path.dirname(BUNDLE), { recursive: true, force: true });
  const first = await runCli(search, withBundle);
  expect(first.code).toBe(0);
  expect(first.stdout).toContain('Growing Tomatoes › Blossom end rot');
  // Built on first use, from the kb entry and the modules it imports (npm packages stay outside).
  const built = manifest();
  expect(built.node).toBe(process.version);
  expect(Object.keys(built.inputs)).toEqual(expect.arrayContaining(['cli/kb-main.ts', 'cli/kb.ts']));
  expect(Object.keys(built.inputs).some((f) => f.includes('node_modules'))).toBe(false);

  const viaTsx = await runCli(search, { DURABLE_AGENT_KB_BUNDLE: 'off' });
  expect(viaTsx).toEqual(first);

  // Unchanged sources: the same bundle is used (not rewritten).
  const builtAt = fs.statSync(BUNDLE).mtimeMs;
  expect((await runCli(search, withBundle)).stdout).toBe(first.stdout);
  expect(fs.statSync(BUNDLE).mtimeMs).toBe(builtAt);

  // A source touched (as an edit would): the next command rebuilds and records the new stamp.
  const source = path.join(PROJECT_ROOT, 'cli', 'kb.ts');
  const later = new Date(Date.now() + 1000);
  fs.utimesSync(source, later, later);
  expect((await runCli(search, withBundle)).stdout).toBe(first.stdout);
  expect(manifest().inputs['cli/kb.ts']?.[0]).toBe(fs.statSync(source).mtimeMs);
  expect(fs.statSync(BUNDLE).mtimeMs).not.toBe(builtAt);
}, 120_000);
