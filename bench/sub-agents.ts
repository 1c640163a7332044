/**
 * What a sub-agent call adds over a plain tool call, on the real dev server with one in-process
 * agent worker and the scripted model. Two kinds of run, timed end to end (client start → result):
 *  (A) the parent calls `calculator` once, then answers;
 *  (B) the parent calls a sub-agent once (a child `agentWorkflow` whose own scripted model answers
 *      at once: one turn, no tools), then answers.
 * Prints p50/p95 of each, of the difference B − A (the i-th B run against the i-th A run), the call
 * itself as the parent's history saw it, and the history events of the parent (and the child).
 *
 * Runs go in turns (one of each kind, round after round) after unrecorded warm-up rounds, so both
 * kinds meet the same worker state.
 *
 *   npx tsx bench/sub-agents.ts [--runs 30] [--warm-up 3]
 */
import { performance } from 'node:perf_hooks';
import { Command, InvalidArgumentError } from 'commander';
import type { WorkflowHandle } from '@temporalio/client';
import type { AgentInput, AgentResult } from '../shared/agent';
import { childWorkflowId } from '../shared/agent';
import type { DevServerFixture } from '../testkit/dev-server';
import { startDevServerFixture, withDevWorker } from '../testkit/dev-server';
import { answerTurn, callTurn } from '../testkit/scripts';
import { uid } from '../testkit/temporal';
import { percentile, summary } from './stats';

function count(name: string, min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min)
      throw new InvalidArgumentError(`${name} must be an integer ≥ ${min}`);
    return n;
  };
}

type Kind = 'tool' | 'agent';
type HistoryEvents = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>;

/** One kind of run's samples. */
interface Lane {
  kind: Kind;
  /** Client start → result, ms. */
  wall: number[];
  /** The call in the parent's history: scheduled/initiated → the workflow task that reads its result. */
  call: number[];
  /** History events of the parent run. */
  events: number[];
  /** History events of the child run (B only). */
  childEvents: number[];
  /** The child run on the server: started → completed (B only). */
  childRun: number[];
}

/** The call's id, so the child's workflow id is known: `<parentId>/agent/<CALL_ID>`. */
const CALL_ID = 'call1';

function input(kind: Kind): AgentInput {
  if (kind === 'tool') {
    return {
      task: 'bench',
      tools: ['calculator'],
      model: {
        provider: 'scripted',
        turns: [callTurn(['calculator', { expression: '1+1' }, CALL_ID]), answerTurn('done')],
      },
    };
  }
  return {
    task: 'bench',
    model: {
      provider: 'scripted',
      turns: [
        callTurn(['helper', { task: 'answer at once' }, CALL_ID]),
        answerTurn('done: {{result:call1}}'),
      ],
    },
    agents: {
      helper: {
        description: 'Answers at once',
        model: { provider: 'scripted', turns: [answerTurn('ok')] },
        tools: [],
      },
    },
  };
}

const eventMs = (e: HistoryEvents[number] | undefined) =>
  Number(e?.eventTime?.seconds ?? 0) * 1000 + (e?.eventTime?.nanos ?? 0) / 1e6;

/** From the event at `from` to the first workflow task started after the event at `done`. */
function untilRead(history: HistoryEvents, from: number, done: number): number {
  const next = history.find((w, j) => j > done && w.workflowTaskStartedEventAttributes);
  if (from < 0 || done < 0 || !next) throw new Error('the call is not in the parent’s history');
  return eventMs(next) - eventMs(history[from]);
}

/** The one call of the run in the parent's history, in server time. */
function callTime(history: HistoryEvents, kind: Kind): number {
  if (kind === 'tool') {
    const from = history.findIndex(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'calculator',
    );
    const id = String(history[from]?.eventId);
    const done = history.findIndex(
      (e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId) === id,
    );
    return untilRead(history, from, done);
  }
  const from = history.findIndex((e) => e.startChildWorkflowExecutionInitiatedEventAttributes);
  const id = String(history[from]?.eventId);
  const done = history.findIndex(
    (e) => String(e.childWorkflowExecutionCompletedEventAttributes?.initiatedEventId) === id,
  );
  return untilRead(history, from, done);
}

