import { SIZE_BUDGETS, jsonBytes, truncateUtf8 } from '../../shared/temporal-limits';
import { BoundedList } from './bounded-list';
import type { AgentEvent } from '../../shared/agent';

/** Events kept (and carried over continue-as-new); older ones are dropped first. */
const MAX_EVENTS = 1000;
/** Longest text put in an event, so the `events` query and the carried state stay small. */
const EVENT_TEXT_BYTES = 400;
/** Largest tool arguments shown in an event as they are; larger ones become a JSON preview. */
const EVENT_ARGS_BYTES = 500;

/** Cuts a text for an event. */
export function clip(text: string, maxBytes = EVENT_TEXT_BYTES): string {
  return truncateUtf8(text, maxBytes, 'text').text;
}

/** Tool arguments as an event shows them: as they are when small, else a JSON preview. */
export function eventArgs(args: unknown): unknown {
  if (jsonBytes(args) <= EVENT_ARGS_BYTES) return args;
  return clip(JSON.stringify(args) ?? '', EVENT_ARGS_BYTES);
}

/**
 * The run's recent events for live progress (`events` query), numbered in order, bounded by count
 * and by SIZE_BUDGETS.eventsBytes: the oldest are dropped first.
 */
export class EventLog {
  private readonly events: BoundedList<AgentEvent>;
  seq: number;

  constructor(carried: AgentEvent[] = [], seq = 0) {
    this.events = new BoundedList(MAX_EVENTS, SIZE_BUDGETS.eventsBytes, carried);
    this.seq = seq;
  }

  /** Appends an event; `step` is the run's current step. */
  emit(step: number, e: Omit<AgentEvent, 'seq' | 'at' | 'step'>): void {
    this.seq += 1;
    this.events.push({
      seq: this.seq,
      at: new Date().toISOString(),
      step,
      ...e,
      ...(e.text !== undefined ? { text: clip(e.text) } : {}),
      ...(e.args !== undefined ? { args: eventArgs(e.args) } : {}),
    });
  }

  /** Drops the oldest events until at most `maxBytes` remain. */
  trim(maxBytes: number): void {
    this.events.trim(maxBytes);
  }

  /** Events after a sequence number. */
  since(seq: number): AgentEvent[] {
    return this.events.all.filter((e) => e.seq > seq);
  }

  /** The newest event of a kind, if any is kept. */
  latest(kind: AgentEvent['kind']): AgentEvent | undefined {
    const all = this.events.all;
    for (let i = all.length - 1; i >= 0; i -= 1) if (all[i]?.kind === kind) return all[i];
    return undefined;
  }

  /** What to carry over continue-as-new. */
  snapshot(): AgentEvent[] {
    return [...this.events.all];
  }
}
