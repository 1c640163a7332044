/**
 * `run` in a terminal: a question the run (or one of its sub-agents) asks is prompted for right
 * there, and the typed answer is sent like any other (`by: cli`). A refused answer shows the run's
 * reason and asks again; a question answered from another door meanwhile stops its prompt.
 */
import readline from 'node:readline/promises';
import type { Client } from '@temporalio/client';
import type { OutputSchema } from '../shared/agent/output-schema';
import { describeAnswerSchema } from '../shared/agent/questions';
import { printable } from '../shared/identifiers';
import type { RunQuestion } from '../client/questions';
import { QuestionRequestError, answerQuestion, listQuestions } from '../client/questions';

/** How often the run is read for new questions while it runs. */
const POLL_MS = 400;

/**
 * The value a typed line stands for under `schema`: a choice by its number or its text, yes/no
 * for a boolean, a number, text as it is, anything else as JSON.
 */
export function answerFromLine(
  schema: OutputSchema | undefined,
  line: string,
): { value: unknown } | { error: string } {
  const text = line.trim();
  if (!schema) return { value: line };
  if (Array.isArray(schema.enum)) {
    const choices = schema.enum as unknown[];
    const n = Number(text);
    if (Number.isInteger(n) && n >= 1 && n <= choices.length && !choices.includes(n))
      return { value: choices[n - 1] };
    const same =
      choices.find((c) => String(c) === text) ??
      choices.find((c) => String(c).toLowerCase() === text.toLowerCase());
    return same !== undefined ? { value: same } : { value: text };
  }
  if (schema.type === 'boolean') {
    if (/^(y|yes|true)$/i.test(text)) return { value: true };
    if (/^(n|no|false)$/i.test(text)) return { value: false };
    return { error: 'answer yes or no' };
  }
  if (schema.type === 'number' || schema.type === 'integer') {
    const n = Number(text);
    return text && Number.isFinite(n) ? { value: n } : { error: `"${text}" is not a number` };
  }
  if (schema.type === 'string') return { value: line };
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (err) {
    return { error: `not valid JSON: ${(err as Error).message}` };
  }
}

/** A question as a terminal prompts it: the question, what the answer must be, the choices numbered. */
function promptText(q: RunQuestion): string {
  const schema = q.schema;
  const of = q.parent ? ` (sub-agent ${q.parent.agent})` : '';
  const lines = [`\n? ${printable(q.question, true)}${of}`];
  if (Array.isArray(schema?.enum))
    (schema.enum as unknown[]).forEach((c, i) => lines.push(`  ${i + 1}) ${printable(String(c), true)}`));
  else lines.push(`  (${describeAnswerSchema(schema)})`);
  return `${lines.join('\n')}\n> `;
}

/** Prompts for the run's questions until stopped; returns the stop. */
export function promptForQuestions(
  client: Client,
  workflowId: string,
  io: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream },
): { stop(): void } {
  const rl = readline.createInterface({ input: io.input, output: io.output, terminal: true });
  const done = new Set<string>();
  let stopped = false;
  const say = (text: string) => io.output.write(`${text}\n`);

  const ask = async (q: RunQuestion): Promise<void> => {
    const key = `${q.workflowId}\n${q.toolCallId}`;
    // Answered from another door: the prompt stops and says so.
    const gone = new AbortController();
    const watch = setInterval(() => {
      void listQuestions(client, { workflowId })
        .then((open) => {
          if (!open.some((o) => `${o.workflowId}\n${o.toolCallId}` === key)) gone.abort();
        })
        .catch(() => gone.abort());
    }, POLL_MS);
    try {
      for (;;) {
        let line: string;
        try {
          line = await rl.question(promptText(q), { signal: gone.signal });
        } catch {
          if (!stopped) say(`(${q.toolCallId} no longer waits: answered elsewhere or ended)`);
          return;
        }
        const read = answerFromLine(q.schema, line);
        if ('error' in read) {
          say(`✗ ${read.error}`);
          continue;
        }
        try {
          await answerQuestion(client, q.workflowId, q.toolCallId, read.value, { by: 'cli' });
          say(`✓ answered ${q.toolCallId}`);
          return;
        } catch (err) {
          if (!(err instanceof QuestionRequestError)) throw err;
          say(`✗ ${printable(err.message, true)}`);
          if (err.code !== 'invalid_answer') return;
        }
      }
    } finally {
      clearInterval(watch);
      done.add(key);
    }
  };

  void (async () => {
    while (!stopped) {
      try {
        const open = await listQuestions(client, { workflowId, kind: 'question' });
        const next = open.find((q) => !done.has(`${q.workflowId}\n${q.toolCallId}`));
        if (next) {
          await ask(next);
          continue;
        }
      } catch (err) {
        // The run ended (or is not readable yet): the watch says how it ended.
        if (err instanceof QuestionRequestError && err.code === 'finished') return;
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  })();

  return {
    stop() {
      stopped = true;
      rl.close();
    },
  };
}
