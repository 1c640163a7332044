/**
 * `replay`'s bundle cache: a bundle is reused only while every file it was built from is unchanged.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  MAX_CACHED_BUNDLES,
  bundleSources,
  cachedBundle,
  storeBundle,
} from '../../client/debug/bundle-cache';
import { replayBundle } from '../../client/debug/replay';
import { PROJECT_ROOT } from '../../shared/project-root';
import { WORKFLOW_BUNDLE_FLAVOUR } from '../../workers/worker';
import { uid } from '../../testkit/temporal';

const afterAllRemove: string[] = [];
afterAll(() => {
  for (const dir of afterAllRemove) fs.rmSync(dir, { recursive: true, force: true });
});

const workflow = (marker: string) =>
  `import { sleep } from '@temporalio/workflow';\n` +
  `export async function cachedWorkflow(): Promise<string> {\n  await sleep(1);\n  return '${marker}';\n}\n`;

test('a replay bundle is reused while its sources are unchanged and rebuilt after an edit', async () => {
  // Inside the project, so the workflow resolves the SDK from its node_modules.
  const dir = path.join(PROJECT_ROOT, '.data', 'test', uid('bundle-cache'));
  fs.mkdirSync(dir, { recursive: true });
  afterAllRemove.push(dir);
  const root = path.join(dir, 'cache');
  // Bundles of today's build options live in a folder of their own, apart from other options'.
  const cache = path.join(root, WORKFLOW_BUNDLE_FLAVOUR);
  const file = path.join(dir, 'workflows.ts');
  fs.writeFileSync(file, workflow('first-marker'));
  expect(cachedBundle(cache, file)).toBeNull();

  const built = await replayBundle(file, root);
  expect(cachedBundle(root, file)).toBeNull();
  expect(built.code).toContain('first-marker');
  // The bundle names its sources: the workflow file and the SDK's workflow runtime.
  const sources = bundleSources(built.code) ?? [];
  expect(sources).toContain(file);
  expect(sources.some((s) => s.includes(`${path.sep}@temporalio${path.sep}workflow${path.sep}`))).toBe(true);

  const again = cachedBundle(cache, file);
  expect(again?.code).toBe(built.code);
  const reused = await replayBundle(file, root);
  expect(reused.code).toBe(built.code);

  // One edited byte in a source: the entry no longer matches, and the next bundle has the edit.
  fs.writeFileSync(file, workflow('other-marker'));
  expect(cachedBundle(cache, file)).toBeNull();
  const rebuilt = await replayBundle(file, root);
  expect(rebuilt.code).toContain('other-marker');
  expect(rebuilt.code).not.toContain('first-marker');
  expect(cachedBundle(cache, file)?.code).toBe(rebuilt.code);

  // A damaged entry is a miss, never an error.
  for (const f of fs.readdirSync(cache)) fs.writeFileSync(path.join(cache, f), '{not json');
  expect(cachedBundle(cache, file)).toBeNull();
}, 180_000);

test('the cache keeps the most recently used bundles and removes the rest', () => {
  const dir = path.join(PROJECT_ROOT, '.data', 'test', uid('bundle-lru'));
  afterAllRemove.push(dir);
  // A stand-in bundle: its inline source map names one real file, as a built bundle's does.
  const source = path.join(PROJECT_ROOT, 'package.json');
  const map = Buffer.from(JSON.stringify({ version: 3, sources: [source], mappings: '' })).toString('base64');
  const bundle = (n: number) => ({
    code: `var x = ${n};\n//# sourceMappingURL=data:application/json;charset=utf-8;base64,${map}`,
    sourceMap: '',
  });
  const at = (n: number) => path.join(dir, `workflows-${n}.ts`);
  const manifestOf = (n: number) =>
    path.join(
      dir,
      fs
        .readdirSync(dir)
        .find(
          (f) =>
            f.endsWith('.json') && fs.readFileSync(path.join(dir, f), 'utf8').includes(`workflows-${n}.ts`),
        )!,
    );
  for (let n = 0; n < MAX_CACHED_BUNDLES; n++) {
    expect(storeBundle(dir, at(n), bundle(n))).toBe(true);
    // Stored in order, a second apart, an hour ago: entry 0 is the oldest.
    const then = new Date(Date.now() - 3_600_000 + n * 1000);
    fs.utimesSync(manifestOf(n), then, then);
  }
  // Using entry 0 makes it the most recent; entry 1 is now the least recently used.
  expect(cachedBundle(dir, at(0))?.code).toBe(bundle(0).code);
  expect(storeBundle(dir, at(99), bundle(99))).toBe(true);

  expect(fs.readdirSync(dir).filter((f) => f.endsWith('.json'))).toHaveLength(MAX_CACHED_BUNDLES);
  expect(fs.readdirSync(dir).filter((f) => f.endsWith('.js'))).toHaveLength(MAX_CACHED_BUNDLES);
  expect(cachedBundle(dir, at(1))).toBeNull();
  for (const n of [0, 2, 3, 4, 5, 6, 7, 99]) expect(cachedBundle(dir, at(n))?.code).toBe(bundle(n).code);
});
