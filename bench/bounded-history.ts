/**
 * History per step of long runs with large tool results, on the dev server.
 *
 * 1. A long run (default 1,000 steps) whose every step reads a 60 KB value with `sql_query` on
 *    the embedded sample database: prints the history bytes of steps 10, 100 and 1,000 (each the
 *    mean over the ten steps ending there), the total, the runs of the continue-as-new chain,
 *    the largest payload, and workflow task failures by cause (the goal: none).
 * 2. A run shaped like a long chat with tools (200 model calls in one task, 5 KB tool outputs,
 *    a 100k-token context): prints its total history bytes next to what the previous design (the
 *    whole window in every model call's input, each result twice) would have written for the same
 *    conversation, computed from its content.
 *
 *   npx tsx bench/bounded-history.ts [steps=1000] [chatCalls=200]
 */
import fs from 'node:fs';
import path from 'node:path';
import type { History } from '../client/debug/history';
import { decodePayloads } from '../client/debug/payloads';
import type { AgentInput, AgentResult } from '../shared/agent';
import type { ConversationMessage } from '../shared/conversation';
import type { CallModelInput } from '../shared/model';
import { contentStoreFor } from '../activities/content/config';
import { resolveMessage } from '../activities/model/conversation';
import type { DevServerFixture } from '../testkit/dev-server';
import { startDevServerFixture, withDevWorker } from '../testkit/dev-server';
import { testConfig, tempDir, uid } from '../testkit/temporal';
import { eventBytes, historyBytes, payloadsBytes, workflowTaskFailures } from '../testkit/history';

const STEPS = Number(process.argv[2] ?? 1000);
const CHAT_CALLS = Number(process.argv[3] ?? 200);

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

