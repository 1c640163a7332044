import { BUDGETS, jsonBytes, truncateUtf8 } from '../../shared/budgets';
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
 * and by BUDGETS.eventsBytes: the oldest are dropped first.
 */
export class EventLog {
  private events: AgentEvent[];
  private sizes: number[];
  private bytes: number;
  seq: number;

  constructor(carried: AgentEvent[] = [], seq = 0) {
    this.events = [...carried];
    this.sizes = this.events.map((e) => jsonBytes(e) + 1);
    this.bytes = this.sizes.reduce((a, b) => a + b, 0);
    this.seq = seq;
  }

  /** Appends an event; `step` is the run's current step. */
  emit(step: number, e: Omit<AgentEvent, 'seq' | 'at' | 'step'>): void {
    this.seq += 1;
    const event: AgentEvent = {
      seq: this.seq,
      at: new Date().toISOString(),
      step,
      ...e,
      ...(e.text !== undefined ? { text: clip(e.text) } : {}),
      ...(e.args !== undefined ? { args: eventArgs(e.args) } : {}),
    };
    const size = jsonBytes(event) + 1;
    this.events.push(event);
    this.sizes.push(size);
    this.bytes += size;
    this.trim(BUDGETS.eventsBytes);
  }

  /** Drops the oldest events until at most `maxBytes` (and the count bound) remain. */
  trim(maxBytes: number): void {
    let drop = 0;
    while (
      drop < this.events.length - 1 &&
      (this.events.length - drop > MAX_EVENTS || this.bytes > maxBytes)
    ) {
      this.bytes -= this.sizes[drop] as number;
      drop += 1;
    }
    if (drop) {
      this.events.splice(0, drop);
      this.sizes.splice(0, drop);
    }
  }

  /** Events after a sequence number. */
  since(seq: number): AgentEvent[] {
    return this.events.filter((e) => e.seq > seq);
  }

  /** The newest event of a kind, if any is kept. */
  latest(kind: AgentEvent['kind']): AgentEvent | undefined {
    for (let i = this.events.length - 1; i >= 0; i -= 1)
      if (this.events[i]?.kind === kind) return this.events[i];
    return undefined;
  }

  /** What to carry over continue-as-new. */
  snapshot(): AgentEvent[] {
    return this.events;
  }
}
