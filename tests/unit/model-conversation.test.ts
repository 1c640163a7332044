import { FileContentStore } from '../../activities/content/file-store';
import type { ConversationNode } from '../../activities/model/conversation';
import { appendConversation, buildWindow } from '../../activities/model/conversation';
import type { UncitedSearchRecord } from '../../shared/citations';
import type { ContentRef } from '../../shared/content';
import type { ConversationMessage } from '../../shared/conversation';
import { tempDir } from '../../testkit/temporal';

const store = new FileContentStore(tempDir('content'));
const WINDOW = { contextTokens: 128_000, reserveTokens: 4096, toolTokens: 200, maxMessages: 200 };
const head: ConversationMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Count the rows.' },
];

type ToolContent = Extract<ConversationMessage, { role: 'tool' }>['content'];

function turn(step: number, content: ToolContent) {
  return [
    {
      role: 'assistant',
      content: null,
      toolCalls: [{ id: `c${step}`, name: 'sql_query', arguments: { sql: 'select 1' } }],
    },
    { role: 'tool', toolCallId: `c${step}`, name: 'sql_query', content, step },
  ] as ConversationMessage[];
}

test('each call stores only what is new; the same input gives the same reference (retries, replays)', async () => {
  const first = await appendConversation(store, { conversation: null, head, messages: [] });
  const again = await appendConversation(store, { conversation: null, head, messages: [] });
  expect(again.ref).toBe(first.ref);
  const second = await appendConversation(store, { conversation: first.ref, messages: turn(1, 'one row') });
  expect(second.node.prev).toBe(first.ref);
  expect(second.node.head).toBe(first.node.head);
  expect(second.node.count).toBe(2);
  const { messages } = await buildWindow(store, second.node, WINDOW);
  expect(messages).toEqual([
    ...head,
    turn(1, 'one row')[0],
    { role: 'tool', toolCallId: 'c1', name: 'sql_query', content: 'one row' },
  ]);
});

test('long texts are stored apart and resolved whole for the model', async () => {
  const long = 'x'.repeat(5000);
  const start = await appendConversation(store, {
    head: [head[0]!, { role: 'user', content: long }],
    messages: [],
  });
  const headStored = (await store.get(start.node.head)) as ConversationMessage[];
  expect(typeof headStored[1]?.content).toBe('object');
  const { messages } = await buildWindow(store, start.node, WINDOW);
  expect(messages[1]).toEqual({ role: 'user', content: long });
});

test('a tool result by reference reaches the model whole; an old one is elided to a stub', async () => {
  const big = 'B'.repeat(60_000);
  const ref = await store.put(big);
  let conv = (await appendConversation(store, { head, messages: [] })).ref;
  let node: ConversationNode | undefined;
  for (let step = 1; step <= 5; step++) {
    ({ ref: conv, node } = await appendConversation(store, {
      conversation: conv,
      messages: turn(step, { ref, bytes: 60_000, preview: 'BBB…' }),
    }));
  }
  if (!node) throw new Error('no node');
  const { messages, plan } = await buildWindow(store, node, WINDOW);
  const results = messages.filter((m) => m.role === 'tool');
  expect(results).toHaveLength(5);
  // The 3 latest turns whole, the 2 older ones stubbed.
  expect(results.slice(2).every((m) => m.content === big)).toBe(true);
  expect(results[0]?.content).toMatch(/^\[Result of sql_query from step 1 \(58\.6 KiB\) left out/);
  expect(plan.elided).toBe(2);
});

test('search results by reference are rendered with the run’s cite indexes from the stored records', async () => {
  const records: UncitedSearchRecord[] = ['Alpha', 'Beta', 'Gamma'].map((title, i) => ({
    title,
    url: `https://example.com/${i}`,
    text: `${title} text`,
    published_date: null,
    source_type: 'url',
    filename: null,
    score: null,
    score_details: {},
    search_type: 'web_search',
    sign: 'd',
  }));
  const dataRef: ContentRef = await store.put({ records });
  const start = await appendConversation(store, { head, messages: [] });
  const { node } = await appendConversation(store, {
    conversation: start.ref,
    messages: turn(1, {
      search: dataRef,
      picks: [
        [2, 'd7'],
        [0, 'd3'],
      ],
      maxTextChars: 1500,
      preview: '…',
      bytes: 500,
    }),
  });
  const { messages } = await buildWindow(store, node, WINDOW);
  expect(JSON.parse(messages.at(-1)!.content as string)).toEqual([
    { title: 'Gamma', text: 'Gamma text', index: 'd7', reference_mark: '[[d7]]' },
    { title: 'Alpha', text: 'Alpha text', index: 'd3', reference_mark: '[[d3]]' },
  ]);
});
