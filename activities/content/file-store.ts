import fs from 'node:fs/promises';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ContentRef } from '../../shared/content';
import type { ContentStore } from './store';
import { ContentMissingError, assertContentRef, decodeContent, encodeContent } from './store';

/**
 * The embedded content store: one file per value under a folder (`<dir>/ab/cdef….json`), for one
 * machine. Writes go to a temporary file renamed into place, so a reader never sees a partial
 * value and concurrent writers of the same value both succeed.
 */
export class FileContentStore implements ContentStore {
  constructor(readonly dir: string) {}

  get where(): string {
    return `files in ${this.dir}`;
  }

  private file(ref: ContentRef): string {
    const hex = ref.slice('sha256:'.length);
    return path.join(this.dir, hex.slice(0, 2), `${hex.slice(2)}.json`);
  }

  async put(value: unknown): Promise<ContentRef> {
    const { ref, body } = encodeContent(value);
    const file = this.file(ref);
    try {
      await fs.access(file);
      return ref;
    } catch {
      // Not there yet: write it.
    }
    await fs.mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${randomUUID()}.tmp`;
    await fs.writeFile(tmp, body, 'utf8');
    await fs.rename(tmp, file);
    return ref;
  }

  async get(ref: ContentRef): Promise<unknown> {
    assertContentRef(ref);
    let body: string;
    try {
      body = await fs.readFile(this.file(ref), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new ContentMissingError(ref, this.where);
      throw err;
    }
    return decodeContent(ref, body);
  }

  async close(): Promise<void> {}
}
