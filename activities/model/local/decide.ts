/**
 * One decision of the local model, on one borrowed sequence. The first decision of a run is a tool
 * call (as with `tool_choice: "required"`): the tool is chosen by calibrated probabilities (see
 * choose.ts), then its arguments are generated under a grammar that admits only that tool. Later
 * decisions, with tool results in view, are generated greedily under the grammar of every offered
 * tool and the answer.
 */
import type * as LlamaCpp from 'node-llama-cpp';
import type { ChatMessage, Usage } from '../../../shared/conversation';
import type { ModelToolSpec } from '../../../shared/model';
import type { LocalToolCard } from '../../../prompts/local-model';
import { calibratedChoice, nameLogProbs, namePriors } from './choose';
import type { Decision } from './decision';
import { decisionSchema, parseDecision, toGrammarSchema } from './decision';
import { buildChat } from './prompt';
import { ANSWER_TOOL } from '../../../prompts/local-model';
import type { LoadedLocalModel } from './runtime';

/** Seed of the sampler. Greedy decoding ignores it; it is fixed so nothing can vary between runs. */
export const LOCAL_SEED = 42;

/** Priors kept per model, one per tool set and system prompt. */
const PRIOR_CACHE_LIMIT = 32;

/** What one decision needs. */
export interface DecideInput {
  messages: ChatMessage[];
  tools: ModelToolSpec[];
  cards: Readonly<Record<string, LocalToolCard>>;
  maxTokens: number;
  /** The run's output schema: the answer is generated under its grammar. */
  output?: Record<string, unknown>;
  signal?: AbortSignal;
  /**
   * Called with each piece of a plain-text answer as it is generated (live tokens): the answer's text,
   * unescaped, never the decision's JSON. Tool calls and structured answers give none. The returned
   * answer may still differ from the pieces' concatenation where a repeating loop was cut off.
   */
  onAnswerText?: (text: string) => void;
}

/** A decision and what it cost. */
export interface DecideOutput {
  decision: Decision;
  usage: Usage;
}

/**
 * The first choice among the tools, by the model's probabilities of their names: calibrated, with
 * the priors computed once per tool set, for a model without tool training; as they are for a model
 * trained on tool calls, whose preference is already about the task (measured on Qwen2.5-Coder-0.5B:
 * 30/32 right uncalibrated, 27/32 calibrated).
 */
async function chooseTool(
  loaded: LoadedLocalModel,
  chat: LlamaCpp.LlamaChat,
  input: DecideInput,
  history: LlamaCpp.ChatHistoryItem[],
): Promise<ModelToolSpec> {
  const names = input.tools.map((t) => t.name);
  if (loaded.toolTrained) {
    const scores = await nameLogProbs(chat, history, names, { onlyBest: true });
    return input.tools[scores.indexOf(Math.max(...scores))] as ModelToolSpec;
  }
  const system = history[0];
  const key = JSON.stringify([system, names]);
  let priors = loaded.memo.get(key) as number[] | undefined;
  if (!priors) {
    const contentFree = (task: string) =>
      buildChat(
        [...input.messages.filter((m) => m.role === 'system'), { role: 'user', content: task }],
        input.tools,
        input.cards,
      );
    priors = await namePriors(chat, contentFree, names);
    if (loaded.memo.size >= PRIOR_CACHE_LIMIT) loaded.memo.delete(loaded.memo.keys().next().value as string);
    loaded.memo.set(key, priors);
  }
  input.signal?.throwIfAborted();
  const scores = await nameLogProbs(chat, history, names);
  return input.tools[calibratedChoice(scores, priors)] as ModelToolSpec;
}

/** Refusals after which a tool is no longer offered: a small model retries the same call otherwise. */
const MAX_REFUSALS = 2;

/**
 * The tools a later decision may call: those that have neither returned a result nor refused twice.
 * A small model shown a tool's result tends to call the same tool again rather than answer; offering
 * each tool until it has answered turns that loop into an answer, still lets a task use several tools
 * in turn (schema, then query, then notification), and lets the model mend a call the tool refused.
 */
