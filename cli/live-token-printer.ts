/** Live tokens in a terminal: the typing of `run` and `watch` (the channel's frames come from client/live-tokens.ts). */
import type { LiveEvent } from '../client/live-tokens';
import { CITATION_MARK } from '../shared/render-citations';

/** What a run's event lines tell the printer, so typing and event lines keep one order. */
export interface LiveTokenPrinter {
  onEvent: (e: LiveEvent) => void;
  /** Prints a whole line (an event's), after the line being typed. */
  line: (text: string) => void;
  /** Ends a line being typed, prints what waited for it and any answer still held. */
  flush: () => void;
  /** Whether any of this step's answer was typed (its answer need not be printed again). */
  typed: (step: number) => boolean;
  /**
   * The run's events reached `step` (its `model_started` event): its answer may be typed now. Until
   * then it is held, so it follows the earlier steps' event lines, which are read later than tokens.
   */
  reached: (step: number) => void;
  /** Whether a call of `tool` was typed in `step` (once per typed call): its event line would repeat it. */
  typedCall: (step: number, tool: string) => boolean;
}

/**
 * Terminal output of live tokens: the text of each call as it comes, under a `[step N]` head, and
 * each tool call the model writes as `→ <tool> <arguments so far>` on a line of its own, its id
 * after its arguments (`(call-1)`, as the call's event line would show it); a newer
 * attempt of the same call starts over on a new line saying so. A step's answer is typed once the
 * run's events have reached that step ({@link LiveTokenPrinter.reached}), or after
 * {@link EVENTS_WAIT_MS} without them; other lines (the run's events) wait while a line is being
 * typed and follow it, so neither cuts the other; a line held longer than {@link HOLD_MS} (an end
 * frame that never came) breaks the typing. Citation marks are typed as the final answer shows
 * them, numbered by first use in the call's text (`[[a1]]` → `[1]`).
 */
