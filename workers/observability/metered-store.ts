import type { ContentRef } from '../../shared/content';
import type { ContentStore } from '../../activities/content/store';
import type { AgentMetrics } from './metrics';

/**
 * A content store that counts its reads and writes, and the JSON bytes each write is given, in
 * the agent's metrics. The values themselves are never looked at beyond their size.
 */
export class MeteredContentStore implements ContentStore {
  constructor(
    private readonly inner: ContentStore,
    private readonly metrics: AgentMetrics,
  ) {}

  get where(): string {
    return this.inner.where;
  }

  async put(value: unknown, claimant?: string): Promise<ContentRef> {
    try {
      const ref = await this.inner.put(value, claimant);
      this.metrics.contentStore('put', 'ok', Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8'));
      return ref;
    } catch (err) {
      this.metrics.contentStore('put', 'error');
      throw err;
    }
  }

  async get(ref: ContentRef): Promise<unknown> {
    try {
      const value = await this.inner.get(ref);
      this.metrics.contentStore('get', 'ok');
      return value;
    } catch (err) {
      this.metrics.contentStore('get', 'error');
      throw err;
    }
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
