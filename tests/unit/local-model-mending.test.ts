/**
 * What the local provider mends in a small model's decisions before the run takes them: a query's
 * names against the schema it has read, a time zone against the place the task names, an answer
 * that only restates the task or copies a worked example, and an answer given while a notification
 * the task asked for is still owed.
 */
import { modelToolSpecs } from '../../activities/model';
import { copiesExample, mended, owesNotification, restatesTask } from '../../activities/model/local/decide';
import { CHAIN_EXAMPLE, FEW_SHOT_EXAMPLE } from '../../prompts/local-model';
import { schemaTables, withSchemaNames } from '../../activities/model/local/sql-names';
import { mendedTimeZone, zonesNamedBy } from '../../activities/model/local/time-zones';
import type { SqlSchemaData } from '../../activities/sql/schema';
import { formatSchema } from '../../activities/sql/schema';
import type { ChatMessage } from '../../shared/conversation';

const column = (name: string) => ({ name, type: 'integer', nullable: false });
const table = (name: string, columns: string[]) => ({
  name,
  kind: 'table' as const,
  rows: 400,
  rowsExact: true,
  columns: columns.map(column),
  primaryKey: ['id'],
  foreignKeys: [],
});
const data: SqlSchemaData = {
  connection: 'sample',
  engine: 'postgres',
  writable: false,
  tables: [
    table('customers', ['id', 'name', 'country', 'city']),
    table('products', ['id', 'name', 'category', 'price']),
    table('orders', ['id', 'customer_id', 'status']),
  ],
};
const schema = formatSchema(data, []);
const tables = schemaTables(schema);

test("the schema's tables and columns are read from sql_schema's text", () => {
  expect([...tables.keys()]).toEqual(['customers', 'products', 'orders']);
  expect(tables.get('customers')).toEqual(['id', 'name', 'country', 'city']);
  expect(schemaTables('SELECT: 1 row.').size).toBe(0);
});

test("a query's name that extends one column of its tables is that column", () => {
  const fix = (sql: string) => withSchemaNames(sql, tables);
  expect(fix("SELECT count(*) FROM customers WHERE country_code = 'DE'")).toEqual({
    sql: "SELECT count(*) FROM customers WHERE country = 'DE'",
    replaced: [['country_code', 'country']],
  });
  expect(fix("SELECT min(price) FROM products WHERE category_name = 'garden'").sql).toBe(
    "SELECT min(price) FROM products WHERE category = 'garden'",
  );
  // A table in the singular.
  expect(fix('SELECT count(*) FROM customer').sql).toBe('SELECT count(*) FROM customers');
  // Aliases, functions, quoted text and SQL stay; so does a name no single column fits.
  const same = [
    'SELECT count(*) AS customer_count FROM customers c ORDER BY customer_count',
    "SELECT c.name FROM customers c WHERE c.city = 'country_code'",
    'SELECT "country_code" FROM customers',
    'SELECT zip_code FROM customers',
    'SELECT weight FROM products',
  ];
  for (const sql of same) expect(fix(sql)).toEqual({ sql, replaced: [] });
  // Only the columns of the tables the statement reads: `status_code` is no customers column.
  expect(fix("SELECT count(*) FROM customers WHERE status_code = 'x'").replaced).toEqual([]);
  // Without a schema nothing changes.
  expect(withSchemaNames('SELECT country_code FROM customers', new Map()).replaced).toEqual([]);
});

