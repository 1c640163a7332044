import fs from 'node:fs';
import path from 'node:path';
import type { StreamChannel, StreamCursor } from './channel';
import { STREAM_BUDGETS } from './channel';
import type { StreamFrame } from './frames';

/**
 * Live tokens through files on this machine: `<dir>/<run>.jsonl`, one frame per line, appended by
 * the worker and read by watchers from the offset they reached. A call that starts when the file
 * is past {@link STREAM_BUDGETS.runFileBytes} starts it afresh (a reader whose offset is past the
 * end reads it again from the top); files untouched for {@link STREAM_BUDGETS.keepMs} are swept.
 */
export class FileStreamChannel implements StreamChannel {
  readonly kind = 'file' as const;
  private lastSweep = 0;
  /** Appends in flight per file, chained so lines never interleave. */
  private readonly writing = new Map<string, Promise<void>>();

  /**
   * @param pollMs how often a watcher looks anyway, for file-system events that never come
   *   (network file systems, editors' renames); events, not this poll, keep latency low.
   */
  constructor(
    readonly dir: string,
    private readonly pollMs = 500,
  ) {}

  private file(run: string): string {
    return path.join(this.dir, `${encodeURIComponent(run)}.jsonl`);
  }

  async publish(run: string, frames: StreamFrame[]): Promise<void> {
    if (!frames.length) return;
    const file = this.file(run);
    const previous = this.writing.get(file) ?? Promise.resolve();
    const next = previous.then(async () => {
      await fs.promises.mkdir(this.dir, { recursive: true });
      const text = frames.map((f) => `${JSON.stringify(f)}\n`).join('');
      if (frames[0]?.kind === 'start') {
        const size = await fs.promises.stat(file).then(
          (s) => s.size,
          () => 0,
        );
        if (size > STREAM_BUDGETS.runFileBytes) {
          await fs.promises.writeFile(file, text);
          return;
        }
      }
      await fs.promises.appendFile(file, text);
    });
    this.writing.set(
      file,
      next.catch(() => undefined),
    );
    await next;
    this.sweepSoon();
  }

  async read(run: string, cursor?: StreamCursor): Promise<{ frames: StreamFrame[]; cursor: StreamCursor }> {
    let offset = cursor && 'offset' in cursor ? cursor.offset : 0;
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(this.file(run), 'r');
    } catch {
      return { frames: [], cursor: { offset: 0 } };
    }
    try {
      const { size } = await handle.stat();
      // The file was started afresh: read it again from the top.
      if (offset > size) offset = 0;
      if (offset === size) return { frames: [], cursor: { offset } };
      const buf = Buffer.alloc(size - offset);
      await handle.read(buf, 0, buf.length, offset);
      // Only whole lines: a line being written is read next time.
      const end = buf.lastIndexOf(0x0a);
      if (end < 0) return { frames: [], cursor: { offset } };
      const frames: StreamFrame[] = [];
      for (const line of buf.subarray(0, end).toString('utf8').split('\n')) {
        if (!line) continue;
        try {
          frames.push(JSON.parse(line) as StreamFrame);
        } catch {
          // A torn line (a crash mid-write) is skipped.
        }
      }
      return { frames, cursor: { offset: offset + end + 1 } };
    } finally {
      await handle.close();
    }
  }

  watch(run: string, onChange: () => void): () => void {
    fs.mkdirSync(this.dir, { recursive: true });
    const name = path.basename(this.file(run));
    let watcher: fs.FSWatcher | undefined;
    try {
      watcher = fs.watch(this.dir, (_event, changed) => {
        if (changed === null || changed === name) onChange();
      });
      watcher.on('error', () => undefined);
    } catch {
      watcher = undefined;
    }
    // File-system events can be missed (network file systems, editors' renames): a slow poll too.
    const poll = setInterval(onChange, this.pollMs);
    poll.unref();
    return () => {
      watcher?.close();
      clearInterval(poll);
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.writing.values());
  }

  /** Removes run files untouched for longer than the channel keeps frames (at most every few minutes). */
  private sweepSoon(): void {
    const now = Date.now();
    if (now - this.lastSweep < STREAM_BUDGETS.sweepEveryMs) return;
    this.lastSweep = now;
    void sweepFolder(this.dir, now - STREAM_BUDGETS.keepMs);
  }
}

/** Deletes the `.jsonl` files of `dir` last written before `before` (ms since the epoch). */
export async function sweepFolder(dir: string, before: number): Promise<number> {
  let removed = 0;
  const names = await fs.promises.readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.endsWith('.jsonl')) continue;
    const file = path.join(dir, name);
    const stat = await fs.promises.stat(file).catch(() => undefined);
    if (stat && stat.mtimeMs < before) {
      await fs.promises.rm(file, { force: true });
      removed += 1;
    }
  }
  return removed;
}
