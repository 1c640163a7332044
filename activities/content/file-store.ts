import type { Stats } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ContentRef } from '../../shared/content';
import type {
  CollectableContentStore,
  ContentEntry,
  StoreStats,
  SweepOptions,
  SweepTotals,
} from './collectable';
import { counted, decide, emptyTotals } from './collectable';
import { FileClaims, isContentFolder } from './file-claims';
import { ContentMissingError, assertContentRef, decodeContent, encodeContent } from './store';

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/** A temporary file left this long by a writer or a collector is left over from a crash. */
const STALE_TEMP_MS = 60 * 60 * 1000;

/**
 * The embedded content store: one file per value under a folder (`<dir>/ab/cdef….json`), for one
 * machine. Writes go to a temporary file renamed into place, so a reader never sees a partial
 * value and concurrent writers of the same value both succeed. A file's modification time is when
 * it was last written or claimed; claims live in `<dir>/claims/` (file-claims.ts).
 */
export class FileContentStore implements CollectableContentStore {
  private readonly claims: FileClaims;

  constructor(readonly dir: string) {
    this.claims = new FileClaims(dir);
  }

  get where(): string {
    return `files in ${this.dir}`;
  }

  private file(ref: ContentRef): string {
    const hex = ref.slice('sha256:'.length);
    return path.join(this.dir, hex.slice(0, 2), `${hex.slice(2)}.json`);
  }