test('a statement that reads one table for a column only another table has reads that table', () => {
  const fix = (sql: string) => withSchemaNames(sql, tables);
  expect(fix("SELECT count(*) FROM customers WHERE status = 'cancelled' OR status = 'refunded'")).toEqual({
    sql: "SELECT count(*) FROM orders WHERE status = 'cancelled' OR status = 'refunded'",
    replaced: [['customers', 'orders']],
  });
  // With the other mends after it: the singular, a column with a word added.
  expect(fix("SELECT count(*) FROM products WHERE status = 'paid' AND customer_id = 3").sql).toBe(
    "SELECT count(*) FROM orders WHERE status = 'paid' AND customer_id = 3",
  );
  // No move when the table has the columns, when two tables could, when tables are joined.
  const same = [
    "SELECT count(*) FROM customers WHERE city = 'Lyon'",
    'SELECT count(*) FROM customers WHERE id = 3',
    "SELECT count(*) FROM customers c JOIN orders o ON o.customer_id = c.id WHERE o.status = 'paid'",
    'SELECT count(*) FROM customers WHERE weight > 3',
  ];
  for (const sql of same) expect(fix(sql)).toEqual({ sql, replaced: [] });
  // Not to a table without the columns the statement has from its own: country is a customers
  // column, category a products one (moving either way loses the other).
  expect(fix("SELECT count(*) FROM products WHERE country = 'BR' AND category = 'kitchen'").replaced).toEqual(
    [],
  );
  // `name` is a column of customers and products: the statement over orders is not moved.
  expect(fix("SELECT count(*) FROM orders WHERE name = 'x'").replaced).toEqual([]);
});

const task = (text: string): ChatMessage[] => [{ role: 'user', content: text }];
const call = (id: string, name: string, args: Record<string, unknown> = {}): ChatMessage => ({
  role: 'assistant',
  content: null,
  toolCalls: [{ id, name, arguments: args }],
});

test('a query is mended only after the run has read the schema', () => {
  const q = {
    kind: 'call',
    tool: 'sql_query',
    arguments: { sql: "SELECT count(*) FROM customers WHERE country_code = 'DE'" },
  } as const;
  const asked = task('How many customers are from Germany (country code DE)?');
  expect(mended(q, asked)).toEqual(q);
  const read: ChatMessage[] = [
    ...asked,
    call('a', 'sql_schema'),
    { role: 'tool', toolCallId: 'a', name: 'sql_schema', content: schema },
  ];
  expect(mended(q, read)).toEqual({
    ...q,
    arguments: { sql: "SELECT count(*) FROM customers WHERE country = 'DE'" },
  });
});

test('a time zone is the one whose place the task names, written without spaces', () => {
  // Near the right one: the task's place wins.
  expect(mendedTimeZone('America/New_York', 'What time is it in Chicago at the moment?')).toBe(
    'America/Chicago',
  );
  // Broken apart: written whole.
  expect(mendedTimeZone('Europe/ Athens', 'What time is it in Athens? Notify me of it.')).toBe(
    'Europe/Athens',
  );
  // Accents and several words: "São Paulo" names America/Sao_Paulo.
  expect(mendedTimeZone('America/Bogota', 'Time in São Paulo?')).toBe('America/Sao_Paulo');
  // The model's zone names a place of the task: kept, even beside another named place.
  expect(mendedTimeZone('Europe/Berlin', 'What time is it in Berlin at Christmas?')).toBe('Europe/Berlin');
  expect(mendedTimeZone('America/New_York', 'What is the current date in New York?')).toBe(
    'America/New_York',
  );
  // No place of a zone named ("Japan", "UTC"), or several: the model's zone stays.
  expect(mendedTimeZone('Asia/Tokyo', 'What time is it in Japan?')).toBe('Asia/Tokyo');
  expect(mendedTimeZone('UTC', 'What day of the week is it today in UTC?')).toBe('UTC');
  expect(mendedTimeZone('Europe/Rome', 'Is it later in Paris or in Madrid?')).toBe('Europe/Rome');
  expect(zonesNamedBy('Is it later in Paris or in Madrid?').sort()).toEqual([
    'Europe/Madrid',
    'Europe/Paris',
  ]);
  // Whole words only: "Parisian" names no place.
  expect(zonesNamedBy('A Parisian clock')).toEqual([]);
  // As the run takes the decision.
  const chicago = task('What time is it in Chicago at the moment?');
  expect(
    mended({ kind: 'call', tool: 'get_time', arguments: { timezone: 'America/New_York' } }, chicago),
  ).toEqual({ kind: 'call', tool: 'get_time', arguments: { timezone: 'America/Chicago' } });
});

