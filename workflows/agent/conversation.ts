import { SIZE_BUDGETS, utf8Bytes } from '../../shared/temporal-limits';
import { BoundedList } from './bounded-list';
import type { TranscriptEntry, TranscriptPage, TranscriptQueryArgs } from '../../shared/agent';
import type { CarriedConversation, CarriedState } from './carried-state';
import { isTextRef, previewOf, storedTextBytes } from '../../shared/content';
import type { ContentRef } from '../../shared/content';
import type { ConversationMessage, ToolMessageContent } from '../../shared/conversation';
import type { CallModelInput, CallModelOutput } from '../../shared/model';
import { eventArgs } from './events';

/** Longest text of a transcript entry; longer ones are previews with their full size. */
const ENTRY_TEXT_BYTES = 512;
/** Entries the recent transcript keeps at most (besides its byte budget). */
const MAX_ENTRIES = 1000;
/** Tool call ids remembered to keep new ones unique. */
const RECENT_CALL_IDS = 1000;

function toolText(content: ToolMessageContent): { text: string; bytes: number } {
  if (typeof content === 'string') return { text: content, bytes: utf8Bytes(content) };
  if (isTextRef(content)) return { text: content.preview, bytes: content.bytes };
  return { text: content.preview, bytes: content.bytes };
}

/** A message as the transcript shows it: text cut to a preview, with the whole size when cut. */
export function transcriptEntry(m: ConversationMessage): TranscriptEntry {
  const entry = (text: string, bytes: number): Pick<TranscriptEntry, 'text' | 'fullBytes'> => {
    const shown = previewOf(text, ENTRY_TEXT_BYTES);
    return shown === text && bytes === utf8Bytes(text) ? { text } : { text: shown, fullBytes: bytes };
  };
  switch (m.role) {
    case 'assistant':
      return {
        role: m.role,
        ...entry(m.content ?? '', utf8Bytes(m.content ?? '')),
        ...(m.toolCalls
          ? { toolCalls: m.toolCalls.map((c) => ({ id: c.id, name: c.name, args: eventArgs(c.arguments) })) }
          : {}),
      };
    case 'tool': {
      const { text, bytes } = toolText(m.content);
      return {
        role: m.role,
        ...entry(text, bytes),
        toolCallId: m.toolCallId,
        name: m.name,
        isError: m.isError ?? false,
      };
    }
    default: {
      const text = typeof m.content === 'string' ? m.content : m.content.preview;
      return { role: m.role, ...entry(text, storedTextBytes(m.content)) };
    }
  }
}

/**
 * A run's conversation as the workflow holds it: the reference the last model call returned, the
 * messages since (sent with the next call), and a bounded recent transcript for the `transcript`
 * query. The whole conversation lives in the content store and in history, never in state.
 */
export class ConversationLog {
  private ref: ContentRef | null;
  private head: ConversationMessage[] | undefined;
  private unsent: ConversationMessage[];
  private total: number;
  private recentCallIds: string[];
  private readonly entries: BoundedList<TranscriptEntry>;

  constructor(state: CarriedConversation, transcript: TranscriptEntry[] = []) {
    this.ref = state.ref;
    this.head = state.head;
    this.unsent = [...state.unsent];
    this.total = state.total;
    this.recentCallIds = [...state.recentCallIds];
    this.entries = new BoundedList(MAX_ENTRIES, SIZE_BUDGETS.transcriptBytes, transcript);
  }

  /** A new run's conversation: the system prompt and the task. */
  static start(system: string, task: string): ConversationLog {
    const head: ConversationMessage[] = [
      { role: 'system', content: system },
      { role: 'user', content: task },
    ];
    return new ConversationLog(
      { ref: null, head, unsent: [], total: 2, recentCallIds: [] },
      head.map(transcriptEntry),
    );
  }

  /** A continued run's conversation, including one carried by value by an earlier version. */
  static carried(carried: CarriedState, system: string, task: string): ConversationLog {
    if (carried.conversation) return new ConversationLog(carried.conversation, carried.transcript);
    const messages = (carried.messages ?? []) as ConversationMessage[];
    const headLength = messages[0]?.role === 'system' && messages[1]?.role === 'user' ? 2 : 0;
    const head = headLength
      ? messages.slice(0, 2)
      : ([
          { role: 'system', content: system },
          { role: 'user', content: task },
        ] as ConversationMessage[]);
    const log = new ConversationLog(
      {
        ref: null,
        head,
        unsent: messages.slice(headLength),
        total: 2 + messages.length - headLength,
        recentCallIds: [],
      },
      [],
    );
    for (const m of [...head, ...messages.slice(headLength)]) log.remember(transcriptEntry(m));
    for (const m of messages)
      if (m.role === 'assistant') for (const c of m.toolCalls ?? []) log.rememberId(c.id);
    return log;
  }

  /** Appends a message: it goes with the next model call and into the transcript. */
  add(message: ConversationMessage): void {
    this.unsent.push(message);
    this.total += 1;
    this.remember(transcriptEntry(message));
  }

  /** What the next model call carries: the stored conversation's reference and what is new. */
  modelInput(): Pick<CallModelInput, 'conversation' | 'head' | 'messages'> {
    return { conversation: this.ref, ...(this.head ? { head: this.head } : {}), messages: this.unsent };
  }

  /**
   * Records a model call's outcome: its `conversation` reference replaces what was sent. An output
   * without one (a history recorded before references) leaves the messages to be sent again.
   */
  sent(out: CallModelOutput): void {
    if (!out.conversation) return;
    this.ref = out.conversation;
    this.head = undefined;
    this.unsent = [];
  }

  /** A provider's tool call id when it is usable and new in the run, else `call_<step>_<seq>`. */
  uniqueCallId(id: string, step: number, seq: number): string {
    const fresh =
      id && /^[A-Za-z0-9_.:-]{1,64}$/.test(id) && !this.recentCallIds.includes(id)
        ? id
        : `call_${step}_${seq}`;
    this.rememberId(fresh);
    return fresh;
  }

  private rememberId(id: string): void {
    this.recentCallIds.push(id);
    if (this.recentCallIds.length > RECENT_CALL_IDS)
      this.recentCallIds.splice(0, this.recentCallIds.length - RECENT_CALL_IDS);
  }

  private remember(entry: TranscriptEntry): void {
    this.entries.push(entry);
  }

  /** Drops the oldest transcript entries until at most `maxBytes` remain (the newest always stays). */
  trimTranscript(maxBytes: number): void {
    this.entries.trim(maxBytes);
  }

  /** The `transcript` query's answer. */
  page(args: TranscriptQueryArgs = {}): TranscriptPage {
    const first = this.total - this.entries.length;
    const before =
      typeof args.before === 'number' && args.before >= 0 ? Math.min(args.before, this.total) : this.total;
    const end = Math.max(0, before - first);
    const limit = typeof args.limit === 'number' && args.limit >= 1 ? Math.floor(args.limit) : end;
    const start = Math.max(0, end - limit);
    return {
      entries: this.entries.all.slice(start, end),
      first: first + start,
      total: this.total,
      truncated: first + start > 0,
    };
  }

  /** What to carry over continue-as-new. */
  snapshot(): { conversation: CarriedConversation; transcript: TranscriptEntry[] } {
    return {
      conversation: {
        ref: this.ref,
        ...(this.head ? { head: this.head } : {}),
        unsent: this.unsent,
        total: this.total,
        recentCallIds: this.recentCallIds,
      },
      transcript: [...this.entries.all],
    };
  }
}
