/**
 * The heartbeat of the API's event streams: a comment line (`: heartbeat`, which EventSource
 * ignores) when nothing was written for a while, so idle proxies keep the stream open.
 */

/** What a stream handler tells its heartbeat, and how it stops it. */
export interface SseHeartbeat {
  /** Something was written now: the next heartbeat is due a full interval later. */
  wrote(): void;
  stop(): void;
}

/**
 * Starts a heartbeat on a stream: `write` writes raw text to it; `onFail` is called when a
 * heartbeat cannot be written (the client went away).
 */
export function startSseHeartbeat(
  write: (text: string) => Promise<unknown>,
  heartbeatMs: number,
  onFail: () => void,
): SseHeartbeat {
  let lastWrite = Date.now();
  const timer = setInterval(
    () => {
      if (Date.now() - lastWrite < heartbeatMs) return;
      lastWrite = Date.now();
      write(': heartbeat\n\n').catch(onFail);
    },
    Math.min(heartbeatMs, 1000),
  );
  return {
    wrote: () => {
      lastWrite = Date.now();
    },
    stop: () => clearInterval(timer),
  };
}
