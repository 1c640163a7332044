/**
 * A lock file that lets one process at a time open the knowledge base. PGlite keeps Postgres'
 * data files in a folder but, being in-process, has no postmaster to arbitrate: two processes (a
 * worker and a CLI `kb add`) opening the same folder would corrupt it. The lock names its owner's
 * pid, so a lock left by a crashed process is recognised and taken over.
 */
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** Thrown when another live process holds the lock past the timeout. */
export class LockBusyError extends Error {
  override readonly name = 'LockBusyError';
  /** Pid of the process holding the lock. */
  readonly holder: number;
  constructor(message: string, holder: number) {
    super(message);
    this.holder = holder;
  }
}

/** A held lock; release it exactly once. */
export interface HeldLock {
  release(): void;
}

/**
 * Takes the lock at `file`, waiting up to `timeoutMs` for a live holder to release it. `signal`
 * aborts the wait (an activity being cancelled).
 */
export async function acquireLock(file: string, timeoutMs: number, signal?: AbortSignal): Promise<HeldLock> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const fd = fs.openSync(file, 'wx');
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          fs.rmSync(file, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readHolder(file);
    // No pid yet: the owner is between creating the file and writing to it, unless that was long ago.
    const stale = holder === undefined ? ageMs(file) > 2000 : !isAlive(holder);
    if (stale) {
      // Its owner died without releasing. Remove it and race for it again.
      fs.rmSync(file, { force: true });
      continue;
    }
    if (Date.now() >= deadline) {
      throw new LockBusyError(`${file} is held by process ${holder ?? 'unknown'}`, holder ?? 0);
    }
    await sleep(100, undefined, signal ? { signal } : {});
  }
}

function readHolder(file: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function ageMs(file: string): number {
  try {
    return Date.now() - fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
