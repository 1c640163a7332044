/**
 * The debugging commands' view of the content store: resolving what a history keeps by reference
 * (for `transcript`), and bundling it next to an exported history (`export --with-content`), so a
 * run can be read in full on a machine that cannot reach the store.
 */
import fs from 'node:fs';
import type { ContentStore } from '../../activities/content/store';
import { ContentMissingError, assertContentRef } from '../../activities/content/store';
import { referencesIn } from '../../activities/content/references';
import { renderSearchPicks, searchRecordsOf } from '../../shared/citations';
import type { ContentRef } from '../../shared/content';
import { isTextRef } from '../../shared/content';
import type { ConversationMessage, ToolMessageContent } from '../../shared/conversation';
import type { History } from './history';
import { decodePayloads } from './payloads';
import type { TimelineEntry } from './timeline';

/** A read-only store over a bundle written by `export --with-content`. */
export class BundleContentStore implements ContentStore {
  constructor(
    private readonly values: Record<string, unknown>,
    readonly where: string,
  ) {}

  put(): Promise<ContentRef> {
    return Promise.reject(new Error(`${this.where} is read-only`));
  }

  get(ref: ContentRef): Promise<unknown> {
    assertContentRef(ref);
    if (!(ref in this.values)) return Promise.reject(new ContentMissingError(ref, this.where));
    return Promise.resolve(this.values[ref]);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** The bundle file that goes with a history file. */
export function bundleFileOf(historyFile: string): string {
  return historyFile.replace(/(\.json)?$/, '.content.json');
}

/** Reads the bundle next to a history file, when there is one. */
export function readBundle(historyFile: string): BundleContentStore | undefined {
  const file = bundleFileOf(historyFile);
  if (!fs.existsSync(file)) return undefined;
  return new BundleContentStore(JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>, file);
}

/** Every reference a history's payloads hold. */
export function historyRefs(history: History): Set<ContentRef> {
  const refs = new Set<ContentRef>();
  for (const e of history.events ?? []) {
    const fields = [
      e.workflowExecutionStartedEventAttributes?.input,
      e.activityTaskScheduledEventAttributes?.input,
      e.activityTaskCompletedEventAttributes?.result,
      e.workflowExecutionContinuedAsNewEventAttributes?.input,
    ];
    for (const f of fields) if (f) referencesIn(decodePayloads(f), refs);
  }
  return refs;
}

/**
 * The content a history references, following references inside stored values (a conversation
 * node names the one before it): `{ ref: value }`, plus the references the store no longer holds.
 */
export async function collectContent(
  history: History,
  store: ContentStore,
): Promise<{ values: Record<string, unknown>; missing: ContentRef[] }> {
  const values: Record<string, unknown> = {};
  const missing: ContentRef[] = [];
  const queue = [...historyRefs(history)];
  const seen = new Set<ContentRef>(queue);
  while (queue.length) {
    const ref = queue.shift() as ContentRef;
    try {
      const value = await store.get(ref);
      values[ref] = value;
      const inner = new Set<ContentRef>();
      referencesIn(value, inner);
      for (const r of inner) {
        if (!seen.has(r)) {
          seen.add(r);
          queue.push(r);
        }
      }
    } catch (err) {
      if (!(err instanceof ContentMissingError)) throw err;
      missing.push(ref);
    }
  }
  return { values, missing };
}

async function resolveContent(store: ContentStore, content: ToolMessageContent): Promise<ToolMessageContent> {
  try {
    if (isTextRef(content)) return (await store.get(content.ref)) as string;
    if (typeof content === 'object') {
      const records = searchRecordsOf(await store.get(content.search)) ?? [];
      return renderSearchPicks(records, content.picks, content.maxTextChars);
    }
  } catch (err) {
    if (!(err instanceof ContentMissingError)) throw err;
  }
  return content;
}

async function resolveMessage(store: ContentStore, m: ConversationMessage): Promise<ConversationMessage> {
  if (m.role === 'assistant') return m;
  if (m.role === 'tool') return { ...m, content: await resolveContent(store, m.content) };
  return { ...m, content: (await resolveContent(store, m.content)) as string };
}

/** A timeline with the content it references read from the store (what the store lacks stays a preview). */
export async function resolveTimeline(
  entries: TimelineEntry[],
  store: ContentStore,
): Promise<TimelineEntry[]> {
  return Promise.all(
    entries.map(async (e): Promise<TimelineEntry> => {
      if (e.kind === 'model') {
        return { ...e, newMessages: await Promise.all(e.newMessages.map((m) => resolveMessage(store, m))) };
      }
      if (e.kind === 'tool' && e.resultRef) {
        try {
          const whole = (await store.get(e.resultRef)) as string;
          const resolved = { ...e, result: whole };
          delete resolved.resultRef;
          delete resolved.resultBytes;
          return resolved;
        } catch (err) {
          if (!(err instanceof ContentMissingError)) throw err;
        }
      }
      return e;
    }),
  );
}

/** The content store a worker config names, and closing the stores this process opened. */
export { closeContentStores, contentStoreFor } from '../../activities/content/config';
