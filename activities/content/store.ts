/**
 * The content store: where large content (tool results, the conversation) lives while history
 * keeps only references. Content-addressed and write-once: a value's reference is the SHA-256 of
 * its JSON bytes, so writing the same value twice (a retried activity, a replay, two workers) is a
 * no-op, and a reference always reads back exactly what was written.
 */
import { createHash } from 'node:crypto';
import type { ContentRef } from '../../shared/content';
import { isContentRef } from '../../shared/content';

/** A place to keep JSON values by reference. Implementations must be safe under concurrent writers. */
export interface ContentStore {
  /**
   * Stores a JSON value and returns its reference; storing an existing value keeps the stored bytes.
   * `claimant` is the workflow id whose history will reference the value: stores that collect
   * garbage keep a value while a claimant's run is open or its history retained (activities pass
   * their run's id through {@link claimedByCurrentRun}).
   */
  put(value: unknown, claimant?: string): Promise<ContentRef>;
  /** Reads a stored value; throws {@link ContentMissingError} when the store does not hold it. */
  get(ref: ContentRef): Promise<unknown>;
  /** Where the content lives, for messages (never a password). */
  readonly where: string;
  /** Releases connections; the store is unusable afterwards. */
  close(): Promise<void>;
}

/** A reference the store does not hold (deleted, or written to another store). */
export class ContentMissingError extends Error {
  override readonly name = 'ContentMissingError';
  constructor(
    readonly ref: ContentRef,
    where: string,
  ) {
    super(
      `Content ${ref} is not in the content store (${where}). Point DURABLE_AGENT_CONTENT_STORE at the store the run was written to.`,
    );
  }
}

/** Stored bytes that do not hash to their reference: the store was changed behind our back. */
export class ContentCorruptError extends Error {
  override readonly name = 'ContentCorruptError';
}

/** The JSON bytes a value is stored as, and its reference. */
export function encodeContent(value: unknown): { ref: ContentRef; body: string } {
  const body = JSON.stringify(value);
  if (body === undefined) throw new TypeError('Only JSON values can be stored');
  return { ref: refOf(body), body };
}

/** The reference of stored JSON text. */
export function refOf(body: string): ContentRef {
  return `sha256:${createHash('sha256').update(body, 'utf8').digest('hex')}`;
}

/** Parses stored JSON text after checking that it hashes to its reference. */
export function decodeContent(ref: ContentRef, body: string): unknown {
  if (refOf(body) !== ref) throw new ContentCorruptError(`Content ${ref} does not match its hash`);
  return JSON.parse(body) as unknown;
}

/** Checks a reference that came from outside (history, a file) before it reaches a store. */
export function assertContentRef(ref: unknown): asserts ref is ContentRef {
  if (!isContentRef(ref)) throw new TypeError(`Not a content reference: ${String(ref).slice(0, 80)}`);
}

/**
 * How long a claim this process made is trusted without writing it again. Shorter than any grace
 * period (a namespace retains closed runs for an hour at least), so a workflow id used again by a
 * new run, after its old claims were dropped, always claims anew.
 */
const CLAIM_MEMORY_MS = 10 * 60 * 1000;
/** Claims remembered at most; past it the memory starts over. */
const CLAIM_MEMORY_ENTRIES = 100_000;

/**
 * Keeps recently used values in memory. Safe because stored values never change; bounded by the
 * JSON size of what it holds, oldest use evicted first. A cached value is written again only when
 * a claimant it was not written for stores it, so each run's claim reaches the store.
 */
export class CachedContentStore implements ContentStore {
  private readonly cache = new Map<ContentRef, { value: unknown; bytes: number }>();
  private readonly claimed = new Map<string, number>();
  private bytes = 0;

  constructor(
    private readonly inner: ContentStore,
    private readonly maxBytes = 64 * 1024 * 1024,
  ) {}

  get where(): string {
    return this.inner.where;
  }

  async put(value: unknown, claimant?: string): Promise<ContentRef> {
    const { ref, body } = encodeContent(value);
    const claim = claimant === undefined ? undefined : `${claimant}\n${ref}`;
    const fresh = claim === undefined || Date.now() - (this.claimed.get(claim) ?? 0) < CLAIM_MEMORY_MS;
    if (!this.cache.has(ref) || !fresh) await this.inner.put(value, claimant);
    if (claim !== undefined && !fresh) {
      if (this.claimed.size >= CLAIM_MEMORY_ENTRIES) this.claimed.clear();
      this.claimed.set(claim, Date.now());
    }
    this.remember(ref, value, body.length);
    return ref;
  }

  async get(ref: ContentRef): Promise<unknown> {
    const hit = this.cache.get(ref);
    if (hit) {
      this.cache.delete(ref);
      this.cache.set(ref, hit);
      return hit.value;
    }
    const value = await this.inner.get(ref);
    this.remember(ref, value, JSON.stringify(value).length);
    return value;
  }

  close(): Promise<void> {
    this.cache.clear();
    this.claimed.clear();
    this.bytes = 0;
    return this.inner.close();
  }

  /** Drops a value the store no longer holds. */
  protected forget(ref: ContentRef): void {
    const old = this.cache.get(ref);
    if (!old) return;
    this.cache.delete(ref);
    this.bytes -= old.bytes;
  }

  private remember(ref: ContentRef, value: unknown, bytes: number): void {
    this.forget(ref);
    if (bytes > this.maxBytes / 4) return;
    this.cache.set(ref, { value, bytes });
    this.bytes += bytes;
    for (const [key, entry] of this.cache) {
      if (this.bytes <= this.maxBytes) break;
      this.cache.delete(key);
      this.bytes -= entry.bytes;
    }
  }
}