test('an answer that restates the task becomes what the last result said', () => {
  const question = 'What does my knowledge base say about the rule of 72?';
  expect(restatesTask(question, question)).toBe(true);
  expect(
    restatesTask('Look up in my documents how many boxes', 'Look up in my documents how many boxes I need.'),
  ).toBe(true);
  expect(restatesTask('The rule of 72 says: divide 72 by the rate.', question)).toBe(false);
  // Part of the task's words, not most of them: an answer in the task's words.
  expect(restatesTask('The backup finished.', 'Notify me that the backup finished.')).toBe(false);
  const searched: ChatMessage[] = [
    ...task(question),
    call('a', 'knowledge_base_search', { query: 'rule of 72' }),
    {
      role: 'tool',
      toolCallId: 'a',
      name: 'knowledge_base_search',
      content:
        '[{"title":"Money › Rule of 72","text":"Divide 72 by the yearly rate to get the years to double."}]',
    },
  ];
  expect(mended({ kind: 'answer', text: question }, searched)).toEqual({
    kind: 'answer',
    text: '[1] Money › Rule of 72: Divide 72 by the yearly rate to get the years to double.',
  });
  // With no result to give, the answer stays.
  expect(mended({ kind: 'answer', text: question }, task(question))).toEqual({
    kind: 'answer',
    text: question,
  });
});

test('a task that asks for a notification owes one until notify_user has answered', () => {
  const tools = modelToolSpecs(['get_time', 'notify_user']);
  const asked = task('What time is it in Berlin? Send me the time as a notification.');
  const timed: ChatMessage[] = [
    ...asked,
    call('a', 'get_time', { timezone: 'Europe/Berlin' }),
    { role: 'tool', toolCallId: 'a', name: 'get_time', content: '13:21 CET' },
  ];
  expect(owesNotification(timed, tools)).toBe(true);
  const notified: ChatMessage[] = [
    ...timed,
    call('b', 'notify_user', { message: 'It is 13:21 in Berlin.' }),
    {
      role: 'tool',
      toolCallId: 'b',
      name: 'notify_user',
      content: 'The notification has been sent to the user.',
    },
  ];
  expect(owesNotification(notified, tools)).toBe(false);
  // Not asked for, or notify_user no longer offered (refused twice): nothing owed.
  expect(owesNotification(task('What time is it in Berlin?'), tools)).toBe(false);
  expect(owesNotification(timed, modelToolSpecs(['get_time']))).toBe(false);
  expect(owesNotification(task('Remind me to call Alice.'), tools)).toBe(true);
});

test("an answer that copies a worked example's answer becomes what the last result said", () => {
  const compost = 'How many parts browns to one part greens should compost have, per my notes?';
  const searched: ChatMessage[] = [
    ...task(compost),
    call('a', 'knowledge_base_search', { query: 'compost browns greens' }),
    {
      role: 'tool',
      toolCallId: 'a',
      name: 'knowledge_base_search',
      content: '[{"title":"Composting","text":"Two to three parts browns to one part greens."}]',
    },
  ];
  expect(copiesExample(CHAIN_EXAMPLE.answer, compost)).toBe(true);
  expect(copiesExample(FEW_SHOT_EXAMPLE.answer.toUpperCase(), compost)).toBe(true);
  // The passage's sentence that shares the task's words is the answer.
  expect(mended({ kind: 'answer', text: CHAIN_EXAMPLE.answer }, searched)).toEqual({
    kind: 'answer',
    text: 'Two to three parts browns to one part greens.',
  });
  // The example's own task may have it; another answer stays.
  expect(copiesExample(CHAIN_EXAMPLE.answer, CHAIN_EXAMPLE.task)).toBe(false);
  expect(copiesExample('Two to three parts browns to one part greens.', compost)).toBe(false);
});
