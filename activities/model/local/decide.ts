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
import { BEST_MATCH_LABEL, buildChat, resultText } from './prompt';
import { schemaTables, withSchemaNames } from './sql-names';
import { mendedTimeZone } from './time-zones';
import { searchQueryWithTask } from './task-words';
import { ANSWER_TOOL, CHAIN_EXAMPLE, FEW_SHOT_EXAMPLE } from '../../../prompts/local-model';
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

/** A task about the database's structure rather than its data: which tables, what columns. */
const ASKS_STRUCTURE = /\b(?:tables|columns|schema)\b/i;

/**
 * Whether the schema just read answers the task (it asks which tables or columns there are): the
 * next decision is then the answer. Told after the schema to query for the task, a small model
 * queried even "List the tables of the database." (measured on Qwen2.5-Coder-0.5B: `SELECT * FROM
 * customers`, answered "The database contains 100 rows").
 */
export function answeredBySchema(messages: ChatMessage[]): boolean {
  const last = messages.at(-1);
  return (
    last?.role === 'tool' &&
    last.name === 'sql_schema' &&
    !last.isError &&
    ASKS_STRUCTURE.test(taskOf(messages))
  );
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

/** The tool whose message a grounding check reads. */
const NOTIFY_TOOL = 'notify_user';
/** The tool that needs a number to work on. */
const CALCULATOR_TOOL = 'calculator';
/** A number in a task: digits, or a number word a calculation could start from. */
const HAS_NUMBER =
  /\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|million|half|double|twice|triple)\b/i;

/** The run's task: its first user message. */
function taskOf(messages: ChatMessage[]): string {
  return messages.find((m) => m.role === 'user')?.content ?? '';
}

/**
 * The tools a first decision chooses among: the knowledge base alone when the task names the user's
 * own documents as the source; otherwise all of them, but the calculator only when the task holds
 * a number, as there is nothing to compute otherwise (measured on Qwen2.5-Coder-0.5B: a question
 * about what a checklist in the knowledge base says went to the calculator, its arguments made up).
 */
export function firstChoices(messages: ChatMessage[], tools: ModelToolSpec[]): ModelToolSpec[] {
  const task = taskOf(messages);
  if (NAMES_OWN_DOCUMENTS.test(task) && !NAMES_DATABASE.test(task)) {
    const kb = tools.filter((t) => t.name === KNOWLEDGE_BASE_TOOL);
    if (kb.length) return kb;
  }
  if (HAS_NUMBER.test(task)) return tools;
  const rest = tools.filter((t) => t.name !== CALCULATOR_TOOL);
  return rest.length ? rest : tools;
}

const KNOWLEDGE_BASE_TOOL = 'knowledge_base_search';
/**
 * A task that names the user's own documents as where the answer is ("according to my notes", "per
 * our travel policy", "in my documents"): the knowledge base's card says it searches exactly those,
 * but a small model follows the task's other words instead (measured on Qwen2.5-Coder-0.5B: "Which
 * git command … according to my notes?" went to sql_query, "Which PostgreSQL index type …, according
 * to my documents?" to sql_schema).
 */
const NAMES_OWN_DOCUMENTS =
  /\b(?:my|our)\s+(?:[\w-]+\s+){0,2}(?:notes?|documents?|docs|files|guides?|polic(?:y|ies)|handbook|wiki|manuals?)\b|\baccording to the\s+(?:[\w-]+\s+){0,3}(?:notes?|documents?|guides?|polic(?:y|ies)|handbook|manual)\b/i;
/** A task that names the database: its answer is there, whatever else it says. */
const NAMES_DATABASE = /\bdatabase\b/i;

/**
 * Whether a decision notifies the user of a number that neither the task nor any tool result holds:
 * a small model asked to "find X and notify me" sends the notification first, with a made-up X
 * (measured on Qwen2.5-Coder-0.5B: a time, a count). Numbers are compared as digit runs, so
 * "10:05" needs a "10" and a "05" somewhere in what the run has read.
 */
