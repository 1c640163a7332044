/**
 * Offline evals over recorded runs: would another model, or another prompt, have decided the same?
 * For each model call a run recorded, the candidate gets the same request the recorded call sent
 * (the same conversation through that step, built from the run's stored conversation as the model
 * activity builds it; tool results come from the recording, so no tool runs and nothing has a side
 * effect), and its decision is compared with the recorded one: the same tools, the same arguments,
 * an answer matching what an expectations file asks.
 *
 * Reads only what every agent run records (the `callModel` activity's input and result), so it
 * works on histories recorded before it existed, on each run of a chain that continued as new, and
 * on runs with approvals (an approval's outcome is part of the conversation like a tool result).
 */
import { performance } from 'node:perf_hooks';
import type { ContentStore } from '../../activities/content/store';
import { encodeContent } from '../../activities/content/store';
import type { ModelProvider } from '../../activities/model/provider';
import { prepareModelRequest } from '../../activities/model/index';
import type { ContentRef } from '../../shared/content';
import type { ChatMessage, ToolCall } from '../../shared/conversation';
import type { CallModelInput, CallModelOutput, ModelChoice } from '../../shared/model';
import type { History } from '../debug/history';
import { decodePayloads } from '../debug/payloads';

/** What to try instead of what the run used; what is not given stays as recorded. */
export interface EvalCandidate {
  model?: ModelChoice;
  /** Replaces the system prompt of every step. */
  system?: string;
}

/** What a correct final answer of a run holds: one of the patterns (regular expressions, case-insensitive). */
export interface AnswerExpectation {
  /** The run it is for: its workflow id, or a part of its task. */
  run?: string;
  task?: string;
  answer: string[];
}

/** One decision: the tool calls of a turn, or an answer. */
export type Turn =
  { kind: 'calls'; calls: { name: string; arguments: unknown }[] } | { kind: 'answer'; text: string };

/** How one step compares. */
export interface StepVerdict {
  step: number;
  recorded: Turn;
  candidate?: Turn;
  /** Why the candidate gave no decision (its provider failed). */
  error?: string;
  /** The same tools, in any order; or both answered. */
  sameTool: boolean;
  /** The same calls with the same arguments; null where the recording answered. */
  sameArgs: boolean | null;
  /** The candidate's answer holds what the expectations ask; null where nothing is expected of it. */
  answerOk: boolean | null;
  ms: number;
}

/** How one recorded run compares. */
export interface RunVerdict {
  source: string;
  workflowId: string;
  runId: string;
  task: string;
  recordedModel: string;
  candidateModel: string;
  steps: StepVerdict[];
}

/** One recorded model call: what the workflow asked and what the model decided. */
export interface RecordedStep {
  step: number;
  input: CallModelInput;
  output: CallModelOutput;
}

/** Thresholds, in percent, below which an eval fails. */
export interface EvalThresholds {
  sameTool?: number;
  sameArgs?: number;
  answers?: number;
}

/** The totals over every run. */
export interface EvalSummary {
  runs: number;
  steps: number;
  sameTool: number;
  argsCompared: number;
  sameArgs: number;
  answersChecked: number;
  answersOk: number;
  failed: number;
}

/** The agent run's model calls that completed, in order, with their inputs and results. */
export function recordedModelSteps(history: History): RecordedStep[] {
  const events = history.events ?? [];
  const scheduled = new Map<string, CallModelInput>();
  const steps: RecordedStep[] = [];
  for (const e of events) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s?.activityType?.name === 'callModel') {
      scheduled.set(String(e.eventId), decodePayloads(s.input)[0] as CallModelInput);
    }
    const done = e.activityTaskCompletedEventAttributes;
    if (done) {
      const input = scheduled.get(String(done.scheduledEventId));
      if (!input) continue;
      const output = decodePayloads(done.result)[0] as CallModelOutput;
      steps.push({ step: input.step ?? steps.length + 1, input, output });
    }
  }
  return steps;
}

/** The run's task and ids, from its start event. */
function runFacts(history: History): { workflowId: string; runId: string; task: string } {
  const first = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  if (!first || first.workflowType?.name !== 'agentWorkflow') {
    throw new Error('This history is not an agent run (its first event does not start agentWorkflow)');
  }
  const [input] = decodePayloads(first.input) as [{ task?: unknown } | undefined];
  return {
    workflowId: first.workflowId ?? '',
    runId: first.originalExecutionRunId ?? '',
    task: typeof input?.task === 'string' ? input.task : '',
  };
}

/** A model choice as people write it: `provider:name`. */
export function modelLabel(model: ModelChoice): string {
  const m = model as { provider: string; model?: string; script?: string };
  const name = m.model ?? m.script;
  return name ? `${m.provider}:${name}` : m.provider;
}

/**
 * A store that reads the run's store and keeps what a step would write in memory: the candidate's
 * request is built exactly as the activity builds it, with nothing written to the store (which may be
 * a read-only bundle next to an exported history).
 */
