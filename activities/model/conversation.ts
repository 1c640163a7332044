/**
 * The model activity's side of conversations by reference. Each call appends what is new to a
 * chain of write-once nodes in the content store (each node names the previous one and the head:
 * system prompt and task), then walks back from the newest node to gather the window the model
 * sees, resolving references and eliding old large tool results (shared/context-window.ts).
 *
 * Deterministic for a given input, so a retried call stores the same nodes and gets the same
 * reference; any worker that reaches the store can continue any run.
 */
import { jsonBytes, truncateUtf8, utf8Bytes } from '../../shared/temporal-limits';
import { renderSearchPicks, searchRecordsOf } from '../../shared/citations';
import type { ContentRef, StoredText } from '../../shared/content';
import { isTextRef, previewOf } from '../../shared/content';
import type { WindowItem, WindowPlan } from '../../shared/context-window';
import { DEFAULT_WINDOW, elisionStub, estimateTokens, planWindow } from '../../shared/context-window';
import type { ChatMessage, ConversationMessage, ToolMessageContent } from '../../shared/conversation';
import { isSearchResultContent } from '../../shared/conversation';
import type { ContentStore } from '../content/store';

/** One link of a stored conversation. */
export interface ConversationNode {
  v: 1;
  /** The system prompt and task, stored once. */
  head: ContentRef;
  /** The node before this one; null for the first. */
  prev: ContentRef | null;
  /** Messages this node adds, large content by reference. */
  messages: ConversationMessage[];
  /** Messages in the chain through this node (head not counted). */
  count: number;
}

/** What a call stores before asking the model. */
export interface AppendInput {
  conversation?: ContentRef | null;
  head?: ConversationMessage[];
  messages: ConversationMessage[];
}

/** Text longer than this is stored by itself and the node keeps a reference. */
const NODE_INLINE_BYTES = 1024;

async function storeText(store: ContentStore, text: StoredText): Promise<StoredText> {
  if (typeof text !== 'string' || utf8Bytes(text) <= NODE_INLINE_BYTES) return text;
  return { ref: await store.put(text), bytes: utf8Bytes(text), preview: previewOf(text, 200) };
}

/** A message as a node keeps it: long text by reference. */
async function storeMessage(store: ContentStore, m: ConversationMessage): Promise<ConversationMessage> {
  switch (m.role) {
    case 'system':
    case 'user':
      return { ...m, content: await storeText(store, m.content) };
    case 'tool':
      return isSearchResultContent(m.content) ? m : { ...m, content: await storeText(store, m.content) };
    default:
      return m;
  }
}

/**
 * Splits an input from a caller that sends whole conversations (no `conversation`, no `head`):
 * the leading system message(s) and the first user message are the head.
 */
function splitHead(input: AppendInput): { head?: ConversationMessage[]; messages: ConversationMessage[] } {
  if (input.head || input.conversation) return { head: input.head, messages: input.messages };
  let i = 0;
  while (input.messages[i]?.role === 'system') i += 1;
  if (input.messages[i]?.role === 'user') i += 1;
  return { head: input.messages.slice(0, i), messages: input.messages.slice(i) };
}

/** Stores the new messages as a node after `conversation`; returns the node and its reference. */
export async function appendConversation(
  store: ContentStore,
  input: AppendInput,
): Promise<{ ref: ContentRef; node: ConversationNode }> {
  const { head, messages } = splitHead(input);
  const prev = input.conversation ? ((await store.get(input.conversation)) as ConversationNode) : undefined;
  if (!head && !prev) throw new Error('A model call needs the system prompt and task or a conversation');
  const headRef = head
    ? await store.put(await Promise.all(head.map((m) => storeMessage(store, m))))
    : (prev as ConversationNode).head;
  const node: ConversationNode = {
    v: 1,
    head: headRef,
    prev: input.conversation ?? null,
    messages: await Promise.all(messages.map((m) => storeMessage(store, m))),
    count: (prev?.count ?? 0) + messages.length,
  };
  return { ref: await store.put(node), node };
}

