import { modelToolSpecs } from '../../activities/model';
import { calibratedChoice } from '../../activities/model/local/choose';
import {
  firstChoices,
  mendsRefusal,
  notYetAnswered,
  ungroundedNotification,
  repeatsItself,
  withoutRepeats,
} from '../../activities/model/local/decide';
import {
  ANSWER_TEXT_LIMIT,
  ARGUMENT_ARRAY_LIMIT,
  ARGUMENT_STRING_LIMIT,
  argumentsSchema,
  decisionSchema,
  parseDecision,
  toGrammarSchema,
} from '../../activities/model/local/decision';
import { SequencePool } from '../../activities/model/local/pool';
import {
  SEARCH_RESULTS_SHOWN,
  TOOL_RESULT_CHARS,
  buildChat,
  resultValuesText,
  schemaText,
  searchResultsText,
} from '../../activities/model/local/prompt';
import type { SqlSchemaData } from '../../activities/sql/schema';
import { formatSchema } from '../../activities/sql/schema';
import type { SqlQueryData } from '../../activities/sql/results';
import { formatQueryResult } from '../../activities/sql/results';
import { parseModelSpec } from '../../client/model-spec';
import { renderSearchPicks } from '../../shared/citations';
import {
  AFTER_RESULTS_TEXT,
  FEW_SHOT_EXAMPLE,
  LOCAL_SYSTEM_PROMPT,
  LOCAL_TOOL_CARDS,
} from '../../prompts/local-model';
import { DEFAULT_SYSTEM_PROMPT } from '../../prompts/system';
import type { ChatMessage } from '../../shared/conversation';
import { ModelChoiceSchema } from '../../shared/model';

const tools = modelToolSpecs(['get_time', 'calculator', 'notify_user', 'sql_query']);
const [getTime, calculator, notify, sqlQuery] = tools;

describe('grammar schema from tool schemas', () => {
  test('bounds strings and arrays and drops what the grammar cannot use', () => {
    const g = toGrammarSchema(sqlQuery!.parameters);
    expect(g).toMatchObject({ type: 'object', required: ['sql'], additionalProperties: false });
    const props = (g as { properties: Record<string, unknown> }).properties;
    expect(props.sql).toEqual({ type: 'string', minLength: 1, maxLength: ARGUMENT_STRING_LIMIT });
    expect(props.params).toMatchObject({ type: 'array', maxItems: ARGUMENT_ARRAY_LIMIT });
    expect((props.params as { items: unknown }).items).toHaveProperty('oneOf');
    expect(JSON.stringify(g)).not.toMatch(/description|default|pattern|minimum/);
  });

  test('keeps enums and short limits', () => {
    const g = toGrammarSchema(notify!.parameters) as { properties: Record<string, unknown> };
    expect(g.properties.type).toEqual({ enum: ['info', 'success', 'warning', 'error', 'progress'] });
    expect(g.properties.title).toEqual({ type: 'string', maxLength: 200 });
  });

  test('a card makes its fields the required arguments; other tools keep their required fields', () => {
    // get_time's timezone is optional in its schema (default UTC); the card asks for it every time.
    expect(argumentsSchema(getTime!, LOCAL_TOOL_CARDS.get_time)).toEqual({
      type: 'object',
      properties: { timezone: { type: 'string', minLength: 1, maxLength: ARGUMENT_STRING_LIMIT } },
      required: ['timezone'],
      additionalProperties: false,
    });
    const uncarded = argumentsSchema(notify!, undefined) as { required: string[]; properties: object };
    expect(uncarded.required).toEqual(['message']);
    expect(Object.keys(uncarded.properties)).toEqual(['message']);
  });

  test('a decision is one offered tool with its arguments, or the answer when allowed', () => {
    const withAnswer = decisionSchema([getTime!, calculator!], LOCAL_TOOL_CARDS) as { oneOf: unknown[] };
    const names = withAnswer.oneOf.map(
      (o) => (o as { properties: { tool: { const: string } } }).properties.tool.const,
    );
    expect(names).toEqual(['get_time', 'calculator', 'answer']);
    expect(JSON.stringify(withAnswer)).toContain(`"maxLength":${ANSWER_TEXT_LIMIT}`);
    const toolsOnly = decisionSchema([getTime!], LOCAL_TOOL_CARDS, false) as { oneOf: unknown[] };
    expect(toolsOnly.oneOf).toHaveLength(1);
    // With nothing to call, answering is the only way out.
    expect((decisionSchema([], LOCAL_TOOL_CARDS, false) as { oneOf: unknown[] }).oneOf).toHaveLength(1);
  });

  test('parses calls and answers, and keeps what was written when the token budget cut it', () => {
    expect(parseDecision('{"tool":"calculator","arguments":{"expression":"1+1"}}')).toEqual({
      kind: 'call',
      tool: 'calculator',
      arguments: { expression: '1+1' },
    });
    expect(parseDecision('{"tool":"answer","arguments":{"text":"Two."}}')).toEqual({
      kind: 'answer',
      text: 'Two.',
    });
    expect(parseDecision('{"tool":"answer","arguments":{"text":"It is \\"4\\" and')).toEqual({
      kind: 'answer',
      text: 'It is "4" and…',
      cut: true,
    });
    // Raw text arguments: the workflow refuses them and tells the model, as for any invalid arguments.
    expect(parseDecision('{"tool":"calculator","arguments":{"expression":"1+')).toEqual({
      kind: 'call',
      tool: 'calculator',
      arguments: '{"expression":"1+',
      cut: true,
    });
  });
});

