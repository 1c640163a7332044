import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { FileContentStore } from '../../activities/content/file-store';
import { PostgresContentStore } from '../../activities/content/postgres-store';
import type { ContentStore } from '../../activities/content/store';
import { CachedContentStore, ContentCorruptError, ContentMissingError } from '../../activities/content/store';
import { parseContentStoreSetting } from '../../activities/content/config';
import type { ContentRef } from '../../shared/content';
import { PG_URL } from '../../testkit/sql-fixtures';
import { tempDir } from '../../testkit/temporal';

const sha = (text: string): ContentRef => `sha256:${createHash('sha256').update(text).digest('hex')}`;

describe.each([
  ['files', () => new FileContentStore(tempDir('content'))],
  ['postgres', () => new PostgresContentStore(PG_URL)],
])('%s store', (_name, open) => {
  let store: ContentStore;
  beforeAll(() => {
    store = open();
  });
  afterAll(() => store.close());

  test('a reference is the SHA-256 of the stored JSON, and reads back the same value', async () => {
    const value = { text: `排序字典 ${Math.random()}`, n: [1, 2, 3], nested: { ok: true } };
    const ref = await store.put(value);
    expect(ref).toBe(sha(JSON.stringify(value)));
    expect(await store.get(ref)).toEqual(value);
  });

  test('writing the same value again, even from many writers at once, is a no-op with the same reference', async () => {
    const value = 'A'.repeat(60_000) + String(Math.random());
    const refs = await Promise.all(Array.from({ length: 20 }, () => store.put(value)));
    expect(new Set(refs).size).toBe(1);
    expect(await store.get(refs[0] as ContentRef)).toBe(value);
  });

  test('an unknown reference is a clear error naming the store', async () => {
    const ref = sha(`never stored ${Math.random()}`);
    await expect(store.get(ref)).rejects.toThrow(ContentMissingError);
    await expect(store.get(ref)).rejects.toThrow(/is not in the content store .*DURABLE_AGENT_CONTENT_STORE/);
  });

  test('a malformed reference is refused before any lookup', async () => {
    await expect(store.get('sha256:../../etc/passwd')).rejects.toThrow(/Not a content reference/);
  });
});

test('the file store detects content changed behind its back', async () => {
  const dir = tempDir('content');
  const store = new FileContentStore(dir);
  const ref = await store.put({ answer: 42 });
  const hex = ref.slice(7);
  fs.writeFileSync(path.join(dir, hex.slice(0, 2), `${hex.slice(2)}.json`), '{"answer":43}');
  await expect(store.get(ref)).rejects.toThrow(ContentCorruptError);
});

test('the cache answers repeated reads without the store and stays within its byte bound', async () => {
  const inner = new FileContentStore(tempDir('content'));
  let reads = 0;
  const counting: ContentStore = {
    where: inner.where,
    put: (v) => inner.put(v),
    get: (r) => {
      reads += 1;
      return inner.get(r);
    },
    close: () => inner.close(),
  };
  const cached = new CachedContentStore(counting, 100_000);
  const refs = await Promise.all(Array.from({ length: 10 }, (_, i) => inner.put(`${i}`.repeat(20_000))));
  for (const ref of refs) await cached.get(ref);
  expect(reads).toBe(10);
  // The newest values fit the 100 kB bound; the oldest were evicted and are read again.
  await cached.get(refs[9] as ContentRef);
  expect(reads).toBe(10);
  await cached.get(refs[0] as ContentRef);
  expect(reads).toBe(11);
});

test('DURABLE_AGENT_CONTENT_STORE: a folder, file:, or a postgres URL; errors never echo the URL', () => {
  expect(parseContentStoreSetting(undefined, '/d')).toEqual({ kind: 'file', dir: '/d' });
  expect(parseContentStoreSetting('file:/srv/content', '/d')).toEqual({ kind: 'file', dir: '/srv/content' });
  expect(parseContentStoreSetting('postgres://u:pw@db:5432/x', '/d')).toEqual({
    kind: 'postgres',
    url: 'postgres://u:pw@db:5432/x',
  });
  expect(() => parseContentStoreSetting('s3://SECRET@bucket', '/d')).toThrow(
    /give a folder, file:<folder> or a postgres/,
  );
  expect(() => parseContentStoreSetting('s3://SECRET@bucket', '/d')).not.toThrow(/SECRET/);
});
