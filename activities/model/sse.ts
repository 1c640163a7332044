/**
 * An incremental parser of `text/event-stream` bodies (Server-Sent Events, as the HTML standard
 * defines them), the format OpenAI- and Anthropic-style APIs stream answers in. Text goes in as it
 * arrives, in pieces of any size; complete events come out.
 */

/** One dispatched event: its `event:` name (`message` when it gave none) and its data lines joined by `\n`. */
export interface SseEvent {
  event: string;
  data: string;
}

/** Feeds text in with `push`, and `end` when the body is over; both return the events completed. */
export interface SseParser {
  push(text: string): SseEvent[];
  end(): SseEvent[];
}

/**
 * Creates a parser. Lines end with LF, CRLF or CR (a CRLF split between two pieces is one line end);
 * `:` lines are comments (keep-alives); `id:` and `retry:` are ignored, since a model call is never
 * resumed. At the end, an event whose lines were all complete is dispatched even without the blank
 * line that should close it; an unterminated last line is dropped, since the stream was cut inside it.
 */
export function createSseParser(): SseParser {
  let buffer = '';
  let first = true;
  let afterCr = false;
  let event = '';
  let data: string[] = [];
  let pending = false;

  const line = (text: string, out: SseEvent[]): void => {
    if (text === '') {
      if (pending) out.push({ event: event || 'message', data: data.join('\n') });
      event = '';
      data = [];
      pending = false;
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') {
      event = value;
    } else if (field === 'data') {
      data.push(value);
      pending = true;
    }
  };

  return {
    push(text) {
      const out: SseEvent[] = [];
      buffer += text;
      if (first && buffer.length > 0) {
        if (buffer.startsWith('\uFEFF')) buffer = buffer.slice(1);
        first = false;
      }
      let start = 0;
      for (let i = 0; i < buffer.length; i++) {
        const c = buffer[i];
        if (c === '\n' && afterCr && i === start) {
          // The LF of a CRLF whose CR ended the previous piece.
          start = i + 1;
          afterCr = false;
          continue;
        }
        afterCr = false;
        if (c === '\n' || c === '\r') {
          line(buffer.slice(start, i), out);
          if (c === '\r') {
            if (buffer[i + 1] === '\n') i++;
            else if (i + 1 === buffer.length) afterCr = true;
          }
          start = i + 1;
        }
      }
      buffer = buffer.slice(start);
      return out;
    },
    end() {
      const out: SseEvent[] = [];
      if (buffer === '') line('', out);
      buffer = '';
      return out;
    },
  };
}