export class OverlayContentStore implements ContentStore {
  private readonly written = new Map<ContentRef, unknown>();

  constructor(private readonly base: ContentStore) {}

  get where(): string {
    return this.base.where;
  }

  put(value: unknown): Promise<ContentRef> {
    const { ref } = encodeContent(value);
    this.written.set(ref, value);
    return Promise.resolve(ref);
  }

  get(ref: ContentRef): Promise<unknown> {
    return this.written.has(ref) ? Promise.resolve(this.written.get(ref)) : this.base.get(ref);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

function turnOf(out: { content: string | null; toolCalls: ToolCall[] }): Turn {
  return out.toolCalls.length
    ? { kind: 'calls', calls: out.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })) }
    : { kind: 'answer', text: out.content ?? '' };
}

/** JSON with keys sorted, so arguments compare by value. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function sortedNames(turn: Extract<Turn, { kind: 'calls' }>): string {
  return turn.calls
    .map((c) => c.name)
    .sort()
    .join(',');
}

function sortedCalls(turn: Extract<Turn, { kind: 'calls' }>): string {
  return turn.calls
    .map((c) => `${c.name}${canonical(c.arguments)}`)
    .sort()
    .join('\n');
}

/**
 * Compares two decisions: the same tools (any order), the same calls with the same arguments.
 * Arguments are compared wherever the recording made calls (an answer instead counts as different).
 */
export function compareTurns(
  recorded: Turn,
  candidate: Turn,
): { sameTool: boolean; sameArgs: boolean | null } {
  if (recorded.kind === 'answer') return { sameTool: candidate.kind === 'answer', sameArgs: null };
  if (candidate.kind === 'answer') return { sameTool: false, sameArgs: false };
  const sameTool = sortedNames(recorded) === sortedNames(candidate);
  return { sameTool, sameArgs: sameTool && sortedCalls(recorded) === sortedCalls(candidate) };
}

/** The expectation for a run: by workflow id, else by a part of its task. */
export function expectationFor(
  expectations: readonly AnswerExpectation[],
  run: { workflowId: string; task: string },
): AnswerExpectation | undefined {
  return (
    expectations.find((e) => e.run !== undefined && e.run === run.workflowId) ??
    expectations.find((e) => e.task !== undefined && run.task.toLowerCase().includes(e.task.toLowerCase()))
  );
}

/** Checks an expectations file's content, naming what to fix. */
export function parseExpectations(text: string, file: string): AnswerExpectation[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file} is not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(value)) {
    throw new Error(`${file} must hold a list: [{ "task": "part of the task", "answer": ["regex", …] }, …]`);
  }
  return value.map((e: unknown, i) => {
    const x = e as Partial<AnswerExpectation> | null;
    const where = `${file}, item ${i + 1}`;
    if (!x || typeof x !== 'object') throw new Error(`${where} is not an object`);
    if (typeof x.run !== 'string' && typeof x.task !== 'string') {
      throw new Error(`${where} needs "run" (a workflow id) or "task" (a part of the task)`);
    }
    if (!Array.isArray(x.answer) || x.answer.length === 0 || !x.answer.every((a) => typeof a === 'string')) {
      throw new Error(`${where} needs "answer": a non-empty list of regular expressions`);
    }
    for (const pattern of x.answer) {
      try {
        new RegExp(pattern, 'i');
      } catch (err) {
        throw new Error(`${where}: ${(err as Error).message}`);
      }
    }
    return x as AnswerExpectation;
  });
}

/** What evaluating a run needs. */
export interface EvalRunDeps {
  /** The store the run was written to, or the bundle exported with it. */
  store: ContentStore;
  /** The provider of a model choice (the worker's, from its configuration). */
  provider: (name: ModelChoice['provider']) => ModelProvider;
  candidate: EvalCandidate;
  expectations?: readonly AnswerExpectation[];
  /** Called after each step, for progress. */
  onStep?: (verdict: StepVerdict) => void;
}

function withSystem(messages: ChatMessage[], system: string | undefined): ChatMessage[] {
  if (system === undefined) return messages;
  const rest = messages.filter((m) => m.role !== 'system');
  return [{ role: 'system', content: system }, ...rest];
}