/** Runs a scripted run to the end and returns every history of its continue-as-new chain. */
async function run(
  fx: DevServerFixture,
  name: string,
  turns: unknown[],
  input: Omit<AgentInput, 'model' | 'task'>,
): Promise<{ histories: History[]; result: AgentResult; seconds: number }> {
  const scripts = tempDir('bench-bounded');
  fs.writeFileSync(path.join(scripts, `${name}.json`), JSON.stringify({ turns }));
  const workflowId = uid(name);
  const started = Date.now();
  let result: AgentResult | undefined;
  let runId: string | undefined;
  await withDevWorker(
    fx,
    async (taskQueue) => {
      const handle = await fx.client.workflow.start('agentWorkflow', {
        taskQueue,
        workflowId,
        args: [{ task: name, model: { provider: 'scripted', script: name }, ...input }],
      });
      runId = handle.firstExecutionRunId;
      result = (await handle.result()) as AgentResult;
    },
    { scriptsDir: scripts },
  );
  const seconds = (Date.now() - started) / 1000;
  const histories: History[] = [];
  while (runId) {
    const h: History = await fx.client.workflow.getHandle(workflowId, runId).fetchHistory();
    histories.push(h);
    runId = h.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return { histories, result: result as AgentResult, seconds };
}

/**
 * Bytes of history per step: each event counts for the step whose model call came last before it,
 * except the continue-as-new boundary (the closing event and the next run's start), counted apart.
 */
function bytesPerStep(histories: History[]): { steps: number[]; boundaries: number[] } {
  const steps: number[] = [];
  const boundaries: number[] = [];
  for (const e of histories.flatMap((h) => h.events ?? [])) {
    if (e.workflowExecutionContinuedAsNewEventAttributes) boundaries.push(eventBytes(e));
    else if (e.workflowExecutionStartedEventAttributes && steps.length)
      boundaries[boundaries.length - 1] = (boundaries.at(-1) ?? 0) + eventBytes(e);
    else {
      if (e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel') steps.push(0);
      if (steps.length) steps[steps.length - 1] = (steps.at(-1) as number) + eventBytes(e);
    }
  }
  return { steps, boundaries };
}

function largestPayload(histories: History[]): number {
  let max = 0;
  for (const e of histories.flatMap((h) => h.events ?? [])) {
    for (const p of [
      e.activityTaskScheduledEventAttributes?.input,
      e.activityTaskCompletedEventAttributes?.result,
      e.workflowExecutionStartedEventAttributes?.input,
      e.workflowExecutionContinuedAsNewEventAttributes?.input,
      e.workflowExecutionSignaledEventAttributes?.input,
    ])
      if (p) max = Math.max(max, payloadsBytes(p));
  }
  return max;
}

/**
 * What the previous design wrote for the same conversation: every model call carried the whole
 * window (up to 200 messages) by value, and every tool result was in history as text and data.
 */
async function previousDesignBytes(histories: History[], perStepOverhead: number): Promise<number> {
  const store = contentStoreFor(testConfig().contentStore);
  const messages: ConversationMessage[] = [];
  let bytes = 0;
  for (const e of histories.flatMap((h) => h.events ?? [])) {
    const a = e.activityTaskScheduledEventAttributes;
    if (a?.activityType?.name !== 'callModel') continue;
    const input = decodePayloads(a.input)[0] as CallModelInput;
    messages.push(...(input.head ?? []), ...input.messages);
    const resolved = await Promise.all(messages.map((m) => resolveMessage(store, m)));
    const window = resolved.length <= 200 ? resolved : [...resolved.slice(0, 2), ...resolved.slice(-198)];
    bytes += Buffer.byteLength(JSON.stringify({ model: input.model, messages: window, tools: input.tools }));
    const last = resolved.at(-1);
    if (last?.role === 'tool') bytes += 2 * Buffer.byteLength(JSON.stringify(last.content));
    bytes += perStepOverhead;
  }
  return bytes;
}

async function main(): Promise<void> {
  const fx = await startDevServerFixture();
  try {
    console.log(`== ${STEPS} steps, each reading a 60 KB value with sql_query (embedded sample database)`);
    const long = await run(
      fx,
      'long60k',
      [
        ...Array.from({ length: STEPS - 1 }, () => ({
          toolCalls: [{ name: 'sql_query', arguments: { sql: 'SELECT repeat(chr(65), 60000) AS big' } }],
        })),
        { content: 'done' },
      ],
      { tools: ['sql_query'], policy: { maxSteps: STEPS + 1 } },
    );
    if (long.result.steps !== STEPS) throw new Error(`expected ${STEPS} steps, got ${long.result.steps}`);
    const { steps: per, boundaries } = bytesPerStep(long.histories);
    const meanEnding = (k: number) => {
      const window = per.slice(Math.max(0, k - 10), k);
      return window.reduce((a, b) => a + b, 0) / window.length;
    };
    for (const k of [10, 100, 1000].filter((k) => k <= STEPS)) {
      console.log(
        `history per step at step ${String(k).padStart(4)}: ${kb(meanEnding(k))} (mean of steps ${Math.max(1, k - 9)}–${k})`,
      );
    }
    const total = long.histories.reduce((n, h) => n + historyBytes(h), 0);
    const boundary = boundaries.length ? boundaries.reduce((a, b) => a + b, 0) / boundaries.length : 0;
    console.log(
      `continue-as-new: ${boundaries.length} times, ${kb(boundary)} each (the carried state, in the closing and the starting event)`,
    );
    console.log(
      `total history: ${kb(total)} in ${long.histories.length} runs, ${kb(total / STEPS)} a step all included, ${long.seconds.toFixed(1)} s`,
    );
    console.log(`largest payload: ${kb(largestPayload(long.histories))} (limit 2,048 KB)`);
    console.log(
      `workflow task failures by cause: ${JSON.stringify(workflowTaskFailures(long.histories))} (goal: {})`,
    );
    console.log('goal: ≤ 10 KB per step, flat from step 10 to step 1,000');

    console.log(
      `\n== a long chat: ${CHAT_CALLS} model calls in one task, 5 KB tool outputs, 100k-token context`,
    );
    const chat = await run(
      fx,
      'chat5k',
      [
        ...Array.from({ length: CHAT_CALLS - 1 }, (_, i) => ({
          content: `Looking at part ${i + 1}.`,
          toolCalls: [
            { name: 'sql_query', arguments: { sql: `SELECT repeat(chr(${66 + (i % 20)}), 5000) AS part` } },
          ],
        })),
        { content: 'All parts read.' },
      ],
      { tools: ['sql_query'], policy: { maxSteps: CHAT_CALLS + 1, contextTokens: 100_000 } },
    );
    const chatTotal = chat.histories.reduce((n, h) => n + historyBytes(h), 0);
    const overhead = Math.min(...bytesPerStep(chat.histories).steps);
    const previous = await previousDesignBytes(chat.histories, overhead);
    console.log(
      `finished: ${chat.result.stopReason} after ${chat.result.steps} model calls, ${chat.seconds.toFixed(1)} s`,
    );
    console.log(`history written: ${kb(chatTotal)} in ${chat.histories.length} runs`);
    console.log(
      `previous design, same conversation (computed): ${kb(previous)} (${(previous / chatTotal).toFixed(1)}×)`,
    );
    console.log(`workflow task failures by cause: ${JSON.stringify(workflowTaskFailures(chat.histories))}`);
  } finally {
    await fx.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
