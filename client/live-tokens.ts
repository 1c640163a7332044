/**
 * Follows a run's live tokens on its channel (activities/streaming): what a late joiner sees first
 * (the newest call's answer so far, in one event), or what a watcher resuming after a frame missed,
 * then every new frame as it arrives. Frames of a newer attempt of a call replace the older
 * attempt's text; `formatLive` turns them into terminal output.
 */
import type { PartialAnswer, StreamChannel, StreamCursor, StreamFrame } from '../activities/streaming';
import { frameId, parseFrameId, partialAnswer } from '../activities/streaming';

/** What a follower hands on: the answer so far (a late joiner's first event), or one frame. */
export type LiveEvent =
  { type: 'partial'; id: string; answer: PartialAnswer } | { type: 'frame'; id: string; frame: StreamFrame };

/** A running follower. */
export interface LiveFollower {
  stop(): void;
  /** Resolves once the frames kept so far were read (what comes after arrives as frames). */
  ready: Promise<void>;
}

/**
 * Reads the run's frames kept so far, hands on the start (`after`: the frames after that frame id;
 * else the newest call's answer so far when it has not ended), then each new frame. `onEvent` is
 * awaited, one event at a time.
 */
export function followLiveTokens(
  channel: StreamChannel,
  run: string,
  opts: {
    after?: string | null;
    onEvent: (e: LiveEvent) => void | Promise<void>;
    onError?: (err: Error) => void;
  },
): LiveFollower {
  let cursor: StreamCursor | undefined;
  let stopped = false;
  let reading: Promise<void> | null = null;
  let again = false;
  let started = false;

  const emit = async (frames: StreamFrame[]) => {
    for (const frame of frames) {
      if (stopped) return;
      await opts.onEvent({ type: 'frame', id: frameId(frame), frame });
    }
  };

  const first = async (frames: StreamFrame[]) => {
    const after = opts.after ? parseFrameId(opts.after) : null;
    if (after) {
      const i = frames.findIndex(
        (f) => f.call === after.call && f.attempt === after.attempt && f.seq === after.seq,
      );
      if (i >= 0) return emit(frames.slice(i + 1));
      // The frame is no longer kept: the answer so far stands in for what was missed.
    }
    const p = partialAnswer(frames);
    if (p && !p.ended && !stopped) await opts.onEvent({ type: 'partial', id: frameId(p), answer: p });
  };

  const read = (): Promise<void> => {
    if (reading) {
      again = true;
      return reading;
    }
    reading = (async () => {
      do {
        again = false;
        const r = await channel.read(run, cursor);
        cursor = r.cursor;
        if (!started) {
          started = true;
          await first(r.frames);
        } else {
          await emit(r.frames);
        }
      } while (again && !stopped);
    })()
      .catch((err: unknown) => opts.onError?.(err as Error))
      .finally(() => {
        reading = null;
      });
    return reading;
  };

  const unwatch = channel.watch(run, () => void read());
  const ready = read();
  return {
    ready,
    stop() {
      stopped = true;
      unwatch();
    },
  };
}
