/** Reading a `text/event-stream` response the way a browser's EventSource does, for tests and benches. */

/** One server-sent event. */
export interface SseEvent {
  event: string;
  /** The `id:` field, when the event has one (what `Last-Event-ID` resumes from). */
  id?: string;
  data: string;
}

/**
 * Opens `url` as an event stream and hands each event to `onEvent` until it returns true or the
 * stream ends; a status other than 200 throws with the body.
 */
export async function readSse(
  url: string,
  onEvent: (e: SseEvent) => boolean | void,
  opts: { headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<void> {
  const res = await fetch(url, {
    headers: { accept: 'text/event-stream', ...opts.headers },
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = '';
        let id: string | undefined;
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('id: ')) id = line.slice(4);
          else if (line.startsWith('data: ')) data.push(line.slice(6));
        }
        if (event && onEvent({ event, ...(id !== undefined ? { id } : {}), data: data.join('\n') })) return;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
