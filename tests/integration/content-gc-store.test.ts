/**
 * The stores' side of garbage collection, on a real folder and a real PostgreSQL schema: claims,
 * sweeps (what goes, what stays, dry runs), stamping on rewrite, claims dropped only when older
 * than the decision, references followed for a fork, and legacy values of an upgraded store.
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type {
  CollectableContentStore,
  ContentEntry,
  SweepOptions,
} from '../../activities/content/collectable';
import { openContentStore } from '../../activities/content/config';
import type { ContentStoreConfig } from '../../activities/content/config';
import { FileContentStore } from '../../activities/content/file-store';
import { PostgresContentStore } from '../../activities/content/postgres-store';
import { claimReachable, referencesIn } from '../../activities/content/references';
import { refOf } from '../../activities/content/store';
import { backdateContent, pgSchemaStore } from '../../testkit/content-store';
import { tempDir, uid } from '../../testkit/temporal';

const DAY = 86_400_000;
const drops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const d of drops) await d();
});

function fileStore(): Promise<{ config: ContentStoreConfig; store: CollectableContentStore }> {
  const config: ContentStoreConfig = { kind: 'file', dir: tempDir('gc-store') };
  return Promise.resolve({ config, store: openContentStore(config) });
}

async function pgStore(): Promise<{ config: ContentStoreConfig; store: CollectableContentStore }> {
  const s = await pgSchemaStore('gcstore');
  const store = openContentStore(s.config);
  drops.push(async () => {
    await store.close();
    await s.drop();
  });
  return { config: s.config, store };
}

async function sweep(store: CollectableContentStore, opts: Partial<SweepOptions> & { dead?: Set<string> }) {
  const removed: ContentEntry[] = [];
  const totals = await store.sweep({
    writtenBefore: new Date(Date.now() - DAY),
    dead: new Set(),
    includeLegacy: false,
    dryRun: false,
    ...opts,
    onRemoved: (e) => removed.push(e),
  });
  return { totals, refs: new Set(removed.map((e) => e.ref)) };
}

describe.each([
  ['files', fileStore],
  ['postgres', pgStore],
])('%s store', (_name, open) => {
  test('a sweep removes old values no live run claims, and a dry run names the same set first', async () => {
    const { config, store } = await open();
    const live = `default/${uid('live')}`;
    const gone = `default/${uid('gone')}`;
    const kept = await store.put({ kept: 'by a live run' }, live);
    const shared = await store.put({ shared: 'by a live and a gone run' }, gone);
    await store.put({ shared: 'by a live and a gone run' }, live);
    const onlyGone = await store.put('x'.repeat(5000), gone);
    const nobody = await store.put({ nobody: true });
    await backdateContent(config, 2 * DAY);
    const young = await store.put({ young: 'written now, claimed by nobody' });

    const dry = await sweep(store, { dead: new Set([gone]), dryRun: true });
    expect(dry.refs).toEqual(new Set([onlyGone, nobody]));
    expect(dry.totals.removedBytes).toBe(
      JSON.stringify('x'.repeat(5000)).length + JSON.stringify({ nobody: true }).length,
    );
    expect(await store.get(onlyGone)).toBe('x'.repeat(5000));

    const real = await sweep(store, { dead: new Set([gone]) });
    expect(real.refs).toEqual(dry.refs);
    expect(real.totals).toEqual(dry.totals);
    for (const ref of [kept, shared, young]) await expect(store.get(ref)).resolves.toBeDefined();
    for (const ref of [onlyGone, nobody])
      await expect(store.get(ref)).rejects.toThrow(/not in the content store/);
    expect((await sweep(store, { dead: new Set([gone]) })).refs.size).toBe(0);

    // The gone run's claims are dropped; the live one's stay.
    expect(await store.dropClaims([gone], new Date())).toBe(1);
    expect(await store.claimants(new Date())).toEqual([live]);
  });

  test('writing a value again stamps it: a sweep whose cutoff is older keeps it, and a removed one is written back', async () => {
    const { config } = await open();
    // The store itself, without the cache in front (the cache answers a repeated write in memory).
    const raw =
      config.kind === 'file' ? new FileContentStore(config.dir) : new PostgresContentStore(config.url);
    try {
      const value = { again: uid('v') };
      const ref = await raw.put(value);
      await backdateContent(config, 2 * DAY);
      await raw.put(value);
      expect((await sweep(raw, {})).refs.has(ref)).toBe(false);
      await backdateContent(config, 2 * DAY);
      expect((await sweep(raw, {})).refs.has(ref)).toBe(true);
      await expect(raw.get(ref)).rejects.toThrow(/not in the content store/);
      expect(await raw.put(value, `default/${uid('run')}`)).toBe(ref);
      await expect(raw.get(ref)).resolves.toEqual(value);
    } finally {
      await raw.close();
    }
  });

  test('a fork claims everything its conversation references, following nodes to their texts', async () => {
    const { config, store } = await open();
    const original = `default/${uid('orig')}`;
    const fork = `default/${uid('fork')}`;
    const text = await store.put('R'.repeat(3000), original);
    const head = await store.put([{ role: 'system', content: 's' }], original);
    const first = await store.put({ v: 1, head, prev: null, messages: [], count: 0 }, original);
    const second = await store.put(
      {
        v: 1,
        head,
        prev: first,
        messages: [{ role: 'tool', content: { ref: text, bytes: 3000, preview: 'R' } }],
        count: 1,
      },
      original,
    );
    const later = await store.put({ v: 1, head, prev: second, messages: [], count: 1 }, original);
    const missing = `sha256:${'0'.repeat(64)}`;

    expect(
      await claimReachable(store, referencesIn({ conversation: { ref: second }, other: missing }), fork),
    ).toEqual([missing]);
    await backdateContent(config, 2 * DAY);
    const swept = await sweep(store, { dead: new Set([original]) });
    // What the fork goes on from stays; the original's later node goes with the original.
    expect(swept.refs).toEqual(new Set([later]));
    for (const ref of [text, head, first, second]) await expect(store.get(ref)).resolves.toBeDefined();
  });

  test('claims made after the decision survive dropping (a workflow id used again)', async () => {
    const { store } = await open();
    const id = `default/${uid('reused')}`;
    await store.put({ old: 1 }, id);
    const decided = new Date(Date.now() + 1000);
    expect(await store.dropClaims([id], new Date(Date.now() - 60_000))).toBe(0);
    expect(await store.claimants(new Date(Date.now() + 60_000))).toEqual([id]);
    expect(await store.dropClaims([id], decided)).toBe(1);
    expect(await store.claimants(new Date(Date.now() + 60_000))).toEqual([]);
  });

  test('the cache sends a second run’s claim of a cached value to the store', async () => {
    const { store } = await open();
    const a = `default/${uid('a')}`;
    const b = `default/${uid('b')}`;
    await store.put({ same: 'value' }, a);
    await store.put({ same: 'value' }, b);
    expect(new Set(await store.claimants(new Date(Date.now() + 60_000)))).toEqual(new Set([a, b]));
  });
});

test('a folder that held values before claims existed keeps them as legacy unless asked', async () => {
  const dir = tempDir('gc-legacy');
  // A value as a store made before claims existed wrote it: a file, and no claims folder.
  const body = JSON.stringify({ before: 'claims' });
  const old = refOf(body);
  fs.mkdirSync(path.join(dir, old.slice(7, 9)));
  fs.writeFileSync(path.join(dir, old.slice(7, 9), `${old.slice(9)}.json`), body);
  const store = openContentStore({ kind: 'file', dir });
  await store.put({ after: 'claims' }, `default/${uid('r')}`);
  const unclaimed = await store.put({ unclaimed: 'after claims' });
  // Days later: the legacy value older than the time claims began, the others after it.
  const marker = path.join(dir, 'claims', 'LEGACY_BEFORE');
  expect(fs.existsSync(marker)).toBe(true);
  fs.writeFileSync(marker, new Date(Date.now() - 3 * DAY).toISOString());
  await backdateContent({ kind: 'file', dir }, 2 * DAY);
  const oldFile = path.join(dir, old.slice(7, 9), `${old.slice(9)}.json`);
  fs.utimesSync(oldFile, new Date(Date.now() - 4 * DAY), new Date(Date.now() - 4 * DAY));

  expect((await store.stats()).legacy).toBe(1);
  const kept = await sweep(store, {});
  expect(kept.refs).toEqual(new Set([unclaimed]));
  expect(kept.totals.legacyKept).toBe(1);
  const all = await sweep(store, { includeLegacy: true });
  expect(all.refs).toEqual(new Set([old]));
});

test('a PostgreSQL table made before claims keeps its rows as legacy, with their creation time', async () => {
  const s = await pgSchemaStore('gclegacy');
  const c = new pg.Client({ connectionString: s.url });
  await c.connect();
  try {
    // The table as stores made it before claims existed, with a row a day and a half old.
    await c.query(`CREATE TABLE durable_agent_content (
      ref text PRIMARY KEY, body text NOT NULL, bytes integer NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
    const body = JSON.stringify({ legacy: true });
    const ref = refOf(body);
    await c.query(`INSERT INTO durable_agent_content VALUES ($1, $2, $3, now() - interval '36 hours')`, [
      ref,
      body,
      body.length,
    ]);
    const store = openContentStore(s.config);
    try {
      expect((await store.stats()).legacy).toBe(1);
      const kept = await sweep(store, {});
      expect(kept.refs.size).toBe(0);
      expect(kept.totals.legacyKept).toBe(1);
      const all = await sweep(store, { includeLegacy: true });
      expect(all.refs).toEqual(new Set([ref]));
    } finally {
      await store.close();
    }
  } finally {
    await c.end();
    await s.drop();
  }
});