/** The newest messages of a chain, oldest first: at least `min` of them, and the whole latest turn. */
export async function latestMessages(
  store: ContentStore,
  node: ConversationNode,
  min: number,
): Promise<ConversationMessage[]> {
  const parts: ConversationMessage[][] = [];
  let collected = 0;
  let sawAssistant = false;
  for (let n: ConversationNode | undefined = node; n;) {
    parts.push(n.messages);
    collected += n.messages.length;
    sawAssistant ||= n.messages.some((m) => m.role === 'assistant');
    if ((collected >= min && sawAssistant) || !n.prev) break;
    n = (await store.get(n.prev)) as ConversationNode;
  }
  return parts.reverse().flat();
}

function contentBytes(content: ToolMessageContent): number {
  if (typeof content === 'string') return utf8Bytes(content);
  if (isTextRef(content)) return content.bytes;
  // A search result renders at most its text cap per pick, plus title and marks.
  return Math.min(content.bytes, content.picks.length * (content.maxTextChars * 3 + 300));
}

/** What the window planner needs of a message. */
export function windowItem(m: ConversationMessage): WindowItem {
  switch (m.role) {
    case 'assistant':
      return { role: m.role, bytes: utf8Bytes(m.content ?? '') + (m.toolCalls ? jsonBytes(m.toolCalls) : 0) };
    case 'tool':
      return {
        role: m.role,
        bytes: contentBytes(m.content),
        tool: m.name,
        ...(m.step ? { step: m.step } : {}),
      };
    default:
      return { role: m.role, bytes: contentBytes(m.content) };
  }
}

async function resolveText(store: ContentStore, content: ToolMessageContent): Promise<string> {
  if (typeof content === 'string') return content;
  if (isTextRef(content)) return (await store.get(content.ref)) as string;
  const records = searchRecordsOf(await store.get(content.search)) ?? [];
  return renderSearchPicks(records, content.picks, content.maxTextChars);
}

/** A stored message as the provider receives it, whole, cut to `maxBytes`, or as an elision stub. */
export async function resolveMessage(
  store: ContentStore,
  m: ConversationMessage,
  how: WindowPlan['choices'][number] = { kind: 'whole' },
): Promise<ChatMessage> {
  if (m.role === 'assistant') return m;
  if (m.role === 'tool' && how.kind === 'stub') {
    const { isError, toolCallId, name } = m;
    return {
      role: 'tool',
      toolCallId,
      name,
      content: elisionStub(windowItem(m)),
      ...(isError ? { isError } : {}),
    };
  }
  let text = await resolveText(store, m.content);
  if (how.kind === 'cut') text = truncateUtf8(text, how.maxBytes, 'content').text;
  if (m.role === 'tool') {
    const { isError, toolCallId, name } = m;
    return { role: 'tool', toolCallId, name, content: text, ...(isError ? { isError } : {}) };
  }
  return { role: m.role, content: text };
}

/** Settings of {@link buildWindow}. */
export interface BuildWindowOptions {
  contextTokens: number;
  reserveTokens: number;
  /** Tokens of the tool specs sent with the call. */
  toolTokens: number;
  maxMessages: number;
}

/** The messages a provider receives for a stored conversation, and what was left out. */
export async function buildWindow(
  store: ContentStore,
  node: ConversationNode,
  opts: BuildWindowOptions,
): Promise<{ messages: ChatMessage[]; plan: WindowPlan }> {
  const head = await Promise.all(
    ((await store.get(node.head)) as ConversationMessage[]).map((m) => resolveMessage(store, m)),
  );
  const headTokens = head.reduce((t, m) => t + estimateTokens(utf8Bytes(m.content ?? '')), 0);
  const items = await latestMessages(store, node, opts.maxMessages);
  const plan = planWindow(items.map(windowItem), {
    contextTokens: opts.contextTokens,
    reserveTokens: opts.reserveTokens,
    fixedTokens: headTokens + opts.toolTokens,
    maxMessages: opts.maxMessages,
    keepWholeTurns: DEFAULT_WINDOW.keepWholeTurns,
    elideOverBytes: DEFAULT_WINDOW.elideOverBytes,
  });
  const windowed = items.slice(plan.start);
  const body = await Promise.all(windowed.map((m, i) => resolveMessage(store, m, plan.choices[i])));
  return { messages: [...head, ...body], plan: { ...plan, dropped: node.count - windowed.length } };
}
