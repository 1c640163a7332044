/**
 * Live tokens: the frames a model call's deltas travel in, outside workflow history, from the
 * worker to whoever watches (the HTTP API's stream, `durable-agent run` and `watch`). Each frame is
 * tagged with the run, the step, the model call (its activity id) and the attempt, so a watcher
 * that sees a new attempt of a call drops what the failed one said, and never glues two answers.
 */

/** One frame of a model call's stream. */
export interface StreamFrame {
  /** The run's workflow id. */
  run: string;
  /** The run's step (model turn). */
  step: number;
  /** The model call: its activity id in the run's execution. */
  call: string;
  /** The activity attempt (1, 2, …): a later attempt's text replaces an earlier one's. */
  attempt: number;
  /** Position in this call attempt's stream, from 0 (the `start` frame). */
  seq: number;
  /**
   * `start`: a call attempt begins (its text so far is empty); `text`: more of the answer;
   * `tool`: more of a tool call's arguments; `end`: the attempt returned; `cut`: the attempt's
   * stream passed its budget, nothing more of it is sent (its answer arrives with the run's events).
   */
  kind: 'start' | 'text' | 'tool' | 'end' | 'cut';
  text?: string;
  /** For `tool`: the call's position, and its id and name on its first frame. */
  index?: number;
  id?: string;
  name?: string;
  /** When the worker had the delta (ms since the epoch). */
  at: number;
}

/** Where a watcher is in a run's stream: `<call>.<attempt>.<seq>` of the last frame it saw. */
export function frameId(f: Pick<StreamFrame, 'call' | 'attempt' | 'seq'>): string {
  return `${f.call}.${f.attempt}.${f.seq}`;
}

/** Reads a frame id back, or null when it is not one. */
export function parseFrameId(id: string): { call: string; attempt: number; seq: number } | null {
  const m = /^(.+)\.(\d+)\.(\d+)$/.exec(id);
  return m ? { call: m[1] as string, attempt: Number(m[2]), seq: Number(m[3]) } : null;
}

/** What one call attempt said so far: its text and its tool calls' arguments. */
export interface PartialAnswer {
  run: string;
  step: number;
  call: string;
  attempt: number;
  /** The last frame's seq. */
  seq: number;
  text: string;
  tools: { index: number; id?: string; name?: string; args: string }[];
  ended: boolean;
}

/**
 * The newest call attempt's answer so far, from a run's frames in order: what a late joiner gets
 * in one event instead of every delta. Null before any call streamed.
 */
export function partialAnswer(frames: readonly StreamFrame[]): PartialAnswer | null {
  let p: PartialAnswer | null = null;
  for (const f of frames) {
    if (f.kind === 'start' || !p || p.call !== f.call || p.attempt !== f.attempt) {
      if (f.kind !== 'start' && p && p.call === f.call && f.attempt < p.attempt) continue;
      p = {
        run: f.run,
        step: f.step,
        call: f.call,
        attempt: f.attempt,
        seq: f.seq,
        text: '',
        tools: [],
        ended: false,
      };
      if (f.kind === 'start') continue;
    }
    p.seq = f.seq;
    if (f.kind === 'text') p.text += f.text ?? '';
    else if (f.kind === 'tool') {
      const index = f.index ?? 0;
      let t = p.tools.find((x) => x.index === index);
      if (!t) {
        t = { index, args: '' };
        p.tools.push(t);
      }
      if (f.id) t.id = f.id;
      if (f.name) t.name = f.name;
      t.args += f.text ?? '';
    } else if (f.kind === 'end' || f.kind === 'cut') p.ended = true;
  }
  return p;
}
