/**
 * One open knowledge base per data folder per process. Opening costs about half a second (seconds
 * on first creation), so concurrent and back-to-back searches share a handle; it is closed after
 * an idle period so the folder's lock is free for other processes (a CLI `kb add`) in between.
 */
import path from 'node:path';
import { KnowledgeBase } from './store';

interface Entry {
  kb: Promise<KnowledgeBase>;
  users: number;
  idleTimer?: NodeJS.Timeout;
  /** Serialises writers: two indexing runs in one process must not interleave their batches. */
  writeChain: Promise<unknown>;
}

const open = new Map<string, Entry>();

/** Options of {@link withKnowledgeBase}. */
export interface PoolOptions {
  lockTimeoutMs: number;
  /** How long an unused handle stays open. 0 closes at once (the CLI). */
  idleCloseMs: number;
  signal?: AbortSignal;
  /** Run `fn` exclusively among writers of this folder in this process (indexing). */
  exclusive?: boolean;
}

/** Runs `fn` with the knowledge base in `dir`, opening it (or sharing an open handle) as needed. */
export async function withKnowledgeBase<T>(
  dir: string,
  opts: PoolOptions,
  fn: (kb: KnowledgeBase) => Promise<T>,
): Promise<T> {
  const key = path.resolve(dir);
  let entry = open.get(key);
  if (!entry) {
    const created: Entry = {
      kb: KnowledgeBase.open(key, { lockTimeoutMs: opts.lockTimeoutMs, signal: opts.signal }),
      users: 0,
      writeChain: Promise.resolve(),
    };
    entry = created;
    open.set(key, created);
    // A failed open must not stay cached: the next call tries again (the lock may be free by then).
    created.kb.catch(() => {
      if (open.get(key) === created) open.delete(key);
    });
  }
  const e = entry;
  if (e.idleTimer) clearTimeout(e.idleTimer);
  e.idleTimer = undefined;
  e.users += 1;
  try {
    const kb = await e.kb;
    if (!opts.exclusive) return await fn(kb);
    const run = e.writeChain.then(() => fn(kb));
    e.writeChain = run.catch(() => undefined);
    return await run;
  } finally {
    e.users -= 1;
    if (e.users === 0 && open.get(key) === e) {
      const close = () => {
        if (e.users > 0 || open.get(key) !== e) return;
        open.delete(key);
        void e.kb.then((kb) => kb.close()).catch(() => undefined);
      };
      if (opts.idleCloseMs <= 0) close();
      else {
        e.idleTimer = setTimeout(close, opts.idleCloseMs);
        // An idle handle must not keep a finished CLI or test process alive.
        e.idleTimer.unref();
      }
    }
  }
}

/** Closes every open handle now (worker shutdown, end of a test). */
export async function closeAllKnowledgeBases(): Promise<void> {
  const entries = [...open.values()];
  open.clear();
  for (const e of entries) if (e.idleTimer) clearTimeout(e.idleTimer);
  await Promise.all(entries.map((e) => e.kb.then((kb) => kb.close()).catch(() => undefined)));
}