export function ungroundedNotification(decision: Decision, messages: ChatMessage[]): boolean {
  if (decision.kind !== 'call' || decision.tool !== NOTIFY_TOOL || typeof decision.arguments !== 'object')
    return false;
  const message = decision.arguments.message;
  if (typeof message !== 'string') return false;
  const read = messages
    .filter((m) => m.role === 'user' || m.role === 'tool')
    .map((m) => m.content ?? '')
    .join('\n');
  return (message.match(/\d+/g) ?? []).some((n) => !read.includes(n));
}

/** A task that asks to be told something by notification. */
const ASKS_NOTIFICATION = /\bnotif(?:y|ication)|\balert\b|\bremind/i;

/**
 * Whether the run still owes the user a notification it asked for: the task asks for one, and
 * notify_user, offered, has not answered yet. The model may not answer until then (measured on
 * Qwen2.5-Coder-0.5B: "What time is it in Berlin? Send me the time as a notification." looked the
 * time up and answered with it, never notifying).
 */
export function owesNotification(messages: ChatMessage[], offered: ModelToolSpec[]): boolean {
  return (
    ASKS_NOTIFICATION.test(taskOf(messages)) &&
    offered.some((t) => t.name === NOTIFY_TOOL) &&
    !messages.some((m) => m.role === 'tool' && m.name === NOTIFY_TOOL && !m.isError)
  );
}

/** Lower-case words of a text. */
const wordsOf = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/**
 * Whether an answer only says the task again: every word of it is the task's, and it holds most of
 * the task's words (measured on Qwen2.5-Coder-0.5B: after a search, "What does my knowledge base say
 * about the rule of 72?" answered with that very question).
 */
export function restatesTask(answer: string, task: string): boolean {
  const taskWords = new Set(wordsOf(task));
  const said = new Set(wordsOf(answer));
  if (said.size === 0 || taskWords.size === 0) return false;
  if ([...said].some((w) => !taskWords.has(w))) return false;
  return said.size >= 0.75 * taskWords.size;
}

/**
 * Whether an answer is a worked example's answer of the scaffold (prompts/local-model.ts), word for
 * word: never the answer to another task (measured on Qwen2.5-Coder-0.5B: after a search about
 * compost, "4 nights at 95 EUR cost 380 EUR.").
 */
export function copiesExample(answer: string, task: string): boolean {
  const said = wordsOf(answer).join(' ');
  return [FEW_SHOT_EXAMPLE, CHAIN_EXAMPLE].some(
    (e) => said === wordsOf(e.answer).join(' ') && wordsOf(task).join(' ') !== wordsOf(e.task).join(' '),
  );
}

/** Characters of a tool result given as the answer in place of one that restates the task. */
const RESULT_ANSWER_CHARS = 600;

/**
 * The decision as the run takes it: an answer that restates the task, or copies a worked example's
 * answer, becomes what the last tool result said (as the model read it: a search's best passages, a
 * query's values; of a search, the sentence that matches the task), which is what the user asked
 * for; a query's names that the schema read shows wrong are mended (sql-names.ts); a knowledge base
 * query gets the task's words it left out (task-words.ts); a time zone near the one the task names
 * is replaced by it (time-zones.ts).
 */
