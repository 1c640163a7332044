/**
 * The prompt scaffold of the `local` model provider: text a small model (about 0.1–0.5 B
 * parameters) reads. Such a model follows a short, regular prompt far better than the tool
 * instructions written for large models, so every tool gets a one-line card here: what it is for,
 * the few arguments offered (the grammar makes them required), and one example. The model takes one
 * decision per step, written as one JSON object that a grammar built from the tools' schemas
 * constrains.
 */

/** Name of the pseudo-tool the model uses to give its final answer. */
export const ANSWER_TOOL = 'answer';

/** One tool as a small model sees it. */
export interface LocalToolCard {
  /** What the tool is for, in a few words. */
  summary: string;
  /** The arguments offered, each with a short hint; the others keep their defaults. */
  args: Record<string, string>;
  /** A task this tool answers and the call for it (kept away from the quality bench's tasks). */
  example: { task: string; arguments: Record<string, unknown> };
  /**
   * What to do with the tool's result, when it is a step towards the answer rather than the answer;
   * `{task}` stands for the run's task.
   */
  after?: string;
  /** What to do when the tool refused the call, instead of the general advice. */
  refused?: string;
}

/** Cards of the tools the project ships. Tools without a card get their schema's required fields. */
export const LOCAL_TOOL_CARDS: Readonly<Record<string, LocalToolCard>> = Object.freeze({
  get_time: {
    summary: 'the current date and time in a place',
    args: { timezone: 'IANA time zone, e.g. "Europe/Paris"' },
    example: { task: 'What time is it in Paris right now?', arguments: { timezone: 'Europe/Paris' } },
  },
  calculator: {
    summary: 'arithmetic: sums, percentages, prices',
    // Measured on Qwen2.5-Coder-0.5B: with an example without brackets it dropped the task's own
    // ("(45 + 55) * 12" → "45+55*12"), without a discount it computed the discount, not the price, and
    // with a one-item discount ("(100-15)*60/100") it subtracted in "the refund for 3 items at 49.90".
    args: { expression: 'arithmetic expression; copy any brackets from the task' },
    example: {
      task: 'What do 2 shirts at 30 EUR cost with 15% off?',
      arguments: { expression: '(2*30)*(100-15)/100' },
    },
  },
  knowledge_base_search: {
    summary: "search the user's own documents and notes (guides, policies, how-tos)",
    args: { query: 'a few key words' },
    example: {
      task: 'What do my notes say about watering tomatoes?',
      arguments: { query: 'watering tomatoes' },
    },
  },
  web_search: {
    summary: 'search the public web for news and current facts',
    args: { query: 'a few key words' },
    example: { task: 'Find recent news about electric cars', arguments: { query: 'electric cars news' } },
  },
  sql_schema: {
    summary: 'list the tables and columns of the database',
    args: {},
    example: { task: 'Which tables are in the database?', arguments: {} },
    // "{task}" is the run's task: after the schema, the query otherwise lost what it was for
    // ("SELECT * FROM customers … LIMIT 10" for "How many customers … are from Germany?").
    after:
      'If the task asks about the data, call sql_query now with a SELECT over these tables and columns that answers: {task}',
  },
  sql_query: {
    summary: 'run one SQL SELECT on the shop database (customers, products, orders, order_items)',
    args: { sql: 'one SQL statement' },
    example: {
      task: 'How many products do we sell?',
      arguments: { sql: 'SELECT count(*) FROM products' },
    },
    refused:
      'The query is wrong. Call sql_schema to see the real tables and columns, then call sql_query again.',
  },
  notify_user: {
    summary: 'send the user a notification now (an alert, a reminder, progress)',
    args: { message: 'the text to show' },
    example: {
      task: 'Send me a notification saying the backup started',
      arguments: { message: 'The backup started' },
    },
  },
  wait: {
    summary: 'pause for some seconds',
    args: { seconds: 'number of seconds' },
    example: { task: 'Wait 10 seconds', arguments: { seconds: 10 } },
  },
  send_email: {
    summary: 'send an email',
    args: { to: 'recipient address', subject: 'subject line', text: 'the message' },
    example: {
      task: 'Email bob@example.com that the report is ready',
      arguments: { to: 'bob@example.com', subject: 'Report', text: 'The report is ready.' },
    },
  },
  fetch_email: {
    summary: "read the user's latest emails",
    args: {},
    example: { task: 'Do I have new mail?', arguments: {} },
  },
});

/** The opening of the system prompt; the tool list and examples follow it. */
export const LOCAL_SYSTEM_PROMPT = [
  'You are an assistant that completes the user’s task with tools.',
  'Each turn, reply with one JSON object: {"tool": name, "arguments": {...}}.',
  'Pick the tool that fits the task. After a tool result, use "answer" to reply to the user.',
].join('\n');

/** The final-answer pseudo-tool's card. */
export const ANSWER_CARD: LocalToolCard = {
  summary: 'reply to the user when you have what you need',
  args: { text: 'your reply' },
  example: { task: '', arguments: {} },
};

/**
 * The worked example that opens every chat where its tool is offered: a task, the call, its result
 * and the answer quoting it. It shows the model the whole shape of a run, including the step small
 * models miss: answering from the result instead of calling the tool again. (A made-up tool that is
 * never offered favours no real tool, but measured worse: SmolLM2-135M then copied its answer.)
 */
export const FEW_SHOT_EXAMPLE = {
  task: 'How much is 3 tickets at 18.50 EUR each?',
  tool: 'calculator',
  arguments: { expression: '3*18.50' },
  result: '55.5',
  answer: '3 tickets at 18.50 EUR cost 55.50 EUR.',
} as const;

/**
 * The second worked example, where notify_user is offered beside the first example's tool: a task
 * that asks to be told a fact it must first find. Small models otherwise notify at once, with a
 * made-up value.
 */
export const CHAIN_EXAMPLE = {
  task: 'Work out 4 nights at 95 EUR each and send me the total as a notification.',
  first: { tool: 'calculator', arguments: { expression: '4*95' }, result: '380' },
  then: {
    tool: 'notify_user',
    arguments: { message: '4 nights at 95 EUR cost 380 EUR.' },
    result: 'Notification sent.',
  },
  answer: '4 nights at 95 EUR cost 380 EUR.',
} as const;

/** How a tool result is shown to the model. */
export function toolResultText(tool: string, content: string): string {
  return `Result of ${tool}: ${content}`;
}

/** Follows the tool results of a turn: small models otherwise call the same tool again and again. */
export const AFTER_RESULTS_TEXT = 'If this answers the task, reply with "answer".';

/** Follows a turn where a tool refused its call: small models otherwise pass the error on as the answer. */
export const AFTER_ERROR_TEXT =
  'The tool refused the call. Call it again with arguments that fix what the error says.';

/** Instructions of the run that differ from the project's default system prompt. */
export function extraInstructionsText(instructions: string): string {
  return `Also follow these instructions:\n${instructions}`;
}
