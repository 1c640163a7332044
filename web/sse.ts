/**
 * Server-Sent Events over fetch (EventSource cannot send headers and cannot resume with our own
 * `since`): reads one stream, then reconnects with backoff, asking for what changed since the
 * last update it applied. A stream quiet for longer than three heartbeats counts as dead.
 */
import { ApiError, toLogin } from './http';

/** One event of the stream. */
export interface SseEvent {
  event: string;
  data: string;
  /** The event's `id:` field, when it has one (what `Last-Event-ID` resumes from). */
  id?: string;
}

/** Splits a text/event-stream body into events. */
export async function readEvents(
  body: ReadableStream<Uint8Array>,
  onEvent: (e: SseEvent) => void,
  onActivity: () => void,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    onActivity();
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const val = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = val;
        else if (field === 'data') data.push(val);
        else if (field === 'id') id = val;
      }
      if (data.length > 0) onEvent({ event, data: data.join('\n'), ...(id !== undefined ? { id } : {}) });
    }
  }
}

/** Options of {@link follow}. */
export interface FollowOptions {
  /** The URL to open now (it may carry `since` from the last applied update). */
  url: () => string;
  onEvent: (e: SseEvent) => void;
  /** Told when the connection state changes, for a status line. */
  onState: (state: 'live' | 'reconnecting' | 'waiting', detail?: string) => void;
  /** A 404: the list does not exist yet. */
  onMissing?: (message: string) => void;
  /** True once there is nothing more to follow (the run ended): the stream is not opened again. */
  done?: () => boolean;
}

/** Milliseconds without a byte after which the stream is reopened (the server sends a heartbeat every 15 s). */
const STALE_MS = 45_000;

/** Follows the stream until the page closes. */
export function follow(opts: FollowOptions): void {
  let attempt = 0;
  const open = async (): Promise<void> => {
    const abort = new AbortController();
    let last = Date.now();
    const watchdog = setInterval(() => {
      if (Date.now() - last > STALE_MS) abort.abort();
    }, 5_000);
    try {
      const res = await fetch(opts.url(), {
        credentials: 'same-origin',
        headers: { accept: 'text/event-stream' },
        signal: abort.signal,
      });
      if (res.status === 401) return toLogin();
      if (!res.ok || !res.body) {
        const data = (await res.json().catch(() => ({}))) as { error?: string; code?: string };
        throw new ApiError(res.status, data.error ?? `HTTP ${res.status}`, data.code);
      }
      attempt = 0;
      opts.onState('live');
      await readEvents(res.body, opts.onEvent, () => {
        last = Date.now();
      });
      opts.onState('reconnecting', 'the stream ended');
    } catch (err) {
      if (err instanceof ApiError && err.status === 404 && opts.onMissing) {
        opts.onMissing(err.message);
        opts.onState('waiting', err.message);
        // Not an outage: look again every 2 s, without backing off further.
        attempt = 2;
      } else {
        opts.onState('reconnecting', (err as Error).message);
      }
    } finally {
      clearInterval(watchdog);
    }
    if (opts.done?.()) return;
    attempt += 1;
    // 0.5 s, 1 s, 2 s … up to 5 s: an API restart is picked up within seconds.
    const delay = Math.min(5_000, 500 * 2 ** Math.min(attempt - 1, 4));
    setTimeout(() => void open(), delay);
  };
  void open();
}