/** Evaluates every recorded model call of one run. */
export async function evalRun(history: History, source: string, deps: EvalRunDeps): Promise<RunVerdict> {
  const facts = runFacts(history);
  const recorded = recordedModelSteps(history);
  const store = new OverlayContentStore(deps.store);
  const expectation = expectationFor(deps.expectations ?? [], facts);
  const patterns = (expectation?.answer ?? []).map((p) => new RegExp(p, 'i'));
  const steps: StepVerdict[] = [];
  const recordedModel = recorded[0] ? modelLabel(recorded[0].input.model) : '';
  let candidateModel = '';
  for (const { step, input, output } of recorded) {
    const model = deps.candidate.model ?? input.model;
    candidateModel ||= modelLabel(model);
    const recordedTurn = turnOf(output);
    const started = performance.now();
    let verdict: StepVerdict;
    try {
      const request = await prepareModelRequest(store, input);
      const out = await deps.provider(model.provider)({
        model,
        messages: withSystem(request.messages, deps.candidate.system),
        tools: request.tools,
        step: input.step,
      });
      const candidate = turnOf(out);
      const answerOk =
        candidate.kind === 'answer' && patterns.length
          ? patterns.some((re) => re.test(candidate.text))
          : null;
      verdict = {
        step,
        recorded: recordedTurn,
        candidate,
        ...compareTurns(recordedTurn, candidate),
        answerOk,
        ms: performance.now() - started,
      };
    } catch (err) {
      verdict = {
        step,
        recorded: recordedTurn,
        error: err instanceof Error ? err.message : String(err),
        sameTool: false,
        sameArgs: recordedTurn.kind === 'calls' ? false : null,
        answerOk: recordedTurn.kind === 'answer' && patterns.length ? false : null,
        ms: performance.now() - started,
      };
    }
    steps.push(verdict);
    deps.onStep?.(verdict);
  }
  return { source, ...facts, recordedModel, candidateModel, steps };
}

/** The totals over runs. */
export function summarize(runs: readonly RunVerdict[]): EvalSummary {
  const steps = runs.flatMap((r) => r.steps);
  return {
    runs: runs.length,
    steps: steps.length,
    sameTool: steps.filter((s) => s.sameTool).length,
    argsCompared: steps.filter((s) => s.sameArgs !== null).length,
    sameArgs: steps.filter((s) => s.sameArgs === true).length,
    answersChecked: steps.filter((s) => s.answerOk !== null).length,
    answersOk: steps.filter((s) => s.answerOk === true).length,
    failed: steps.filter((s) => s.error !== undefined).length,
  };
}

const percent = (n: number, of: number): number => (of ? (100 * n) / of : 100);

/** The thresholds a summary misses, each said in a sentence. */
export function thresholdMisses(summary: EvalSummary, thresholds: EvalThresholds): string[] {
  const misses: string[] = [];
  const check = (name: string, n: number, of: number, min: number | undefined) => {
    if (min !== undefined && percent(n, of) < min) {
      misses.push(`${name} ${percent(n, of).toFixed(0)} % is under the threshold of ${min} %`);
    }
  };
  check('same tool', summary.sameTool, summary.steps, thresholds.sameTool);
  check('same arguments', summary.sameArgs, summary.argsCompared, thresholds.sameArgs);
  if (thresholds.answers !== undefined && summary.answersChecked === 0) {
    misses.push('--min-answers was given but no step was checked against an expected answer (see --expect)');
  } else {
    check('answers', summary.answersOk, summary.answersChecked, thresholds.answers);
  }
  return misses;
}

function clip(text: string, width: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat;
}

/** A decision in one line: `calculator {"expression":"23*19"}` or `answer "437"`. */
export function turnText(turn: Turn | undefined, width: number): string {
  if (!turn) return '(none)';
  if (turn.kind === 'answer') return clip(`answer ${JSON.stringify(turn.text)}`, width);
  return clip(turn.calls.map((c) => `${c.name} ${canonical(c.arguments)}`).join(' + '), width);
}

const mark = (value: boolean | null): string => (value === null ? '–' : value ? '✓' : '✗');

/** The table of one run and the summary, as text. */
export function renderEval(runs: readonly RunVerdict[], width = 40): string {
  const lines: string[] = [];
  for (const run of runs) {
    lines.push(
      `${run.workflowId} (${run.source}): ${run.steps.length} model calls, recorded ${run.recordedModel || '?'}, ` +
        `candidate ${run.candidateModel || '?'}`,
      `  task: ${clip(run.task, 100)}`,
      `  ${'step'.padEnd(5)}${'recorded'.padEnd(width + 2)}${'candidate'.padEnd(width + 2)}tool args answer`,
    );
    for (const s of run.steps) {
      const candidate = s.error ? `error: ${clip(s.error, width - 7)}` : turnText(s.candidate, width);
      lines.push(
        `  ${String(s.step).padEnd(5)}${turnText(s.recorded, width).padEnd(width + 2)}${candidate.padEnd(width + 2)}` +
          `${mark(s.sameTool).padEnd(5)}${mark(s.sameArgs).padEnd(5)}${mark(s.answerOk)}`,
      );
    }
    lines.push('');
  }
  const t = summarize(runs);
  const share = (n: number, of: number) => `${n}/${of} (${percent(n, of).toFixed(0)} %)`;
  lines.push(
    `${t.runs} run${t.runs === 1 ? '' : 's'}, ${t.steps} model call${t.steps === 1 ? '' : 's'}: same tool ${share(t.sameTool, t.steps)}, ` +
      `same arguments ${share(t.sameArgs, t.argsCompared)}, ` +
      `answers as expected ${t.answersChecked ? share(t.answersOk, t.answersChecked) : '(none expected)'}` +
      (t.failed ? `, ${t.failed} calls failed` : ''),
  );
  return lines.join('\n');
}
