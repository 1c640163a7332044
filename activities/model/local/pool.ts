/**
 * A fixed set of reusable slots (the sequences of one model context), handed out first come first
 * served. A caller waiting for a slot can give up through its AbortSignal (a cancelled activity), and
 * then never receives one.
 */
export class SequencePool<T> {
  private readonly free: T[];
  private readonly waiters: { resolve: (slot: T) => void; signal?: AbortSignal; onAbort: () => void }[] = [];

  constructor(slots: T[]) {
    if (slots.length === 0) throw new Error('a pool needs at least one slot');
    this.free = [...slots];
  }

  /** Slots not lent out. */
  get available(): number {
    return this.free.length;
  }

  /** Callers waiting for a slot. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Borrows a slot, waiting for one when all are lent; rejects with the signal's reason if it aborts first. */
  acquire(signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    const slot = this.free.pop();
    if (slot !== undefined) return Promise.resolve(slot);
    return new Promise<T>((resolve, reject) => {
      const waiter = {
        resolve,
        signal,
        onAbort: () => {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          reject(signal?.reason as Error);
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Returns a slot: the longest waiter gets it, else it is free again. */
  release(slot: T): void {
    const next = this.waiters.shift();
    if (next) {
      next.signal?.removeEventListener('abort', next.onAbort);
      next.resolve(slot);
    } else {
      this.free.push(slot);
    }
  }

  /** Runs `fn` with a borrowed slot and always gives it back. */
  async use<R>(fn: (slot: T) => Promise<R>, signal?: AbortSignal): Promise<R> {
    const slot = await this.acquire(signal);
    try {
      return await fn(slot);
    } finally {
      this.release(slot);
    }
  }
}
