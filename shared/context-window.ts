/**
 * Which messages a model call sees, measured in tokens, not message count. Pure, so the model
 * activity (which applies it) and tests share one rule:
 *
 * - the head (system prompt and task) is always sent;
 * - then the newest messages, newest first, while they fit the model's context (its size minus
 *   the head, the tool specs and the room kept for the answer) and `maxMessages`;
 * - tool results older than `keepWholeTurns` model turns and larger than `elideOverBytes` are
 *   replaced by a short stub the model can act on (call the tool again), as are older results
 *   that no longer fit whole;
 * - the newest message is always sent, cut to fit when it alone is too large;
 * - the window starts at a turn boundary: it never opens with a tool result whose call is cut off.
 */
import { formatBytes } from './temporal-limits';

/** Rough tokens for a UTF-8 size: 3 bytes a token, cautious for English (≈4) and right for CJK (≈3). */
export function estimateTokens(bytes: number): number {
  return Math.ceil(bytes / 3);
}

/** Tokens a message costs beyond its text (role, separators). */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/** What the planner knows of one message: no content, only its size and shape. */
export interface WindowItem {
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** UTF-8 size of the message's content (and tool calls, for assistant messages). */
  bytes: number;
  /** Tool name, for tool results. */
  tool?: string;
  /** Step of the call, for tool results. */
  step?: number;
}

/** How a window is cut. */
export interface WindowPolicy {
  /** The model's context size in tokens. */
  contextTokens: number;
  /** Tokens kept free for the model's answer. */
  reserveTokens: number;
  /** Tokens already spent on the head (system prompt, task) and the tool specs. */
  fixedTokens: number;
  /** At most this many messages after the head. */
  maxMessages: number;
  /** Tool results of the latest this-many model turns are never elided by age. */
  keepWholeTurns: number;
  /** Older tool results larger than this are elided by age. */
  elideOverBytes: number;
}

/** Defaults of {@link WindowPolicy} that are not per model. */
export const DEFAULT_WINDOW = Object.freeze({
  keepWholeTurns: 3,
  elideOverBytes: 2048,
  maxMessages: 200,
});

/** The planner's verdict on one message. */
export type WindowChoice =
  | { kind: 'whole' }
  | { kind: 'stub' }
  /** Sent cut to `maxBytes` (only ever the newest message). */
  | { kind: 'cut'; maxBytes: number };

/** What {@link planWindow} returns. */
export interface WindowPlan {
  /** Index (into the items given) of the first message sent; earlier ones are left out. */
  start: number;
  /** One choice per item from `start` on. */
  choices: WindowChoice[];
  /** Tokens the window is estimated to cost, head and tool specs included. */
  tokens: number;
  /** Tool results replaced by a stub. */
  elided: number;
  /** Messages left out entirely (before `start`). */
  dropped: number;
}

/** The stub a left-out tool result becomes; it tells the model how to get the content back. */
export function elisionStub(item: Pick<WindowItem, 'tool' | 'step' | 'bytes'>): string {
  const tool = item.tool ?? 'the tool';
  const when = item.step !== undefined ? ` from step ${item.step}` : '';
  return `[Result of ${tool}${when} (${formatBytes(item.bytes)}) left out to keep the context small. Call ${tool} again if you need it.]`;
}

const STUB_TOKENS = 40;

/**
 * Plans the window over `items` (oldest first: the messages after the head that the caller
 * gathered, at most `policy.maxMessages` of the newest). The latest turn (the newest assistant
 * message and everything after it) is always sent, its parts cut to share the budget when they do
 * not fit whole, so a provider never sees a tool result without its call or the reverse.
 */
export function planWindow(items: readonly WindowItem[], policy: WindowPolicy): WindowPlan {
  const budget = Math.max(0, policy.contextTokens - policy.reserveTokens - policy.fixedTokens);
  const lastAssistant = items.map((m) => m.role).lastIndexOf('assistant');
  const lastTurn = lastAssistant === -1 ? items.length - 1 : lastAssistant;
  // `maxMessages` never splits the latest turn.
  const first = Math.max(0, Math.min(items.length - policy.maxMessages, lastTurn));

  const choices = new Map<number, WindowChoice>();
  let used = 0;
  let turnsAfter = 0;
  let start = items.length;
  for (let i = items.length - 1; i >= first; i -= 1) {
    const item = items[i] as WindowItem;
    const whole = estimateTokens(item.bytes) + MESSAGE_OVERHEAD_TOKENS;
    let choice: WindowChoice | undefined;
    let cost = 0;
    if (i >= lastTurn) {
      // Mandatory: whole when it fits, else an equal share of what is left (at least a little).
      const share = Math.floor((budget - used) / (i - lastTurn + 1));
      if (whole <= share) {
        choice = { kind: 'whole' };
        cost = whole;
      } else {
        const maxBytes = Math.max(256, (share - MESSAGE_OVERHEAD_TOKENS) * 3);
        choice = item.bytes <= maxBytes ? { kind: 'whole' } : { kind: 'cut', maxBytes };
        cost = estimateTokens(Math.min(item.bytes, maxBytes)) + MESSAGE_OVERHEAD_TOKENS;
      }
    } else {
      const isTool = item.role === 'tool';
      const oldAndLarge = isTool && turnsAfter >= policy.keepWholeTurns && item.bytes > policy.elideOverBytes;
      if (!oldAndLarge && used + whole <= budget) {
        choice = { kind: 'whole' };
        cost = whole;
      } else if (isTool && used + STUB_TOKENS <= budget) {
        choice = { kind: 'stub' };
        cost = STUB_TOKENS;
      }
    }
    if (!choice) break;
    choices.set(i, choice);
    used += cost;
    start = i;
    if (item.role === 'assistant') turnsAfter += 1;
  }

  // Never open with tool results whose call was cut off.
  while (start < lastTurn && items[start]?.role === 'tool') start += 1;

  const ordered: WindowChoice[] = [];
  let tokens = policy.fixedTokens;
  let elided = 0;
  for (let i = start; i < items.length; i += 1) {
    const choice = choices.get(i) ?? { kind: 'whole' };
    ordered.push(choice);
    const item = items[i] as WindowItem;
    if (choice.kind === 'stub') {
      elided += 1;
      tokens += STUB_TOKENS;
    } else {
      const bytes = choice.kind === 'cut' ? choice.maxBytes : item.bytes;
      tokens += estimateTokens(bytes) + MESSAGE_OVERHEAD_TOKENS;
    }
  }
  return { start, choices: ordered, tokens, elided, dropped: start };
}