export function liveTokenPrinter(write: (text: string) => void): LiveTokenPrinter {
  let current: { call: string; attempt: number } | null = null;
  let open = false;
  /** What the open line types: the answer's text, or the arguments of the tool call at this index. */
  let typing: 'text' | number | null = null;
  const typedSteps = new Set<number>();
  /** The tool calls typed per step, by their index in the call (a retried attempt overwrites). */
  const typedTools = new Map<number, Map<number, string>>();
  /** The ids of the call's tool calls by index, written after each one's arguments, as its event line does. */
  let toolIds = new Map<number, string>();
  const held: string[] = [];
  let holdTimer: ReturnType<typeof setTimeout> | undefined;
  /** Live events of steps the run's events have not reached yet, in order (bounded by the stream's budgets). */
  const waiting: LiveEvent[] = [];
  let waitTimer: ReturnType<typeof setTimeout> | undefined;
  let reachedStep = 0;
  /** Citation marks of the call being typed, numbered by first use; a mark split over frames waits. */
  let marks = new Map<string, number>();
  let markTail = '';
  /** Ends the part being typed: the text's held tail, or the tool call's id. */
  const endPart = () => {
    if (markTail) write(markTail);
    markTail = '';
    const id = typeof typing === 'number' ? toolIds.get(typing) : undefined;
    if (id) write(` (${id})`);
  };
  const flushTyping = () => {
    if (holdTimer) clearTimeout(holdTimer);
    holdTimer = undefined;
    endPart();
    if (open) write('\n');
    open = false;
    typing = null;
    for (const l of held.splice(0)) write(`${l}\n`);
  };
  type Tag = { step: number; call: string; attempt: number };
  const begin = (f: Tag) => {
    if (open && current && current.call === f.call && current.attempt === f.attempt) return;
    const retry = current?.call === f.call && current.attempt !== f.attempt;
    const resumed = current?.call === f.call && current.attempt === f.attempt;
    flushTyping();
    if (!resumed) {
      marks = new Map();
      toolIds = new Map();
    }
    current = { call: f.call, attempt: f.attempt };
    write(`[step ${f.step}] ${retry ? `(attempt ${f.attempt}, from the start) ` : resumed ? '… ' : ''}`);
    open = true;
  };
  /** The text with its complete marks numbered, less a tail that may be the start of a mark. */
  const numbered = (text: string): string => {
    const all = (markTail + text).replace(CITATION_MARK, (_m, index: string) => {
      if (!marks.has(index)) marks.set(index, marks.size + 1);
      return `[${marks.get(index)}]`;
    });
    const tail = /\[(?:\[\s*(?:[a-z]\d*\s*\]?)?)?$/.exec(all);
    markTail = tail ? tail[0] : '';
    return tail ? all.slice(0, tail.index) : all;
  };
  /** Types `text` as part `part` of the call's answer: a new part starts a line of its own. */
  const type = (f: Tag, part: 'text' | number, head: string, text: string) => {
    begin(f);
    if (typing !== part) {
      endPart();
      if (typing !== null) write(`\n[step ${f.step}] `);
      write(head);
      typing = part;
    }
    write(part === 'text' ? numbered(text) : text);
    typedSteps.add(f.step);
  };
  const typeTool = (f: Tag, index: number, name: string | undefined, text: string, id?: string) => {
    const tools = typedTools.get(f.step) ?? new Map<number, string>();
    typedTools.set(f.step, tools);
    if (name || !tools.has(index)) tools.set(index, name ?? tools.get(index) ?? 'tool');
    type(f, index, `→ ${name ?? tools.get(index) ?? 'tool'} `, text);
    if (id) toolIds.set(index, id);
  };
  const show = (e: LiveEvent) => {
    if (e.type === 'partial') {
      const p = e.answer;
      begin(p);
      if (p.text) type(p, 'text', '', p.text);
      for (const t of p.tools) typeTool(p, t.index, t.name, t.args, t.id);
      return;
    }
    const f = e.frame;
    if (f.kind === 'start') {
      // A new attempt of a call that already typed: it starts over.
      if (current?.call === f.call && current.attempt !== f.attempt) begin(f);
      return;
    }
    if (f.kind === 'text' && f.text) type(f, 'text', '', f.text);
    else if (f.kind === 'tool') typeTool(f, f.index ?? 0, f.name, f.text ?? '', f.id);
    else if (f.kind === 'end' || f.kind === 'cut') {
      if (current?.call === f.call && current.attempt === f.attempt) flushTyping();
    }
  };
  const stepOf = (e: LiveEvent) => (e.type === 'partial' ? e.answer.step : e.frame.step);
  /** Shows what waited for steps reached by now (all of it with `all`). */
  const release = (all = false) => {
    while (waiting.length > 0 && (all || stepOf(waiting[0]!) <= reachedStep)) show(waiting.shift()!);
    if (waiting.length === 0 && waitTimer) {
      clearTimeout(waitTimer);
      waitTimer = undefined;
    }
  };
  return {
    flush() {
      release(true);
      flushTyping();
    },
    typed: (step) => typedSteps.has(step),
    reached(step) {
      reachedStep = Math.max(reachedStep, step);
      release();
    },
    typedCall(step, tool) {
      const tools = typedTools.get(step);
      for (const [index, name] of tools ?? []) {
        if (name !== tool) continue;
        tools?.delete(index);
        return true;
      }
      return false;
    },
    line(text) {
      if (!open) {
        write(`${text}\n`);
        return;
      }
      held.push(text);
      holdTimer ??= setTimeout(flushTyping, HOLD_MS);
    },
    onEvent(e) {
      if (waiting.length > 0 || stepOf(e) > reachedStep) {
        waiting.push(e);
        // Events that do not come (a run whose queries go unanswered) must not hide the answer.
        waitTimer ??= setTimeout(() => {
          waitTimer = undefined;
          reachedStep = Math.max(reachedStep, ...waiting.map(stepOf));
          release();
        }, EVENTS_WAIT_MS);
        return;
      }
      show(e);
    },
  };
}

/** Longest an event line waits for the line being typed to end. */
const HOLD_MS = 1_000;

/** Longest a step's answer waits for the run's events to reach its step (they are polled). */
const EVENTS_WAIT_MS = 3_000;
