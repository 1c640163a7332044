/**
 * `replay`'s bundle cache: a bundle is reused only while every file it was built from is unchanged.
 */
import fs from 'node:fs';
import path from 'node:path';
import { bundleSources, cachedBundle } from '../../cli/debug/bundle-cache';
import { replayBundle } from '../../cli/debug/replay';
import { PROJECT_ROOT } from '../../cli/binaries';
import { uid } from '../support/temporal';

const workflow = (marker: string) =>
  `import { sleep } from '@temporalio/workflow';\n` +
  `export async function cachedWorkflow(): Promise<string> {\n  await sleep(1);\n  return '${marker}';\n}\n`;

test('a replay bundle is reused while its sources are unchanged and rebuilt after an edit', async () => {
  // Inside the project, so the workflow resolves the SDK from its node_modules.
  const dir = path.join(PROJECT_ROOT, '.data', 'test', uid('bundle-cache'));
  fs.mkdirSync(dir, { recursive: true });
  const cache = path.join(dir, 'cache');
  const file = path.join(dir, 'workflows.ts');
  fs.writeFileSync(file, workflow('first-marker'));
  expect(cachedBundle(cache, file)).toBeNull();

  const built = await replayBundle(file, cache);
  expect(built.code).toContain('first-marker');
  // The bundle names its sources: the workflow file and the SDK's workflow runtime.
  const sources = bundleSources(built.code) ?? [];
  expect(sources).toContain(file);
  expect(sources.some((s) => s.includes(`${path.sep}@temporalio${path.sep}workflow${path.sep}`))).toBe(true);

  const again = cachedBundle(cache, file);
  expect(again?.code).toBe(built.code);
  const reused = await replayBundle(file, cache);
  expect(reused.code).toBe(built.code);

  // One edited byte in a source: the entry no longer matches, and the next bundle has the edit.
  fs.writeFileSync(file, workflow('other-marker'));
  expect(cachedBundle(cache, file)).toBeNull();
  const rebuilt = await replayBundle(file, cache);
  expect(rebuilt.code).toContain('other-marker');
  expect(rebuilt.code).not.toContain('first-marker');
  expect(cachedBundle(cache, file)?.code).toBe(rebuilt.code);

  // A damaged entry is a miss, never an error.
  for (const f of fs.readdirSync(cache)) fs.writeFileSync(path.join(cache, f), '{not json');
  expect(cachedBundle(cache, file)).toBeNull();
}, 180_000);
