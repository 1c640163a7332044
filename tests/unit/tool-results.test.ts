import { boundToolResult } from '../../activities/content/tool-results';
import { FileContentStore } from '../../activities/content/file-store';
import type { UncitedSearchRecord } from '../../shared/citations';
import { searchRecordsOf } from '../../shared/citations';
import { tempDir } from '../../testkit/temporal';

const store = new FileContentStore(tempDir('content'));

test('small results travel by value, unchanged', async () => {
  const result = { content: 'The answer is 42.', data: { rows: [[42]] } };
  expect(await boundToolResult(result, store)).toEqual(result);
});

test('a 60 KB result goes to the store: history keeps a 1 KB preview, its size and the reference', async () => {
  const content = `[{"big":"${'A'.repeat(60_000)}"}]`;
  const out = await boundToolResult({ content, data: { rows: [['A'.repeat(60_000)]] } }, store);
  expect(Buffer.byteLength(out.content)).toBeLessThanOrEqual(1024);
  expect(content.startsWith(out.content.slice(0, -1))).toBe(true);
  expect(out.contentBytes).toBe(Buffer.byteLength(content));
  expect(await store.get(out.contentRef!)).toBe(content);
  // Data too large for history is stored, not returned.
  expect(out.data).toBeUndefined();
  expect(await store.get(out.dataRef!)).toEqual({ rows: [['A'.repeat(60_000)]] });
  expect(Buffer.byteLength(JSON.stringify(out))).toBeLessThan(2048);
});

test('content over the per-result budget is cut with a notice before it is stored', async () => {
  const out = await boundToolResult({ content: '字'.repeat(1_000_000) }, store);
  const whole = (await store.get(out.contentRef!)) as string;
  expect(Buffer.byteLength(whole)).toBeLessThanOrEqual(1024 * 1024);
  expect(whole).toMatch(/tool result truncated: 2\.9 MiB is over the 1 MiB budget\]$/);
});

test('search results keep compact records (for citations) and store the full ones', async () => {
  const records: UncitedSearchRecord[] = Array.from({ length: 20 }, (_, i) => ({
    title: `Doc ${i}`,
    url: `https://example.com/${i}`,
    text: `passage ${i} `.repeat(200),
    published_date: null,
    source_type: 'url',
    filename: null,
    score: 1 - i / 100,
    score_details: { rank: i + 1 },
    search_type: 'web_search',
    sign: 'd',
  }));
  const out = await boundToolResult({ content: 'pending', data: { records } }, store);
  const compact = searchRecordsOf(out.data);
  expect(compact).toHaveLength(20);
  for (const r of compact ?? []) expect(r.text.length).toBeLessThanOrEqual(300);
  expect(searchRecordsOf(await store.get(out.dataRef!))).toEqual(records);
});