describe('the chat a small model reads', () => {
  const task: ChatMessage[] = [
    { role: 'system', content: DEFAULT_SYSTEM_PROMPT },
    { role: 'user', content: 'What is 2+2, and the time in Oslo?' },
  ];

  test('a short system prompt with one card per offered tool, and the worked example', () => {
    const chat = buildChat(task, [getTime!, calculator!], LOCAL_TOOL_CARDS);
    const system = chat[0] as { type: 'system'; text: string };
    expect(system.type).toBe('system');
    expect(system.text.startsWith(LOCAL_SYSTEM_PROMPT)).toBe(true);
    expect(system.text).toContain('- get_time: the current date and time in a place.');
    expect(system.text).toContain('- answer: ');
    expect(system.text).not.toContain('notify_user');
    // The project's long default prompt is replaced by the scaffold, not repeated.
    expect(system.text).not.toContain(DEFAULT_SYSTEM_PROMPT.split('\n')[0]);
    expect(chat[1]).toEqual({ type: 'user', text: FEW_SHOT_EXAMPLE.task });
    expect(chat.at(-1)).toEqual({ type: 'user', text: task[1]!.content });
    expect(chat).toHaveLength(6);
    // No calculator offered, no calculator example.
    expect(buildChat(task, [getTime!], LOCAL_TOOL_CARDS)).toHaveLength(2);
  });

  test('a SQL result reads as values, not as a row count', () => {
    const read = (columns: string[], rows: unknown[][], truncated: SqlQueryData['truncated'] = false) =>
      resultValuesText(
        formatQueryResult(
          {
            connection: 'sample',
            engine: 'pglite',
            statementType: 'SELECT',
            kind: 'read',
            columns,
            rows,
            rowCount: rows.length,
            truncated,
            durationMs: 1,
          },
          { maxRows: 2, maxBytes: 10_000 },
        ).content,
      );
    expect(read(['count'], [['400']])).toBe('count = 400');
    expect(read(['name', 'price'], [['Kettle', 77.1]])).toBe('name = Kettle, price = 77.1');
    const many = read(
      ['country', 'n'],
      [
        ['DE', 44],
        ['FR', 61],
      ],
      'rows',
    );
    expect(many.split('\n').slice(0, 3)).toEqual([
      '2 rows:',
      '- country = DE, n = 44',
      '- country = FR, n = 61',
    ]);
    expect(many).toContain('Truncated: showing the first 2 rows');
    expect(read(['count'], [])).toBe('no rows');
    // Anything else is shown as the tool wrote it.
    expect(resultValuesText('Unknown column "x"')).toBe('Unknown column "x"');
    const chat = buildChat(
      [
        ...task,
        {
          role: 'assistant',
          content: null,
          toolCalls: [{ id: 'q', name: 'sql_query', arguments: { sql: 'SELECT 1' } }],
        },
        {
          role: 'tool',
          toolCallId: 'q',
          name: 'sql_query',
          content: 'SELECT: 1 row.\ncolumns: ["count"]\n["400"]',
        },
      ],
      [sqlQuery!],
      LOCAL_TOOL_CARDS,
    );
    expect((chat.at(-1) as { text: string }).text).toContain('Result of sql_query: count = 400');
  });

  test('a schema reads as one line of column names per table, the tables the task names first', () => {
    const column = (name: string, type = 'integer') => ({ name, type, nullable: false });
    const table = (
      name: string,
      columns: string[],
      foreignKeys: string[] = [],
      kind: 'table' | 'view' = 'table',
    ) => ({
      name,
      kind,
      rows: 400,
      rowsExact: true,
      columns: columns.map((c) => column(c)),
      primaryKey: ['id'],
      foreignKeys,
    });
    const data: SqlSchemaData = {
      connection: 'sample',
      engine: 'postgres',
      writable: false,
      tables: [
        table('customers', ['id', 'name', 'country']),
        table('orders', ['id', 'customer_id', 'status'], ['customer_id → customers(id)']),
        table('products', ['id', 'name', 'category', 'price']),
        table('big_orders', ['id'], [], 'view'),
      ],
    };
    const text = formatSchema(data, []);
    // Types, keys and row counts are gone: the names a query must copy are left.
    expect(schemaText(text, '')).toBe(
      [
        'Tables (PostgreSQL dialect, read-only):',
        'customers(id, name, country)',
        'orders(id, customer_id, status)',
        '  orders.customer_id → customers(id)',
        'products(id, name, category, price)',
        'big_orders(id) (a view)',
      ].join('\n'),
    );
    expect(schemaText(text, '')).not.toContain('400');
    // A table the task names (plural or not) comes first, then one a column of which it names.
    const first = (task: string) => schemaText(text, task).split('\n')[1];
    expect(first('How many orders are there?')).toBe('orders(id, customer_id, status)');
    expect(first('How many products are in the kitchen category?')).toBe(
      'products(id, name, category, price)',
    );
    expect(first('Which category sells best?')).toBe('products(id, name, category, price)');
    expect(first('Show me the weather')).toBe('customers(id, name, country)');
    // Missing tables and any other text are kept; text that is no schema is left as it is.
    expect(schemaText(formatSchema(data, ['nope']), '')).toContain('No such table: nope.');
    expect(schemaText('SELECT: 1 row.', 'x')).toBe('SELECT: 1 row.');
  });

  test("a column's values, where sql_schema lists them, follow its table as a line the model can copy from", () => {
    const data: SqlSchemaData = {
      connection: 'sample',
      engine: 'postgres',
      writable: false,
      tables: [
        {
          name: 'orders',
          kind: 'table',
          rows: 2500,
          rowsExact: true,
          columns: [
            { name: 'id', type: 'integer', nullable: false },
            { name: 'customer_id', type: 'integer', nullable: false },
            {
              name: 'status',
              type: 'character varying(20)',
              nullable: false,
              values: ['cancelled', 'delivered', "won't ship"],
            },
          ],
          primaryKey: ['id'],
          foreignKeys: ['customer_id → customers(id)'],
        },
      ],
    };
    const text = formatSchema(data, []);
    expect(text).toContain(
      "  status character varying(20) NOT NULL — values: 'cancelled', 'delivered', 'won''t ship'",
    );
    expect(schemaText(text, 'How many orders were cancelled?')).toBe(
      [
        'Tables (PostgreSQL dialect, read-only):',
        'orders(id, customer_id, status)',
        "  orders.status is one of 'cancelled', 'delivered', 'won''t ship'",
        '  orders.customer_id → customers(id)',
      ].join('\n'),
    );
    // Named by the column too; a task that names neither the column nor a value does without them.
    expect(schemaText(text, 'How many orders have each status?')).toContain('orders.status is one of');
    // Stop words name nothing: a value 'in' (a country code) is not named by "in the database".
    expect(
      schemaText(text.replace("'won''t ship'", "'in'"), 'How many orders are in the database?'),
    ).not.toContain('is one of');
    expect(schemaText(text, 'List the tables of the database.')).toBe(
      [
        'Tables (PostgreSQL dialect, read-only):',
        'orders(id, customer_id, status)',
        '  orders.customer_id → customers(id)',
      ].join('\n'),
    );
  });

  test("search results read as the best passages of the best result's document, best first", () => {
    const records = [
      { title: 'Travel › Hotels', text: 'Up to 180 EUR\n per night.' },
      { title: 'Rail', text: 'Nozomi trains…' },
      { title: 'Travel › Meals', text: '55 EUR a day.' },
      { title: 'Travel', text: 'Book early.' },
    ];
    const content = renderSearchPicks(records, [
      [0, 'a1'],
      [1, 'a2'],
      [2, 'a3'],
      [3, 'a4'],
    ]);
    // Rail, another document ranked second, is left out: a small model answered from such a passage.
    expect(searchResultsText(content)).toBe(
      '[1] Travel › Hotels: Up to 180 EUR per night.\n[2] Travel › Meals: 55 EUR a day.',
    );
    expect(SEARCH_RESULTS_SHOWN).toBe(2);
    expect(searchResultsText('No results found.')).toBe('No results found.');
    // Cut to the context's budget: the complete results are read, the cut one left out.
    const cut = `${content.slice(0, content.indexOf('55 EUR') + 3)}\n… [content truncated]`;
    expect(searchResultsText(cut)).toBe('[1] Travel › Hotels: Up to 180 EUR per night.');
    expect(searchResultsText('[{"not":"a result"}]')).toBe('[{"not":"a result"}]');
  });

  test('a later step offers the tools that have not answered yet: a refused call may be mended', () => {
    const call = (id: string, name: string): ChatMessage => ({
      role: 'assistant',
      content: null,
      toolCalls: [{ id, name, arguments: {} }],
    });
    const names = (messages: ChatMessage[]) => notYetAnswered(messages, tools).map((t) => t.name);
    expect(names(task)).toEqual(['get_time', 'calculator', 'notify_user', 'sql_query']);
    const refused: ChatMessage[] = [
      ...task,
      call('a', 'calculator'),
      { role: 'tool', toolCallId: 'a', name: 'calculator', content: 'Cannot evaluate', isError: true },
    ];
    expect(names(refused)).toEqual(['get_time', 'calculator', 'notify_user', 'sql_query']);
    const answered: ChatMessage[] = [
      ...refused,
      call('b', 'calculator'),
      { role: 'tool', toolCallId: 'b', name: 'calculator', content: '4' },
      call('c', 'sql_query'),
      { role: 'tool', toolCallId: 'c', name: 'sql_query', content: 'count = 4' },
    ];
    expect(names(answered)).toEqual(['get_time', 'notify_user']);
    // Right after a first refusal the decision must be a call; after a second one it may answer.
    expect(mendsRefusal(refused)).toBe(true);
    expect(mendsRefusal(answered)).toBe(false);
    const twice: ChatMessage[] = [
      ...refused,
      call('d', 'calculator'),
      { role: 'tool', toolCallId: 'd', name: 'calculator', content: 'Cannot evaluate', isError: true },
    ];
    expect(mendsRefusal(twice)).toBe(false);
    // A tool refused twice is no longer offered.
    expect(names(twice)).toEqual(['get_time', 'notify_user', 'sql_query']);
  });

  test('the calculator is a first choice only when the task holds a number', () => {
    const names = (text: string) => firstChoices([{ role: 'user', content: text }], tools).map((t) => t.name);
    expect(names('What is the minimum password length in our checklist?')).toEqual([
      'get_time',
      'notify_user',
      'sql_query',
    ]);
    expect(names('Multiply 23 by 19.')).toContain('calculator');
    expect(names('What is half of twelve hundred?')).toContain('calculator');
    // With nothing else to choose, the calculator stays.
    const only = tools.filter((t) => t.name === 'calculator');
    expect(firstChoices([{ role: 'user', content: 'Hello' }], only)).toEqual(only);
  });

  test('a notification of a number nothing has said yet is ungrounded', () => {
    const notify = (message: string) =>
      ({ kind: 'call', tool: 'notify_user', arguments: { message } }) as const;
    const asked: ChatMessage[] = [
      { role: 'user', content: 'What time is it in Madrid? Notify me of the time.' },
    ];
    expect(ungroundedNotification(notify('It is 10:05 in Madrid.'), asked)).toBe(true);
    expect(ungroundedNotification(notify('Here is the time in Madrid.'), asked)).toBe(false);
    const looked: ChatMessage[] = [
      ...asked,
      {
        role: 'assistant',
        content: null,
        toolCalls: [{ id: 'a', name: 'get_time', arguments: { timezone: 'Europe/Madrid' } }],
      },
      { role: 'tool', toolCallId: 'a', name: 'get_time', content: 'Saturday, 5 December 2026 at 10:05 CET' },
    ];
    expect(ungroundedNotification(notify('It is 10:05 in Madrid.'), looked)).toBe(false);
    expect(ungroundedNotification(notify('It is 11:05 in Madrid.'), looked)).toBe(true);
    // Numbers of the task itself are grounded; other tools and answers are not checked.
    const remind: ChatMessage[] = [{ role: 'user', content: 'Remind me to call Alice at 3 pm.' }];
    expect(ungroundedNotification(notify('Call Alice at 3 pm'), remind)).toBe(false);
    expect(ungroundedNotification({ kind: 'answer', text: 'It is 10:05.' }, asked)).toBe(false);
    expect(
      ungroundedNotification({ kind: 'call', tool: 'calculator', arguments: { expression: '7*6' } }, asked),
    ).toBe(false);
  });

  test("a run's own instructions are kept", () => {
    const chat = buildChat(
      [{ role: 'system', content: 'Answer in French.' }, task[1]!],
      [getTime!],
      LOCAL_TOOL_CARDS,
    );
    expect((chat[0] as { text: string }).text).toContain(
      'Also follow these instructions:\nAnswer in French.',
    );
  });

  test('earlier calls read as decisions; results of one turn are one clipped user turn', () => {
    const long = 'x'.repeat(TOOL_RESULT_CHARS + 500);
    const chat = buildChat(
      [
        ...task,
        {
          role: 'assistant',
          content: null,
          toolCalls: [
            { id: 'a', name: 'calculator', arguments: { expression: '2+2' } },
            { id: 'b', name: 'get_time', arguments: { timezone: 'Europe/Oslo' } },
          ],
        },
        { role: 'tool', toolCallId: 'a', name: 'calculator', content: '4' },
        { role: 'tool', toolCallId: 'b', name: 'get_time', content: long },
      ],
      [getTime!],
      LOCAL_TOOL_CARDS,
    );
    expect(chat.at(-2)).toEqual({
      type: 'model',
      response: [
        '{"tool":"calculator","arguments":{"expression":"2+2"}}\n{"tool":"get_time","arguments":{"timezone":"Europe/Oslo"}}',
      ],
    });
    const results = (chat.at(-1) as { text: string }).text;
    expect(results.startsWith('Result of calculator: 4\n\nResult of get_time: xxx')).toBe(true);
    expect(results.endsWith(`… (cut)\n\n${AFTER_RESULTS_TEXT}`)).toBe(true);
    expect(results.length).toBeLessThan(TOOL_RESULT_CHARS + 200);
  });
});

