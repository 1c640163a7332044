/** The task's words where a small model loses them: its search query, the passage it answers from. */
import { modelToolSpecs } from '../../activities/model';
import { answeredBySchema, firstChoices, mended } from '../../activities/model/local/decide';
import { bestSentence, searchQueryWithTask } from '../../activities/model/local/task-words';
import type { ChatMessage } from '../../shared/conversation';

const task = (content: string): ChatMessage[] => [{ role: 'user', content }];

test("a search query gets the task's words it left out, after its own", () => {
  expect(
    searchQueryWithTask(
      'travel policy',
      'Up to what amount does my manager approve expense claims, per our travel policy?',
    ),
  ).toBe('travel policy amount manager approve expense claims');
  // Words that say where to look (notes, documents, knowledge base) are not what is asked.
  expect(searchQueryWithTask('rule of 72', 'What does my knowledge base say about the rule of 72?')).toBe(
    'rule of 72',
  );
  expect(searchQueryWithTask('compost', 'According to my notes, how wet should compost be?')).toBe(
    'compost wet',
  );
  // Stems meet: "approves" in the query covers "approve" in the task.
  expect(searchQueryWithTask('manager approves claims', 'Does my manager approve claims?')).toBe(
    'manager approves claims',
  );
  // Bounded however long the task.
  expect(
    searchQueryWithTask('x', 'word '.repeat(10) + Array.from({ length: 100 }, (_, i) => `w${i}`).join(' '))
      .length,
  ).toBeLessThanOrEqual(200);
});

test('a knowledge base query is mended with the task; other tools keep their arguments', () => {
  const asked = task('How many months of service do I need before parental leave, according to our policy?');
  expect(
    mended(
      { kind: 'call', tool: 'knowledge_base_search', arguments: { query: 'parental leave policy' } },
      asked,
    ),
  ).toEqual({
    kind: 'call',
    tool: 'knowledge_base_search',
    arguments: { query: 'parental leave policy months service' },
  });
  const web = { kind: 'call' as const, tool: 'web_search', arguments: { query: 'parental leave policy' } };
  expect(mended(web, asked)).toEqual(web);
});

test("the sentence that shares most of the task's words beyond the title is pointed out", () => {
  const parental = {
    title: 'Parental Leave',
    text:
      'All employees with at least six months of service are entitled to parental leave. ' +
      'Primary caregivers receive 20 weeks of fully paid leave and secondary caregivers 8 weeks. ' +
      'Leave can be taken in up to three blocks within the first 18 months.',
  };
  expect(bestSentence([parental], 'How many months of service do I need before parental leave?')).toBe(
    'All employees with at least six months of service are entitled to parental leave.',
  );
  // The title's words match every sentence of the document: alone they point at none.
  const rainbows = {
    title: 'Why Rainbows Form',
    text: 'A rainbow appears when sunlight enters raindrops. The bow is a circle of light at about 42 degrees.',
  };
  expect(bestSentence([rainbows], 'At what angle does a rainbow appear?')).toBeUndefined();
  // A sentence that names its subject by a pronoun comes with the sentence before it.
  const brin = {
    title: 'Choosing PostgreSQL Index Types › BRIN indexes',
    text:
      'A BRIN index stores the minimum and maximum of each block range. It is tiny and works well for huge, ' +
      'naturally ordered tables such as append-only logs sorted by timestamp.',
  };
  expect(bestSentence([brin], 'Which index type suits huge append-only logs sorted by timestamp?')).toBe(
    brin.text,
  );
});

test("a task that names the user's own documents goes to the knowledge base first", () => {
  const tools = modelToolSpecs([
    'get_time',
    'calculator',
    'knowledge_base_search',
    'sql_query',
    'sql_schema',
  ]);
  const first = (text: string) => firstChoices(task(text), tools).map((t) => t.name);
  expect(first('Which git command gives up a rebase, according to my notes?')).toEqual([
    'knowledge_base_search',
  ]);
  expect(first('Which PostgreSQL index type suits logs, according to my documents?')).toEqual([
    'knowledge_base_search',
  ]);
  expect(first('Up to what amount does my manager approve claims, per our travel policy?')).toEqual([
    'knowledge_base_search',
  ]);
  expect(first('How many days ahead must I book, according to the travel expense policy?')).toEqual([
    'knowledge_base_search',
  ]);
  // The database named: its tools stay, as does everything for a task that names no documents.
  expect(first('How many orders are shipped, according to the database?')).toContain('sql_query');
  expect(first('How many customers are in the database, per my notes?')).toContain('sql_query');
  expect(first('What time is it in Oslo?')).toContain('get_time');
  // Without the knowledge base offered, the rule does nothing.
  const noKb = modelToolSpecs(['get_time', 'sql_query']);
  expect(firstChoices(task('What do my notes say about Oslo?'), noKb)).toHaveLength(2);
});

test('a schema read for a task about tables or columns is the answer, not a step towards a query', () => {
  const read = (text: string): ChatMessage[] => [
    ...task(text),
    { role: 'assistant', content: null, toolCalls: [{ id: 'a', name: 'sql_schema', arguments: {} }] },
    { role: 'tool', toolCallId: 'a', name: 'sql_schema', content: 'Connection "sample" …' },
  ];
  expect(answeredBySchema(read('List the tables of the database.'))).toBe(true);
  expect(answeredBySchema(read('Which columns does the orders table have?'))).toBe(true);
  expect(answeredBySchema(read('How many products are in the kitchen category?'))).toBe(false);
  // Only right after the schema, and only a schema that came back.
  const refused = read('List the tables.');
  (refused[2] as Extract<ChatMessage, { role: 'tool' }>).isError = true;
  expect(answeredBySchema(refused)).toBe(false);
  expect(answeredBySchema(task('List the tables.'))).toBe(false);
});

test('of sentences as close to a "how many" question, the one with a number is pointed out', () => {
  const litter = {
    title: 'Litter Training a Kitten',
    text: 'Kittens usually learn to use a litter box quickly because cats bury their waste. The usual rule is one box per cat plus one extra.',
  };
  expect(bestSentence([litter], 'How many litter boxes do I need per cat?')).toBe(
    'The usual rule is one box per cat plus one extra.',
  );
  // A question that asks no quantity keeps the first of equals.
  expect(bestSentence([litter], 'Why do cats take to a litter box?')).toBe(
    'Kittens usually learn to use a litter box quickly because cats bury their waste.',
  );
});

test('an answer that copies the label of the best sentence loses it', () => {
  expect(
    mended({ kind: 'answer', text: 'Most relevant: One box per cat plus one.' }, task('How many boxes?')),
  ).toEqual({
    kind: 'answer',
    text: 'One box per cat plus one.',
  });
});