export function notYetAnswered(messages: ChatMessage[], tools: ModelToolSpec[]): ModelToolSpec[] {
  const answered = new Set(messages.flatMap((m) => (m.role === 'tool' && !m.isError ? [m.name] : [])));
  const refusals = new Map<string, number>();
  for (const m of messages) {
    if (m.role === 'tool' && m.isError) refusals.set(m.name, (refusals.get(m.name) ?? 0) + 1);
  }
  return tools.filter((t) => !answered.has(t.name) && (refusals.get(t.name) ?? 0) < MAX_REFUSALS);
}

/**
 * Whether this decision follows a tool's first refusal: it must then be a call, so the model mends
 * its arguments (or takes another tool) instead of passing the error on as its answer. After a second
 * refusal of the same tool the answer is allowed again, so a tool that keeps refusing ends the run.
 */
export function mendsRefusal(messages: ChatMessage[]): boolean {
  const refused: string[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]?.role === 'tool'; i--) {
    const m = messages[i] as Extract<ChatMessage, { role: 'tool' }>;
    if (m.isError) refused.push(m.name);
  }
  if (refused.length === 0) return false;
  const refusals = (name: string) =>
    messages.filter((m) => m.role === 'tool' && m.isError && m.name === name).length;
  return refused.every((name) => refusals(name) === 1);
}

/** Sentences a loop is recognised by: long enough not to be a legitimate repeat like "Yes." */
const SENTENCE = /[^.!?\n]{8,}[.!?\n]/g;

/** Shortest and longest piece a loop without sentence ends is recognised by ("75/100*75=" again and again). */
const LOOP_PIECE = { min: 6, max: 60 };

/**
 * Whether the text ends with one piece written three times in a row. A piece of fewer than three
 * distinct characters is not a loop: "1,000,000,000,000" is a number.
 */
function endsInLoop(text: string): boolean {
  for (let k = LOOP_PIECE.min; k <= LOOP_PIECE.max && 3 * k <= text.length; k++) {
    const piece = text.slice(-k);
    if (new Set(piece.trim()).size < 3) continue;
    if (text.slice(-2 * k, -k) === piece && text.slice(-3 * k, -2 * k) === piece) return true;
  }
  return false;
}

/**
 * Whether some sentence, or the text's end, has been written three times: greedy decoding will not
 * leave that loop.
 */
export function repeatsItself(text: string): boolean {
  if (endsInLoop(text)) return true;
  const seen = new Map<string, number>();
  for (const [sentence] of text.matchAll(SENTENCE)) {
    const key = sentence.trim().toLowerCase();
    const n = (seen.get(key) ?? 0) + 1;
    if (n >= 3) return true;
    seen.set(key, n);
  }
  return false;
}

/** The text with each repeated sentence kept once, and a dangling repeat of one dropped. */
export function withoutRepeats(text: string): string {
  const seen = new Set<string>();
  let out = '';
  let end = 0;
  for (const match of text.matchAll(SENTENCE)) {
    const key = match[0].trim().toLowerCase();
    if (!seen.has(key)) out += text.slice(end, (match.index ?? 0) + match[0].length);
    seen.add(key);
    end = (match.index ?? 0) + match[0].length;
  }
  const tail = text.slice(end);
  const tailKey = tail.replace(/…$/, '').trim().toLowerCase();
  const dangling = tailKey === '' || [...seen].some((k) => k.startsWith(tailKey));
  return (out + (dangling ? '' : tail)).trim();
}