describe('sequence pool', () => {
  test('lends slots first come first served and gives a returned slot to the longest waiter', async () => {
    const pool = new SequencePool(['s1']);
    const first = await pool.acquire();
    const order: string[] = [];
    const a = pool.acquire().then((s) => order.push(`a:${s}`));
    const b = pool.acquire().then((s) => order.push(`b:${s}`));
    expect(pool.waiting).toBe(2);
    pool.release(first);
    await a;
    pool.release('s1');
    await b;
    expect(order).toEqual(['a:s1', 'b:s1']);
  });

  test('a cancelled waiter leaves the queue and never takes a slot', async () => {
    const pool = new SequencePool(['s1']);
    const held = await pool.acquire();
    const controller = new AbortController();
    const waiting = pool.acquire(controller.signal);
    controller.abort(new Error('cancelled'));
    await expect(waiting).rejects.toThrow('cancelled');
    expect(pool.waiting).toBe(0);
    pool.release(held);
    expect(pool.available).toBe(1);
  });

  test('use() gives the slot back when the work throws', async () => {
    const pool = new SequencePool(['s1']);
    await expect(pool.use(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(pool.available).toBe(1);
  });
});

test('calibrated choice picks the name whose probability rose most over its prior', () => {
  // Raw scores favour the first name, which the prompt favours for any task.
  expect(calibratedChoice([-0.5, -2, -3], [-0.4, -4, -3])).toBe(1);
  expect(calibratedChoice([-1, -1], [-1, -1])).toBe(0);
});

describe('choosing the local model', () => {
  test('the model choice has bounded tokens and a plain file name', () => {
    expect(ModelChoiceSchema.parse({ provider: 'local' })).toEqual({ provider: 'local', maxTokens: 512 });
    expect(ModelChoiceSchema.safeParse({ provider: 'local', maxTokens: 100_000 }).success).toBe(false);
    expect(ModelChoiceSchema.safeParse({ provider: 'local', model: '../etc/passwd' }).success).toBe(false);
  });

  test('--model local and local:<file>', () => {
    expect(parseModelSpec('local')).toEqual({ provider: 'local', maxTokens: 512 });
    expect(parseModelSpec('local:gemma-3-270m-q4_k_m.gguf')).toEqual({
      provider: 'local',
      model: 'gemma-3-270m-q4_k_m.gguf',
      maxTokens: 512,
    });
  });
});

describe('answers that loop', () => {
  test('a sentence written three times is a loop; a short one repeated is not', () => {
    expect(repeatsItself('It is 437. The answer is 437. The answer is 437. The answer is 437.')).toBe(true);
    expect(repeatsItself('Yes. Yes. Yes. It is 437.')).toBe(false);
    expect(repeatsItself('The answer is 437. The answer is 437.')).toBe(false);
    // A loop with no sentence end in it.
    expect(repeatsItself('It costs 75/100*75=75/100*75=75/100*75=')).toBe(true);
    expect(repeatsItself('It costs 75/100*75=75/100*75=')).toBe(false);
    expect(repeatsItself('1111111111111111111')).toBe(false);
    expect(repeatsItself('about 1,000,000,000,000,000,000')).toBe(false);
  });

  test('the answer keeps each sentence once and drops a repeat cut short', () => {
    expect(withoutRepeats('It is 437. The answer is 437. The answer is 437. The ans…')).toBe(
      'It is 437. The answer is 437.',
    );
    expect(withoutRepeats('It is 437. The answer is 437. The answer is 437.…')).toBe(
      'It is 437. The answer is 437.',
    );
    expect(withoutRepeats('No sentence end here')).toBe('No sentence end here');
    expect(withoutRepeats('First point here. Second point here.')).toBe(
      'First point here. Second point here.',
    );
  });
});