  /** Stamps a stored value written now; false when it is not stored. */
  private async touch(file: string): Promise<boolean> {
    const now = new Date();
    try {
      await fs.utimes(file, now, now);
      return true;
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  }

  async put(value: unknown, claimant?: string): Promise<ContentRef> {
    const { ref, body } = encodeContent(value);
    const file = this.file(ref);
    await this.claims.init();
    // An existing value is stamped, not rewritten: a collector that chose it meanwhile sees the
    // new time and keeps it; one that removed it already makes the stamp fail, and it is written.
    if (!(await this.touch(file))) {
      await fs.mkdir(path.dirname(file), { recursive: true });
      const tmp = `${file}.${process.pid}.${randomUUID()}.tmp`;
      await fs.writeFile(tmp, body, 'utf8');
      await fs.rename(tmp, file);
    }
    if (claimant !== undefined) await this.claims.add(claimant, [ref]);
    return ref;
  }

  async get(ref: ContentRef): Promise<unknown> {
    assertContentRef(ref);
    let body: string;
    try {
      body = await fs.readFile(this.file(ref), 'utf8');
    } catch (err) {
      if (isMissing(err)) throw new ContentMissingError(ref, this.where);
      throw err;
    }
    return decodeContent(ref, body);
  }

  async claim(refs: readonly ContentRef[], workflowId: string): Promise<ContentRef[]> {
    const held: ContentRef[] = [];
    const missing: ContentRef[] = [];
    for (const ref of refs) {
      assertContentRef(ref);
      ((await this.touch(this.file(ref))) ? held : missing).push(ref);
    }
    await this.claims.add(workflowId, held);
    return missing;
  }

  async claimants(): Promise<string[]> {
    const ids = new Set<string>();
    for (const claimants of (await this.claims.read()).values()) for (const id of claimants) ids.add(id);
    return [...ids];
  }

  dropClaims(workflowIds: readonly string[], claimedBefore: Date): Promise<number> {
    return this.claims.drop(workflowIds, claimedBefore);
  }

  /** Every stored value's file, with its entry; leftovers of crashed writers and collectors on the side. */
  private async *entries(leftover?: (file: string, st: Stats) => Promise<void>): AsyncGenerator<{
    file: string;
    entry: ContentEntry;
  }> {
    let folders: string[];
    try {
      folders = (await fs.readdir(this.dir)).filter(isContentFolder).sort();
    } catch (err) {
      if (isMissing(err)) return;
      throw err;
    }
    for (const folder of folders) {
      const names = await fs.readdir(path.join(this.dir, folder)).catch((err: unknown) => {
        if (isMissing(err)) return [] as string[];
        throw err;
      });
      for (const name of names.sort()) {
        const file = path.join(this.dir, folder, name);
        const st = await fs.stat(file).catch((err: unknown) => {
          if (isMissing(err)) return undefined;
          throw err;
        });
        if (!st) continue;
        if (!/^[0-9a-f]{62}\.json$/.test(name)) {
          await leftover?.(file, st);
          continue;
        }
        yield {
          file,
          entry: { ref: `sha256:${folder}${name.slice(0, 62)}`, bytes: st.size, writtenAt: st.mtime },
        };
      }
    }
  }

  /**
   * Removes a value unless it was written or claimed since `before`: moved aside first, so a writer
   * that stamps it in between either stamps it before (and it is put back) or finds it gone and
   * writes it again.
   */
  private async removeUnlessWritten(file: string, before: Date): Promise<boolean> {
    const tomb = `${file}.gc-${process.pid}-${randomUUID().slice(0, 8)}`;
    try {
      await fs.rename(file, tomb);
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
    try {
      if ((await fs.stat(tomb)).mtime >= before) {
        await fs.rename(tomb, file);
        return false;
      }
      await fs.unlink(tomb);
      return true;
    } catch (err) {
      // Another collector finished it (a stale leftover to it): nothing of ours to undo.
      if (isMissing(err)) return false;
      throw err;
    }
  }

  /**
   * A writer's temporary file or a collector's moved-aside value, left by a crash (an hour old: a
   * live one exists for moments). A value stamped after the cutoff was being put back: that is
   * finished; otherwise its removal is.
   */
  private async clearLeftover(file: string, st: Stats, writtenBefore: Date): Promise<void> {
    if (Date.now() - st.ctime.getTime() < STALE_TEMP_MS) return;
    const aside = /^(.*\.json)\.gc-[^/]*$/.exec(file);
    if (aside?.[1] && st.mtime >= writtenBefore && !(await this.touch(aside[1])))
      await fs.rename(file, aside[1]).catch(() => undefined);
    else if (aside || file.endsWith('.tmp')) await fs.rm(file, { force: true });
  }

  async sweep(opts: SweepOptions): Promise<SweepTotals> {
    const totals = emptyTotals();
    const claims = await this.claims.read();
    const legacyBefore = await this.claims.legacyBefore();
    const leftover = opts.dryRun
      ? undefined
      : (file: string, st: Stats) => this.clearLeftover(file, st, opts.writtenBefore);
    for await (const { file, entry } of this.entries(leftover)) {
      if (entry.writtenAt >= opts.writtenBefore) continue;
      const goes = decide(entry, claims.get(entry.ref) ?? [], opts, legacyBefore, totals);
      if (goes && (opts.dryRun || (await this.removeUnlessWritten(file, opts.writtenBefore))))
        counted(entry, opts, totals);
      if (totals.scanned % 1000 === 0) opts.onProgress?.(totals.scanned);
    }
    return totals;
  }

  async stats(): Promise<StoreStats> {
    const claims = await this.claims.read();
    const legacyBefore = await this.claims.legacyBefore();
    const stats: StoreStats = {
      values: 0,
      bytes: 0,
      oldest: null,
      claims: 0,
      claimants: 0,
      legacy: 0,
      legacyBytes: 0,
    };
    for await (const { entry } of this.entries()) {
      stats.values += 1;
      stats.bytes += entry.bytes;
      if (!stats.oldest || entry.writtenAt < stats.oldest) stats.oldest = entry.writtenAt;
      if (legacyBefore && entry.writtenAt < legacyBefore && !claims.has(entry.ref)) {
        stats.legacy += 1;
        stats.legacyBytes += entry.bytes;
      }
    }
    const ids = new Set<string>();
    for (const claimants of claims.values()) {
      stats.claims += claimants.length;
      for (const id of claimants) ids.add(id);
    }
    stats.claimants = ids.size;
    return stats;
  }

  async close(): Promise<void> {}
}
