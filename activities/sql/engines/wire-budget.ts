import type { Socket } from 'node:net';
import { SqlResultTooLargeError } from '../errors';

/**
 * Counts the bytes a database connection receives during one session and, past `budget`, aborts
 * the returned signal with {@link SqlResultTooLargeError}, so the session is stopped (its
 * connection destroyed) while a large value is still arriving. `socket` is the driver's socket;
 * when it cannot be found (a driver change) the session runs without the byte budget.
 */
export function watchWireBytes(
  socket: Socket | undefined,
  budget: number,
  signal: AbortSignal | undefined,
): { signal: AbortSignal | undefined; stop(): void } {
  if (!socket) return { signal, stop: () => undefined };
  const over = new AbortController();
  let received = 0;
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > budget && !over.signal.aborted) over.abort(new SqlResultTooLargeError(budget));
  };
  socket.on('data', onData);
  return {
    signal: signal ? AbortSignal.any([signal, over.signal]) : over.signal,
    stop: () => socket.off('data', onData),
  };
}
