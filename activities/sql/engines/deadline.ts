import { SqlTimeoutError } from '../errors';

/**
 * Settles with `work`, or rejects with {@link SqlTimeoutError} after `ms` (or with the signal's reason
 * when `signal` aborts) — calling `stop` first, which must stop the work for real (destroy the
 * connection, terminate the thread). A promise alone cannot be cancelled; without `stop` the
 * statement would keep running unseen.
 */
export function withDeadline<T>(
  work: Promise<T>,
  opts: { ms: number; limitMs: number; signal?: AbortSignal; stop: () => void },
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const expire = (why: Error) => {
      cleanup();
      opts.stop();
      reject(why);
    };
    const onAbort = () =>
      expire(opts.signal?.reason instanceof Error ? opts.signal.reason : new Error('cancelled'));
    const timer = setTimeout(() => expire(new SqlTimeoutError(opts.limitMs)), opts.ms);
    const cleanup = () => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
    };
    if (opts.signal?.aborted) return onAbort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        cleanup();
        resolve(value);
      },
      (err: unknown) => {
        cleanup();
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}
