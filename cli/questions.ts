/** `asks` and `answer`: what waits for input (questions, client-side tools' calls), and answers. */
import fs from 'node:fs';
import type { Command } from 'commander';
import type { TemporalTarget } from '../workers/connect';
import type * as Questions from '../client/questions';
import type * as QuestionShapes from '../shared/agent/questions';
import type * as LocalTime from '../shared/local-time';
import type * as Notice from '../shared/question-notice';
import type * as TracedClient from '../client/traced-client';

/** What the commands run, loaded when one runs: `--help` and a mistyped flag load none of it. */
function load() {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded on demand */
  return {
    ...(require('../client/questions') as typeof Questions),
    ...(require('../shared/agent/questions') as typeof QuestionShapes),
    ...(require('../shared/local-time') as typeof LocalTime),
    ...(require('../shared/question-notice') as typeof Notice),
    ...(require('../client/traced-client') as typeof TracedClient),
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** Largest `--file`: an answer is at most 32 KiB as JSON; a file a little over it still gets the run's reason. */
const MAX_ANSWER_FILE_BYTES = 256 * 1024;

/** The answer the options give: exactly one of `--json`, `--text`, `--file`. */
function answerOf(o: { json?: string; text?: string; file?: string }): unknown {
  const given = [o.json, o.text, o.file].filter((v) => v !== undefined).length;
  if (given !== 1)
    throw new Error('Give the answer with exactly one of --json <value>, --text <text>, --file <file.json>');
  if (o.text !== undefined) return o.text;
  let text = o.json as string;
  let where = '--json';
  if (o.file !== undefined) {
    where = `--file ${o.file}`;
    try {
      const size = fs.statSync(o.file).size;
      if (size > MAX_ANSWER_FILE_BYTES) throw new Error(`is ${size} bytes; an answer is far smaller`);
      text = fs.readFileSync(o.file, 'utf8');
    } catch (err) {
      throw new Error(`${where}: ${(err as Error).message}`);
    }
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new Error(
      `${where} is not valid JSON (${(err as Error).message}); quote text as JSON ('"Lisbon"') or use --text`,
    );
  }
}

/** Registers the question commands. */
export function registerQuestionCommands(program: Command, target: () => TemporalTarget): void {
  program
    .command('asks')
    .description(
      'List questions and client-tool calls waiting for input: of one run (and its sub-agents), or of every running agent run',
    )
    .argument('[id]', 'workflow id (default: every running agent run)')
    .option('--user <user>', 'only runs that notify inbox:<user>')
    .option('--json', 'JSON output')
    .action(async (id: string | undefined, o: { user?: string; json?: boolean }) => {
      const { describeAnswerSchema, listQuestions, localTime, questionFormPath, withClient } = load();
      await withClient(target(), async (client) => {
        const open = await listQuestions(client, {
          ...(id ? { workflowId: id } : {}),
          ...(o.user !== undefined ? { user: o.user } : {}),
        });
        if (o.json) return console.log(JSON.stringify(open, null, 2));
        if (open.length === 0) return console.log('Nothing waits for an answer.');
        for (const q of open) {
          const of = q.parent ? ` (sub-agent ${q.parent.agent} of ${q.parent.workflowId})` : '';
          const what = q.kind === 'question' ? q.question : `${q.tool} ${JSON.stringify(q.args)}`;
          console.log(`${q.workflowId} ${q.toolCallId}: ${what}${of} until ${localTime(q.deadline)}`);
          console.log(
            `    answer: ${describeAnswerSchema(q.schema)}${q.hasDefault ? ` (default ${JSON.stringify(q.default)})` : ''}`,
          );
          console.log(`    form: ${questionFormPath(q.workflowId, q.toolCallId)}`);
        }
      });
    });

  program
    .command('answer')
    .description(
      'Answer a question (or submit a client tool’s result); the run checks it against the call’s schema',
    )
    .argument('<id>', 'workflow id (a sub-agent’s question: the sub-agent’s, as `asks` lists it)')
    .argument('<toolCallId>', 'the call’s id (see `asks`)')
    .option('--json <value>', 'the answer as JSON: \'"Lisbon"\', 3, true, \'{"seats": 2}\'')
    .option('--text <text>', 'the answer as text, taken as it is')
    .option('--file <file.json>', 'the answer as a JSON file')
    .action(async (id: string, toolCallId: string, o: { json?: string; text?: string; file?: string }) => {
      const answer = answerOf(o);
      const { answerQuestion, withCommandClient } = load();
      await withCommandClient(target(), 'answer', async (client) => {
        const r = await answerQuestion(client, id, toolCallId, answer, { by: 'cli' });
        console.log(`${r.toolCallId}: answered`);
      });
    });
}
