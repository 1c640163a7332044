/**
 * One writer per data folder per process. Writers in one process (two indexing activities, a seed
 * and an add) share a handle and take turns, instead of fighting over the folder's lock; the lock
 * is released as soon as no writer needs it, so a `kb add` in another process can go ahead.
 * Searches do not come here: they read the snapshot without the lock (see store.ts).
 */
import path from 'node:path';
import type { SnapshotHook } from './store';
import { KnowledgeBase } from './store';

interface Entry {
  kb: Promise<KnowledgeBase>;
  users: number;
  /** Serialises writers: two indexing runs in one process must not interleave their batches. */
  chain: Promise<unknown>;
}

const open = new Map<string, Entry>();

/** Options of {@link withKnowledgeBase}. */
export interface PoolOptions {
  lockTimeoutMs: number;
  signal?: AbortSignal;
  /** Runs after each snapshot rebuild (embedding new chunks). */
  onSnapshot?: SnapshotHook;
}

/** Runs `fn` with the writable knowledge base in `dir`, after any other writer of this process. */
export async function withKnowledgeBase<T>(
  dir: string,
  opts: PoolOptions,
  fn: (kb: KnowledgeBase) => Promise<T>,
): Promise<T> {
  const key = path.resolve(dir);
  let entry = open.get(key);
  if (!entry) {
    const created: Entry = {
      kb: KnowledgeBase.open(key, opts),
      users: 0,
      chain: Promise.resolve(),
    };
    entry = created;
    open.set(key, created);
    // A failed open must not stay cached: the next call tries again (the lock may be free by then).
    created.kb.catch(() => {
      if (open.get(key) === created) open.delete(key);
    });
  }
  const e = entry;
  e.users += 1;
  try {
    const kb = await e.kb;
    const run = e.chain.then(() => fn(kb));
    e.chain = run.catch(() => undefined);
    return await run;
  } finally {
    e.users -= 1;
    if (e.users === 0 && open.get(key) === e) {
      open.delete(key);
      await e.kb.then((kb) => kb.close()).catch(() => undefined);
    }
  }
}

/** Releases every handle now (worker shutdown, end of a test). */
export async function closeAllKnowledgeBases(): Promise<void> {
  const entries = [...open.values()];
  open.clear();
  await Promise.all(entries.map((e) => e.kb.then((kb) => kb.close()).catch(() => undefined)));
}
