/**
 * Turns the run's conversation into the chat a small model reads: a short system prompt with one
 * card per offered tool (what it is for, its arguments, an example call), the run's own instructions
 * when they differ from the project default, then the task and the earlier turns, with tool results
 * shown as user turns (small models' chat formats have no tool role) and clipped to a budget.
 */
import type { ChatHistoryItem } from 'node-llama-cpp';
import type { ChatMessage } from '../../../shared/conversation';
import type { ModelToolSpec } from '../../../shared/model';
import type { LocalToolCard } from '../../../prompts/local-model';
import {
  AFTER_ERROR_TEXT,
  AFTER_RESULTS_TEXT,
  ANSWER_CARD,
  ANSWER_TOOL,
  CHAIN_EXAMPLE,
  FEW_SHOT_EXAMPLE,
  LOCAL_SYSTEM_PROMPT,
  extraInstructionsText,
  toolResultText,
} from '../../../prompts/local-model';
import { DEFAULT_SYSTEM_PROMPT } from '../../../prompts/system';
import { decisionText } from './decision';
import { bestSentence, contentTerms } from './task-words';

/** Characters of one tool result the model reads; the rest is cut with a note. */
export const TOOL_RESULT_CHARS = 1500;
/** Characters of a tool description used for a tool without a card: its first sentence, at most this. */
const UNCARDED_SUMMARY_CHARS = 160;