export function mended(decision: Decision, messages: ChatMessage[]): Decision {
  const task = taskOf(messages);
  // The label the model read before a search's best sentence is not part of an answer.
  if (decision.kind === 'answer' && decision.text.startsWith(BEST_MATCH_LABEL)) {
    const text = decision.text.slice(BEST_MATCH_LABEL.length).trim();
    if (text) return mended({ ...decision, text }, messages);
  }
  if (
    decision.kind === 'answer' &&
    (restatesTask(decision.text, task) || copiesExample(decision.text, task))
  ) {
    const last = [...messages]
      .reverse()
      .find((m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool' && !m.isError);
    if (last) {
      const read = resultText(last, task);
      // A search's sentence that matches the task is the answer; the passages around it are not.
      const best = read.split('\n').find((line) => line.startsWith(BEST_MATCH_LABEL));
      const text = best ? best.slice(BEST_MATCH_LABEL.length).trim() : read;
      return {
        kind: 'answer',
        text: text.length > RESULT_ANSWER_CHARS ? `${text.slice(0, RESULT_ANSWER_CHARS)}…` : text,
      };
    }
  }
  if (decision.kind === 'call' && typeof decision.arguments === 'object') {
    const mend = ARGUMENT_MENDS[decision.tool];
    const value = mend ? decision.arguments[mend.field] : undefined;
    if (mend && typeof value === 'string') {
      const fixed = mend.fix(value, task, messages);
      if (fixed !== value) return { ...decision, arguments: { ...decision.arguments, [mend.field]: fixed } };
    }
  }
  return decision;
}

/** The string argument of a tool that is mended, and how, given the task and the run so far. */
const ARGUMENT_MENDS: Readonly<
  Record<string, { field: string; fix: (value: string, task: string, messages: ChatMessage[]) => string }>
> = {
  sql_query: {
    field: 'sql',
    fix: (sql, _task, messages) => {
      const schema = [...messages]
        .reverse()
        .find((m) => m.role === 'tool' && m.name === 'sql_schema' && !m.isError);
      return schema ? withSchemaNames(sql, schemaTables(schema.content ?? '')).sql : sql;
    },
  },
  knowledge_base_search: { field: 'query', fix: (query, task) => searchQueryWithTask(query, task) },
  get_time: { field: 'timezone', fix: (timezone, task) => mendedTimeZone(timezone, task) },
};

/** Runs one decision on `chat`'s sequence. Throws the signal's reason when cancelled. */
export async function decide(
  loaded: LoadedLocalModel,
  chat: LlamaCpp.LlamaChat,
  input: DecideInput,
): Promise<DecideOutput> {
  const history = buildChat(input.messages, input.tools, input.cards);
  const firstDecision = !input.messages.some((m) => m.role === 'tool') && input.tools.length > 0;
  const candidates = firstDecision ? firstChoices(input.messages, input.tools) : input.tools;
  const pick = async (tools: ModelToolSpec[]) =>
    firstDecision
      ? tools.length > 1
        ? [await chooseTool(loaded, chat, { ...input, tools }, history)]
        : tools
      : notYetAnswered(input.messages, tools);
  const owed = owesNotification(input.messages, notYetAnswered(input.messages, input.tools));
  const first = answeredBySchema(input.messages) && !owed ? [] : await pick(candidates);
  const canAnswer = !firstDecision && !mendsRefusal(input.messages) && !owed;
  let out = await generate(loaded, chat, input, history, first, canAnswer);
  // A notification of a number nothing has told the model yet: decided again without notify_user,
  // so the model looks the number up first (the notification can follow once it has).
  if (ungroundedNotification(out.decision, input.messages)) {
    const others = candidates.filter((t) => t.name !== NOTIFY_TOOL);
    const offered = await pick(others);
    if (offered.length || canAnswer) {
      const again = await generate(loaded, chat, input, history, offered, canAnswer);
      out = {
        decision: again.decision,
        usage: {
          inputTokens: out.usage.inputTokens + again.usage.inputTokens,
          outputTokens: out.usage.outputTokens + again.usage.outputTokens,
        },
      };
    }
  }
  return input.output ? out : { ...out, decision: mended(out.decision, input.messages) };
}

/** Generates one decision among `offered` (and the answer when `canAnswer`). */
async function generate(
  loaded: LoadedLocalModel,
  chat: LlamaCpp.LlamaChat,
  input: DecideInput,
  history: LlamaCpp.ChatHistoryItem[],
  offered: ModelToolSpec[],
  canAnswer: boolean,
): Promise<DecideOutput> {
  const grammar = await loaded.grammar(
    decisionSchema(offered, input.cards, canAnswer, input.output ? toGrammarSchema(input.output) : undefined),
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
