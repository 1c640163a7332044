/**
 * The file store's claims: one append-only log per workflow under `<dir>/claims/`, named by a hash
 * of the workflow id, a line per claimed reference (`<ref> <workflow id as JSON>`: every line says
 * whose it is, so a line appended while the collector replaces a log is never orphaned). Appends
 * of a line are atomic on a local file system, so concurrent writers need no lock.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { createHash, randomUUID } from 'node:crypto';
import type { ContentRef } from '../../shared/content';
import { isContentRef } from '../../shared/content';

/** The file that marks when claims began to be recorded in a folder that already held content. */
const LEGACY_FILE = 'LEGACY_BEFORE';

/** Whether a folder entry is one of the store's `<2 hex>` content folders. */
export const isContentFolder = (name: string): boolean => /^[0-9a-f]{2}$/.test(name);

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/** The claims of a file store. */
export class FileClaims {
  private readonly dir: string;
  private ready: Promise<void> | undefined;

  constructor(private readonly storeDir: string) {
    this.dir = path.join(storeDir, 'claims');
  }

  private logOf(workflowId: string): string {
    return path.join(this.dir, `${createHash('sha256').update(workflowId).digest('hex').slice(0, 40)}.log`);
  }

  /**
   * Creates the claims folder on first use (before the store's first write); when the store already
   * held content then, that content was written before claims existed (legacy) and the time is
   * recorded.
   */
  init(): Promise<void> {
    this.ready ??= (async () => {
      try {
        await fs.access(this.dir);
        return;
      } catch {
        // First claim in this folder.
      }
      const existing = await fs.readdir(this.storeDir).catch((err: unknown) => {
        if (isMissing(err)) return [] as string[];
        throw err;
      });
      await fs.mkdir(this.storeDir, { recursive: true });
      try {
        await fs.mkdir(this.dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
        throw err;
      }
      if (existing.some(isContentFolder))
        await fs.writeFile(path.join(this.dir, LEGACY_FILE), new Date().toISOString(), 'utf8');
    })().catch((err: unknown) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  /** Records that `workflowId` references `refs`. */
  async add(workflowId: string, refs: readonly ContentRef[]): Promise<void> {
    if (refs.length === 0) return;
    await this.init();
    const id = JSON.stringify(workflowId);
    await fs.appendFile(this.logOf(workflowId), refs.map((r) => `${r} ${id}\n`).join(''), 'utf8');
  }

  /** When claims began in a folder that already held content; null when it held none. */
  async legacyBefore(): Promise<Date | null> {
    try {
      return new Date((await fs.readFile(path.join(this.dir, LEGACY_FILE), 'utf8')).trim());
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  /** Every claim: the claimants of each reference. */
  async read(): Promise<Map<ContentRef, string[]>> {
    const byRef = new Map<ContentRef, string[]>();
    let names: string[];
    try {
      names = await fs.readdir(this.dir);
    } catch (err) {
      if (isMissing(err)) return byRef;
      throw err;
    }
    for (const name of names.filter((n) => n.endsWith('.log'))) {
      let text: string;
      try {
        text = await fs.readFile(path.join(this.dir, name), 'utf8');
      } catch (err) {
        if (isMissing(err)) continue;
        throw err;
      }
      for (const line of text.split('\n')) {
        const space = line.indexOf(' ');
        const ref = line.slice(0, space);
        if (space < 0 || !isContentRef(ref)) continue;
        let id: unknown;
        try {
          id = JSON.parse(line.slice(space + 1));
        } catch {
          continue; // A line cut by a crash mid-append.
        }
        if (typeof id !== 'string') continue;
        const ids = byRef.get(ref);
        if (!ids) byRef.set(ref, [id]);
        else if (!ids.includes(id)) ids.push(id);
      }
    }
    return byRef;
  }

  /**
   * Removes the logs of dead workflows, unless a line was appended after `claimedBefore` (the id was
   * used again by a new run): then the log stays whole. Answers how many logs were removed.
   */
  async drop(workflowIds: readonly string[], claimedBefore: Date): Promise<number> {
    let dropped = 0;
    for (const id of workflowIds) {
      const log = this.logOf(id);
      const tomb = `${log}.gc-${process.pid}-${randomUUID().slice(0, 8)}`;
      try {
        await fs.rename(log, tomb);
      } catch (err) {
        if (isMissing(err)) continue;
        throw err;
      }
      if ((await fs.stat(tomb)).mtime >= claimedBefore) {
        // Claimed again meanwhile: put the lines back (after any written to a new log since).
        await fs.appendFile(log, await fs.readFile(tomb, 'utf8'), 'utf8');
        await fs.unlink(tomb);
      } else {
        await fs.unlink(tomb);
        dropped += 1;
      }
    }
    return dropped;
  }
}