function clip(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}… (cut)` : text;
}

/** The card of a tool, or one made from its spec: the first sentence of the description, the required fields. */
export function cardFor(tool: ModelToolSpec, cards: Readonly<Record<string, LocalToolCard>>): LocalToolCard {
  const card = cards[tool.name];
  if (card) return card;
  const sentence = /^[^.!?\n]*[.!?]?/.exec(tool.description.trim())?.[0] ?? tool.name;
  const required = Array.isArray(tool.parameters.required) ? (tool.parameters.required as string[]) : [];
  return {
    summary: clip(sentence, UNCARDED_SUMMARY_CHARS),
    args: Object.fromEntries(required.map((k) => [k, k])),
    example: { task: '', arguments: {} },
  };
}

function cardLines(name: string, card: LocalToolCard): string[] {
  const args = Object.entries(card.args)
    .map(([k, hint]) => `${k} (${hint})`)
    .join(', ');
  const lines = [`- ${name}: ${card.summary}. Arguments: ${args || 'none'}.`];
  if (card.example.task) {
    lines.push(`  Example: "${card.example.task}" -> ${decisionText(name, card.example.arguments)}`);
  }
  return lines;
}

/** The system prompt: rules, one card per offered tool and the answer card. */
export function systemText(tools: ModelToolSpec[], cards: Readonly<Record<string, LocalToolCard>>): string {
  return [
    LOCAL_SYSTEM_PROMPT,
    '',
    'Tools:',
    ...tools.flatMap((t) => cardLines(t.name, cardFor(t, cards))),
    ...cardLines(ANSWER_TOOL, ANSWER_CARD),
  ].join('\n');
}

const SQL_SUMMARY = /^[A-Z]+: (?:no rows|\d+ rows?)\.$/;

/**
 * A SQL result as values: `count = 400` rather than the summary line, the columns and one JSON array
 * per row, which a small model reads as "1 row" and answers "1". Any other text is left as it is.
 */
export function resultValuesText(content: string): string {
  const lines = content.split('\n');
  const summary = SQL_SUMMARY.exec(lines[0] ?? '');
  const columnsLine = /^columns: (\[.*\])$/.exec(lines[1] ?? '');
  if (!summary || !columnsLine) return content;
  let columns: string[];
  const rows: unknown[][] = [];
  let rest: string[] = [];
  try {
    columns = JSON.parse(columnsLine[1] as string) as string[];
    for (const [i, line] of lines.slice(2).entries()) {
      if (!line.startsWith('[')) {
        rest = lines.slice(2 + i);
        break;
      }
      rows.push(JSON.parse(line) as unknown[]);
    }
  } catch {
    return content;
  }
  const value = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
  const rowText = (row: unknown[]) => columns.map((c, i) => `${c} = ${value(row[i])}`).join(', ');
  const body =
    rows.length === 1
      ? [rowText(rows[0] as unknown[])]
      : [`${rows.length} rows:`, ...rows.map((r) => `- ${rowText(r)}`)];
  return [...(rows.length ? body : ['no rows']), ...rest].join('\n');
}

/** The head of sql_schema's text: the connection, its dialect and the table count. */
export const SCHEMA_HEAD = /^Connection "[^"]*" \(([^)]*)\): \d+ tables?\.$/;
/** A table's line in sql_schema's text: its name, whether a view, then its rows. */
export const SCHEMA_TABLE = /^(\S+)( \(view\))? — .*$/;
/** A column's line: two spaces, the name, its type. */
export const SCHEMA_COLUMN = /^ {2}(\S+) (.+)$/;
/** The end of a column's line that lists its values (a status, a category): `— values: 'paid', 'shipped'`. */
const SCHEMA_VALUES = / — values: (.+)$/;

/**
 * sql_schema's text as one line per table, `customers(id, name, country, …)`: the column names,
 * which a small model must copy into its query, without the types and constraints that bury them
 * (measured on Qwen2.5-Coder-0.5B: it queried `country_code` beside a column `country` in the full
 * text), and without the row counts, which it gave as the answer to a count its query had made.
 * Tables the task names, or names columns of, come first (a small model queries the first table it
 * reads; "How many products…" went to `customers`). A column's values, where sql_schema lists them,
 * follow as `orders.status is one of 'cancelled', 'delivered'` (without them it counted orders by
 * status with no condition). Foreign keys and any other line are kept; other text is left as it is.
 */
export function schemaText(content: string, task = ''): string {
  const lines = content.split('\n');
  const head = SCHEMA_HEAD.exec(lines[0] ?? '');
  if (!head) return content;
  const out: string[] = [`Tables (${head[1] as string}):`];
  const tables: { name: string; columns: string[]; block: string[] }[] = [];
  let table: { name: string; view: boolean; columns: string[]; keys: string[] } | undefined;
  const flush = () => {
    if (table) {
      const line = `${table.name}(${table.columns.join(', ')})${table.view ? ' (a view)' : ''}`;
      tables.push({ name: table.name, columns: table.columns, block: [line, ...table.keys] });
    }
    table = undefined;
  };
  for (const line of lines.slice(1)) {
    const t = SCHEMA_TABLE.exec(line);
    const c = SCHEMA_COLUMN.exec(line);
    if (t) {
      flush();
      table = { name: t[1] as string, view: t[2] !== undefined, columns: [], keys: [] };
    } else if (table && line.startsWith('  FOREIGN KEY ')) {
      table.keys.push(`  ${table.name}.${line.slice('  FOREIGN KEY '.length)}`);
    } else if (table && line.startsWith('  PRIMARY KEY ')) {
      continue;
    } else if (table && c) {
      table.columns.push(c[1] as string);
      const values = SCHEMA_VALUES.exec(c[2] as string)?.[1];
      if (values && namesColumnOrValue(task, c[1] as string, values))
        table.keys.push(`  ${table.name}.${c[1] as string} is one of ${values}`);
    } else if (line.trim()) {
      flush();
      out.push(line);
    }
  }
  flush();
  const words = taskWords(task);
  // Its name counts twice a column's: "orders" names a table, "category" only one of its columns.
  const score = (t: { name: string; columns: string[] }) =>
    (words.has(stem(t.name)) ? 2 : 0) + t.columns.filter((c) => words.has(stem(c))).length;
  const ordered = tables.map((t, i) => ({ block: t.block, i, score: score(t) }));
  ordered.sort((a, b) => b.score - a.score || a.i - b.i);
  return [out[0] as string, ...ordered.flatMap((t) => t.block), ...out.slice(1)].join('\n');
}

/**
 * Whether the task names a column or one of the values listed for it: only then are its values worth
 * the model's attention. Shown every column's values, Qwen2.5-Coder-0.5B wrote them all into one
 * condition (`WHERE country = 'BR' AND city = 'Beijing' AND status = 'delivered'` for "How many
 * products are in the kitchen category?"), and "List the tables" became a query.
 */
function namesColumnOrValue(task: string, column: string, values: string): boolean {
  // Compared without stop words: the country code 'IN' is no "in".
  const words = contentTerms(task);
  const named = (text: string) => [...contentTerms(text)].some((t) => words.has(t));
  if (named(column.replace(/_/g, ' '))) return true;
  for (const m of values.matchAll(/'((?:[^']|'')*)'/g)) {
    if (named((m[1] as string).replace(/''/g, "'"))) return true;
  }
  return false;
}

/** A word without a plural's `s`: "orders" and "order" meet. */
function stem(word: string): string {
  const w = word.toLowerCase();
  return w.length > 3 && w.endsWith('s') ? w.slice(0, -1) : w;
}

/** The stems of a task's words. */
function taskWords(task: string): Set<string> {
  return new Set((task.match(/[a-z_]+/gi) ?? []).map(stem));
}

/** Search results a small model reads: the best ones; the others mostly mislead it. */
export const SEARCH_RESULTS_SHOWN = 2;

/** The document a search result's title names: its part before the section (`Growing Tomatoes › Pinching`). */
const documentOf = (title: string) => title.split(' › ')[0]?.trim() ?? title;

/** One search result as the JSON list writes it: its title and text, both complete. */
const SEARCH_RESULT = /\{"title":("(?:[^"\\]|\\.)*"),"text":("(?:[^"\\]|\\.)*")/g;

/**
 * Search results (the JSON list every search tool returns to models) as plain passages, best first:
 * `[1] title: text`. JSON's quoting and reference marks cost a small model tokens and attention; the
 * passages are what it answers from. Only the best result's document is shown: a passage of another
 * document, ranked second, is what a small model answered from even when the first held the fact
 * (measured on Qwen2.5-Coder-0.5B: "What gas do plants release…" answered from a heat pump's "gas
 * boiler" passage beside the photosynthesis one). The list may arrive cut to the context's budget,
 * so results are read one by one and a cut one is left out. Any other text is left as it is.
 */
export function searchResultsText(content: string, task = ''): string {
  if (!content.startsWith('[{"title":')) return content;
  const passages: string[] = [];
  const texts: { title: string; text: string }[] = [];
  let first: string | undefined;
  for (const m of content.matchAll(SEARCH_RESULT)) {
    if (passages.length === SEARCH_RESULTS_SHOWN) break;
    try {
      const title = JSON.parse(m[1] as string) as string;
      const text = JSON.parse(m[2] as string) as string;
      if (first !== undefined && documentOf(title) !== first) continue;
      first ??= documentOf(title);
      const plain = text.replace(/\s+/g, ' ').trim();
      passages.push(`[${passages.length + 1}] ${title}: ${plain}`);
      texts.push({ title, text: plain });
    } catch {
      break;
    }
  }
  if (!passages.length) return content;
  const best = task ? bestSentence(texts, task) : undefined;
  return [...passages, ...(best ? [`${BEST_MATCH_LABEL} ${best}`] : [])].join('\n');
}

/**
 * Introduces the passages' sentence that shares the most words with the task: a small model answers
 * from a passage's first sentence, or the one with a number, rather than the one that says what was
 * asked (measured on Qwen2.5-Coder-0.5B: "20 weeks" for "How many months of service…" beside "at
 * least six months of service").
 */
export const BEST_MATCH_LABEL = 'Most relevant:';

/**
 * What the model reads of a tool result: values for SQL rows, a line per table for a schema,
 * passages for searches, clipped to the budget.
 */
export function resultText(message: Extract<ChatMessage, { role: 'tool' }>, task: string): string {
  const text =
    message.name === 'sql_query'
      ? resultValuesText(message.content)
      : message.name === 'sql_schema'
        ? schemaText(message.content, task)
        : searchResultsText(message.content, task);
  return clip(text, TOOL_RESULT_CHARS);
}

/** The chat the model continues with its next decision. */
export function buildChat(
  messages: ChatMessage[],
  tools: ModelToolSpec[],
  cards: Readonly<Record<string, LocalToolCard>>,
): ChatHistoryItem[] {
  let system = systemText(tools, cards);
  const offered = (name: string) => tools.some((t) => t.name === name);
  const example = FEW_SHOT_EXAMPLE;
  const chain = CHAIN_EXAMPLE;
  const call = (tool: string, args: unknown): ChatHistoryItem => ({
    type: 'model',
    response: [decisionText(tool, args)],
  });
  const result = (tool: string, text: string): ChatHistoryItem => ({
    type: 'user',
    text: [toolResultText(tool, text), AFTER_RESULTS_TEXT].join('\n\n'),
  });
  const chat: ChatHistoryItem[] = offered(example.tool)
    ? [
        { type: 'user', text: example.task },
        call(example.tool, example.arguments),
        result(example.tool, example.result),
        call(ANSWER_TOOL, { text: example.answer }),
      ]
    : [];
  if (offered(chain.first.tool) && offered(chain.then.tool)) {
    chat.push(
      { type: 'user', text: chain.task },
      call(chain.first.tool, chain.first.arguments),
      result(chain.first.tool, chain.first.result),
      call(chain.then.tool, chain.then.arguments),
      result(chain.then.tool, chain.then.result),
      call(ANSWER_TOOL, { text: chain.answer }),
    );
  }
  const task = messages.find((m) => m.role === 'user')?.content ?? '';
  let results: string[] = [];
  let refused: string | undefined;
  let next: string | undefined;
  const flushResults = () => {
    const after = refused ?? next ?? AFTER_RESULTS_TEXT;
    if (results.length) chat.push({ type: 'user', text: [...results, after].join('\n\n') });
    results = [];
    refused = undefined;
    next = undefined;
  };
  for (const message of messages) {
    if (message.role !== 'tool') flushResults();
    switch (message.role) {
      case 'system':
        if (message.content.trim() && message.content.trim() !== DEFAULT_SYSTEM_PROMPT.trim()) {
          system += `\n\n${extraInstructionsText(message.content.trim())}`;
        }
        break;
      case 'user':
        chat.push({ type: 'user', text: message.content });
        break;
      case 'assistant': {
        const calls = message.toolCalls ?? [];
        const text = calls.length
          ? calls.map((c) => decisionText(c.name, c.arguments)).join('\n')
          : decisionText(ANSWER_TOOL, { text: message.content ?? '' });
        chat.push({ type: 'model', response: [text] });
        break;
      }
      case 'tool': {
        results.push(toolResultText(message.name, resultText(message, task)));
        if (message.isError) refused ??= cards[message.name]?.refused ?? AFTER_ERROR_TEXT;
        else next = cards[message.name]?.after?.replaceAll('{task}', task) ?? next;
        break;
      }
    }
  }
  flushResults();
  return [{ type: 'system', text: system }, ...chat];
}