/** Runs one decision on `chat`'s sequence. Throws the signal's reason when cancelled. */
export async function decide(
  loaded: LoadedLocalModel,
  chat: LlamaCpp.LlamaChat,
  input: DecideInput,
): Promise<DecideOutput> {
  const history = buildChat(input.messages, input.tools, input.cards);
  const firstDecision = !input.messages.some((m) => m.role === 'tool') && input.tools.length > 0;
  const offered = firstDecision
    ? input.tools.length > 1
      ? [await chooseTool(loaded, chat, input, history)]
      : input.tools
    : notYetAnswered(input.messages, input.tools);
  const grammar = await loaded.grammar(
    decisionSchema(
      offered,
      input.cards,
      !firstDecision && !mendsRefusal(input.messages),
      input.output ? toGrammarSchema(input.output) : undefined,
    ),
  );
  const { sequence } = chat;
  const meter = sequence.tokenMeter.getState();
  // Greedy decoding can fall into a loop ("The answer is 437. The answer is 437. …"): stop it there.
  const looping = new AbortController();
  let written = '';
  const answerText = input.onAnswerText && !input.output ? answerTextStream() : undefined;
  const result = await chat.generateResponse(history, {
    grammar,
    maxTokens: input.maxTokens,
    temperature: 0,
    seed: LOCAL_SEED,
    signal: input.signal ? AbortSignal.any([input.signal, looping.signal]) : looping.signal,
    stopOnAbortSignal: true,
    onTextChunk: (chunk) => {
      written += chunk;
      const piece = answerText?.push(chunk);
      if (piece) {
        try {
          input.onAnswerText?.(piece);
        } catch {
          // A watcher's failure is its own: it must not fail the decision.
        }
      }
      if (repeatsItself(written)) looping.abort();
    },
  });
  input.signal?.throwIfAborted();
  const outputTokens = sequence.tokenMeter.diff(meter).usedOutputTokens;
  const decision = parseDecision(result.response, input.output !== undefined);
  return {
    // A structured answer is JSON, not sentences: it is kept as written.
    decision:
      decision.kind === 'answer' && !input.output
        ? { ...decision, text: withoutRepeats(decision.text) }
        : decision,
    usage: { inputTokens: Math.max(0, sequence.nextTokenIndex - outputTokens), outputTokens },
  };
}

/** How an answer decision opens, up to the first character of its text (whitespace tolerated). */
const ANSWER_OPENING = new RegExp(
  String.raw`^\s*\{\s*"tool"\s*:\s*"${ANSWER_TOOL}"\s*,\s*"arguments"\s*:\s*\{\s*"text"\s*:\s*"`,
);
/** Longer than any opening: text that has not matched by then is not an answer. */
const OPENING_LIMIT = 256;

/** Reads a decision's JSON piece by piece, for the answer text it holds. */
export interface AnswerTextStream {
  /** Takes the next piece of the decision's JSON and returns the answer text it completes ('' for none). */
  push(chunk: string): string;
}

/**
 * The answer text of a decision (`{"tool":"answer","arguments":{"text":"…"}}`) as it is generated:
 * each piece of JSON in, the text it adds out, with escapes decoded. A piece that ends inside an
 * escape (`\`, `\u00`) or between the two halves of a surrogate pair holds that part back for the
 * next, so every piece is whole text. A decision that is a tool call gives nothing; nor does anything
 * after the text's closing quote.
 */
export function answerTextStream(): AnswerTextStream {
  let state: 'opening' | 'text' | 'done' = 'opening';
  let buffer = '';
  const ESCAPES: Record<string, string> = {
    '"': '"',
    '\\': '\\',
    '/': '/',
    b: '\b',
    f: '\f',
    n: '\n',
    r: '\r',
    t: '\t',
  };
  return {
    push(chunk) {
      if (state === 'done') return '';
      buffer += chunk;
      if (state === 'opening') {
        const match = ANSWER_OPENING.exec(buffer);
        if (!match) {
          const tool = /"tool"\s*:\s*"([^"]*)("?)/.exec(buffer);
          const notAnswer =
            tool !== null &&
            (!ANSWER_TOOL.startsWith(tool[1] ?? '') || (tool[2] === '"' && tool[1] !== ANSWER_TOOL));
          if (buffer.length > OPENING_LIMIT || notAnswer) {
            state = 'done';
            buffer = '';
          }
          return '';
        }
        state = 'text';
        buffer = buffer.slice(match[0].length);
      }
      let out = '';
      let i = 0;
      while (i < buffer.length) {
        const c = buffer[i] as string;
        if (c === '"') {
          state = 'done';
          i = buffer.length;
          break;
        }
        if (c !== '\\') {
          out += c;
          i++;
          continue;
        }
        const next = buffer[i + 1];
        if (next === undefined) break;
        if (next === 'u') {
          const hex = buffer.slice(i + 2, i + 6);
          if (hex.length < 4) break;
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
        } else {
          out += ESCAPES[next] ?? next;
          i += 2;
        }
      }
      buffer = state === 'done' ? '' : buffer.slice(i);
      // A high surrogate waits for its low half.
      const last = out.charCodeAt(out.length - 1);
      if (state !== 'done' && last >= 0xd800 && last <= 0xdbff) {
        buffer = out.slice(-1) + buffer;
        out = out.slice(0, -1);
      }
      return out;
    },
  };
}
