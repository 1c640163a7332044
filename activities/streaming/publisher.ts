import type { ModelDelta } from '../model/provider';
import type { StreamChannel } from './channel';
import { STREAM_BUDGETS } from './channel';
import type { StreamFrame } from './frames';

/** What tags one model call attempt's frames. */
export interface CallTag {
  run: string;
  step: number;
  call: string;
  attempt: number;
}

/** One model call attempt's stream: deltas in, frames out, best effort. */
export interface CallStream {
  /** The provider's `onDelta`: never throws, never waits. */
  delta(d: ModelDelta): void;
  /** The attempt returned: an `end` frame after everything before it (resolves when sent, or dropped). */
  end(): Promise<void>;
}

type Pending = Omit<StreamFrame, 'seq' | keyof CallTag>;

/**
 * Publishes a call attempt's deltas: a `start` frame at once, then the deltas, merged while a send
 * is in flight (one send at a time, so a slow channel gets fewer, larger frames and order holds).
 * Past {@link STREAM_BUDGETS.attemptBytes} a `cut` frame ends the stream. A channel that fails
 * loses frames, never the call: the first failure is reported to `warn`, the rest dropped quietly.
 */
export function publishCall(
  channel: StreamChannel,
  tag: CallTag,
  warn: (message: string) => void,
): CallStream {
  const pending: Pending[] = [{ kind: 'start', at: Date.now() }];
  let seq = 0;
  let bytes = 0;
  let cut = false;
  let sending: Promise<void> | null = null;
  let warned = false;

  const send = (): Promise<void> => {
    if (sending) return sending;
    if (!pending.length) return Promise.resolve();
    const batch = pending.splice(0, pending.length).map((p): StreamFrame => ({ ...tag, seq: seq++, ...p }));
    sending = channel
      .publish(tag.run, batch)
      .catch((err: unknown) => {
        if (!warned) {
          warned = true;
          warn(`live tokens of ${tag.run} step ${tag.step} not sent: ${(err as Error).message}`);
        }
      })
      .finally(() => {
        sending = null;
        if (pending.length) void send();
      });
    return sending;
  };

  const push = (p: Pending): void => {
    const last = pending[pending.length - 1];
    // Merged while waiting: the same kind of piece, for the same tool call, without new id or name.
    if (last && last.kind === p.kind && p.kind === 'text') {
      last.text = (last.text ?? '') + (p.text ?? '');
    } else if (
      last &&
      last.kind === 'tool' &&
      p.kind === 'tool' &&
      last.index === p.index &&
      !p.id &&
      !p.name
    ) {
      last.text = (last.text ?? '') + (p.text ?? '');
    } else {
      pending.push(p);
    }
    void send();
  };

  void send();
  return {
    delta(d) {
      if (cut) return;
      const piece = d.kind === 'text' ? d.text : d.args;
      bytes += Buffer.byteLength(piece ?? '');
      if (bytes > STREAM_BUDGETS.attemptBytes) {
        cut = true;
        push({ kind: 'cut', at: Date.now() });
        return;
      }
      if (d.kind === 'text') push({ kind: 'text', text: d.text, at: Date.now() });
      else
        push({
          kind: 'tool',
          index: d.index,
          ...(d.id ? { id: d.id } : {}),
          ...(d.name ? { name: d.name } : {}),
          text: d.args,
          at: Date.now(),
        });
    },
    async end() {
      if (!cut) pending.push({ kind: 'end', at: Date.now() });
      // Everything before it first, then the end.
      while (sending || pending.length) await send();
    },
  };
}
