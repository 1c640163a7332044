import path from 'node:path';
import type { ContentRef } from '../../shared/content';
import type { CollectableContentStore, StoreStats, SweepOptions, SweepTotals } from './collectable';
import { CachedContentStore } from './store';
import { FileContentStore } from './file-store';
import { CONTENT_TABLE, PostgresContentStore } from './postgres-store';

/** Where a worker keeps content by reference: files on this machine, or a shared PostgreSQL table. */
export type ContentStoreConfig = { kind: 'file'; dir: string } | { kind: 'postgres'; url: string };

/**
 * Reads the `DURABLE_AGENT_CONTENT_STORE` setting: empty for the default folder, a folder path (or
 * `file:<path>`), or a `postgres://` / `postgresql://` URL. Throws a message that never echoes a URL.
 */
export function parseContentStoreSetting(value: string | undefined, defaultDir: string): ContentStoreConfig {
  const v = value?.trim();
  if (!v) return { kind: 'file', dir: defaultDir };
  if (/^postgres(ql)?:\/\//i.test(v)) {
    try {
      new URL(v);
    } catch {
      throw new Error('DURABLE_AGENT_CONTENT_STORE: not a valid postgres:// URL');
    }
    return { kind: 'postgres', url: v };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v) && !v.startsWith('file:')) {
    throw new Error('DURABLE_AGENT_CONTENT_STORE: give a folder, file:<folder> or a postgres:// URL');
  }
  return { kind: 'file', dir: path.resolve(v.replace(/^file:(\/\/)?/, '')) };
}

/** Where a PostgreSQL URL points, without user or password. */
function describePostgres(url: string): string {
  const u = new URL(url);
  return `PostgreSQL table ${CONTENT_TABLE} at ${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}`;
}

/** A collectable store with the cache in front; what a sweep removes leaves the cache too. */
class CachedCollectableStore extends CachedContentStore implements CollectableContentStore {
  constructor(private readonly store: CollectableContentStore) {
    super(store);
  }

  claim(refs: readonly ContentRef[], workflowId: string): Promise<ContentRef[]> {
    return this.store.claim(refs, workflowId);
  }

  claimants(writtenBefore: Date): Promise<string[]> {
    return this.store.claimants(writtenBefore);
  }

  sweep(opts: SweepOptions): Promise<SweepTotals> {
    return this.store.sweep({
      ...opts,
      onRemoved: (entry) => {
        if (!opts.dryRun) this.forget(entry.ref);
        opts.onRemoved?.(entry);
      },
    });
  }

  dropClaims(workflowIds: readonly string[], claimedBefore: Date): Promise<number> {
    return this.store.dropClaims(workflowIds, claimedBefore);
  }

  stats(): Promise<StoreStats> {
    return this.store.stats();
  }
}

/** Opens the configured store, with an in-memory cache in front (stored values never change). */
export function openContentStore(config: ContentStoreConfig): CollectableContentStore {
  const store =
    config.kind === 'file'
      ? new FileContentStore(config.dir)
      : new PostgresContentStore(config.url, describePostgres(config.url));
  return new CachedCollectableStore(store);
}

const opened = new Map<string, CollectableContentStore>();

/**
 * The store of a configuration, opened once per process and shared by every worker and command in
 * it (a PostgreSQL store holds a connection pool). {@link closeContentStores} releases them.
 */
export function contentStoreFor(config: ContentStoreConfig): CollectableContentStore {
  const key = config.kind === 'file' ? `file:${config.dir}` : config.url;
  let store = opened.get(key);
  if (!store) {
    store = openContentStore(config);
    opened.set(key, store);
  }
  return store;
}

/** Closes every store opened by {@link contentStoreFor}; call it on worker shutdown. */
export async function closeContentStores(): Promise<void> {
  const stores = [...opened.values()];
  opened.clear();
  await Promise.all(stores.map((s) => s.close()));
}
