import path from 'node:path';
import type { StreamChannel } from './channel';
import { FileStreamChannel } from './file-channel';
import { PostgresStreamChannel } from './postgres-channel';

export type { StreamChannel, StreamCursor } from './channel';
export { STREAM_BUDGETS } from './channel';
export type { PartialAnswer, StreamFrame } from './frames';
export { frameId, parseFrameId, partialAnswer } from './frames';
export type { CallStream, CallTag } from './publisher';
export { publishCall } from './publisher';

/** Where live tokens travel: nowhere, files on this machine, or a PostgreSQL database. */
export type StreamConfig =
  { kind: 'off' } | { kind: 'file'; dir: string } | { kind: 'postgres'; url: string };

/** The variable that names the channel, for worker, API and CLI alike. */
export const STREAM_ENV = 'DURABLE_AGENT_STREAM';

/**
 * Reads `DURABLE_AGENT_STREAM`: empty for files in the default folder, `off`, a folder (or
 * `file:<folder>`), or a `postgres://` URL. Throws a message that never echoes a URL.
 */
export function parseStreamSetting(value: string | undefined, defaultDir: string): StreamConfig {
  const v = value?.trim();
  if (!v) return { kind: 'file', dir: defaultDir };
  if (v === 'off') return { kind: 'off' };
  if (/^postgres(ql)?:\/\//i.test(v)) {
    try {
      new URL(v);
    } catch {
      throw new Error(`${STREAM_ENV}: not a valid postgres:// URL`);
    }
    return { kind: 'postgres', url: v };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v) && !v.startsWith('file:')) {
    throw new Error(`${STREAM_ENV}: give off, a folder, file:<folder> or a postgres:// URL`);
  }
  return { kind: 'file', dir: path.resolve(v.replace(/^file:(\/\/)?/, '')) };
}

const opened = new Map<string, StreamChannel>();

/** The channel of a configuration, opened once per process (null when off). */
export function streamChannelFor(config: StreamConfig): StreamChannel | null {
  if (config.kind === 'off') return null;
  const key = config.kind === 'file' ? `file:${config.dir}` : config.url;
  let channel = opened.get(key);
  if (!channel) {
    channel =
      config.kind === 'file' ? new FileStreamChannel(config.dir) : new PostgresStreamChannel(config.url);
    opened.set(key, channel);
  }
  return channel;
}

/** Closes every channel this process opened. */
export async function closeStreamChannels(): Promise<void> {
  const all = [...opened.values()];
  opened.clear();
  await Promise.all(all.map((c) => c.close().catch(() => undefined)));
}