async function run(fx: DevServerFixture, taskQueue: string, lane: Lane, keep: boolean): Promise<void> {
  const workflowId = uid(`bench-sub-${lane.kind}`);
  const t0 = performance.now();
  const handle = await fx.client.workflow.start('agentWorkflow', {
    taskQueue,
    workflowId,
    args: [input(lane.kind)],
  });
  const result = (await handle.result()) as AgentResult;
  const wall = performance.now() - t0;
  if (result.stopReason !== 'final_answer' || result.steps !== 2)
    throw new Error(`${lane.kind}: expected a final answer after 2 steps: ${JSON.stringify(result)}`);
  if (lane.kind === 'agent' && result.answer !== 'done: ok')
    throw new Error(`agent: the child's answer did not come back: ${JSON.stringify(result.answer)}`);
  if (!keep) return;
  lane.wall.push(wall);
  const history = (await handle.fetchHistory()).events ?? [];
  lane.events.push(history.length);
  lane.call.push(callTime(history, lane.kind));
  if (lane.kind === 'agent') {
    const child = await fx.client.workflow.getHandle(childWorkflowId(workflowId, CALL_ID)).fetchHistory();
    const events = child.events ?? [];
    lane.childEvents.push(events.length);
    lane.childRun.push(eventMs(events[events.length - 1]) - eventMs(events[0]));
  }
}

async function main(): Promise<void> {
  const o = new Command('sub-agents')
    .description('added latency of a sub-agent call over a plain tool call')
    .option('--runs <n>', 'recorded runs of each kind', count('--runs', 1), 30)
    .option('--warm-up <n>', 'unrecorded rounds first', count('--warm-up', 0), 3)
    .parse()
    .opts<{ runs: number; warmUp: number }>();

  const lane = (kind: Kind): Lane => ({
    kind,
    wall: [],
    call: [],
    events: [],
    childEvents: [],
    childRun: [],
  });
  const tool = lane('tool');
  const agent = lane('agent');
  const fx = await startDevServerFixture();
  try {
    await withDevWorker(fx, async (taskQueue) => {
      for (let r = 0; r < o.warmUp + o.runs; r++) {
        const keep = r >= o.warmUp;
        await run(fx, taskQueue, tool, keep);
        await run(fx, taskQueue, agent, keep);
      }
    });
  } finally {
    await fx.stop();
  }

  const diff = agent.wall.map((b, i) => b - (tool.wall[i] as number));
  const callDiff = agent.call.map((b, i) => b - (tool.call[i] as number));
  const p = (v: number[], q: number) => percentile(v, q).toFixed(2);
  const row = (label: string, figure: string, note = '') =>
    console.log(`${label.padEnd(44)}${figure}${note}`);
  const events = (v: number[]) =>
    Math.min(...v) === Math.max(...v) ? `${v[0]}` : `${Math.min(...v)}–${Math.max(...v)}`;
  console.log(
    `Sub-agent call over a plain tool call: ${o.runs} runs of each kind after ${o.warmUp} warm-up rounds, ` +
      `in turns; scripted model, one in-process agent worker, dev server`,
  );
  row('(A) calculator once, then answer:', summary(tool.wall), '  (client start → result)');
  row('(B) sub-agent once, then answer:', summary(agent.wall), '  (the child answers in one turn, no tools)');
  row(
    'added latency of a sub-agent call (B − A):',
    `p50 ${p(diff, 50)} ms, p95 ${p(diff, 95)} ms`,
    `  (run by run; p50(B) − p50(A) = ${(percentile(agent.wall, 50) - percentile(tool.wall, 50)).toFixed(2)} ms)`,
  );
  console.log('goal (issue): report the added latency of starting a sub-agent over a plain tool call, p50');
  row(
    'the call in the parent’s history, (A):',
    summary(tool.call),
    '  (activity scheduled → task that reads it)',
  );
  row(
    'the call in the parent’s history, (B):',
    summary(agent.call),
    '  (child initiated → task that reads it)',
  );
  row(
    'the call, B − A:',
    `p50 ${p(callDiff, 50)} ms, p95 ${p(callDiff, 95)} ms`,
    '  (run by run, in the parents’ histories)',
  );
  row('the child run on the server (B):', summary(agent.childRun), '  (started → completed)');
  row(
    'history events of the parent run:',
    `(A) ${events(tool.events)}, (B) ${events(agent.events)}`,
    `; of the child run (B): ${events(agent.childEvents)}`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
