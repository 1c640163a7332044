/**
 * Tools of the user's own (`defineTool` + the plugin) in agent runs, on the time-skipping server:
 * offered to the model, checked in the workflow, run as activities named after them, approvals by
 * their declaration and by the run's policy, bad results and unknown names each a clear error.
 */
import { WorkflowFailedError } from '@temporalio/client';
import type { ApplicationFailure } from '@temporalio/common';
import type { Worker } from '@temporalio/worker';
import { z } from 'zod';
import type { AgentInput, AgentResult } from '../../shared/agent';
import { approveToolCallUpdate, eventsQuery, stateQuery, transcriptQuery } from '../../shared/agent';
import type { Tool, ToolRunContext } from '../../activities/own-tools/define';
import { defineTool } from '../../activities/own-tools/define';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { uid, workflowBundle } from '../../testkit/temporal';
import { agentWorkerOn } from '../../testkit/agent-worker';
import { localActivityTypes, scheduledActivityTypes } from '../../testkit/history';
import { useTimeSkippingEnv } from '../support/environments';

const temporal = useTimeSkippingEnv();

/** What the tools of one test saw. */
const seen: { args: unknown; key: string; attempt: number }[] = [];

const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Looks up an order by its id and returns its status.',
  input: z.object({
    orderId: z
      .string()
      .regex(/^A-\d+$/)
      .describe('The order id, e.g. A-17'),
    // Only the worker's zod schema knows this: the JSON Schema the run checks cannot say it.
    verbose: z.boolean().default(false),
  }),
  run: async (args, ctx: ToolRunContext) => {
    seen.push({ args, key: ctx.idempotencyKey, attempt: ctx.attempt });
    return { orderId: args.orderId, status: 'shipped', verbose: args.verbose };
  },
});

const refund = defineTool({
  name: 'refund_order',
  description: 'Refunds an order.',
  input: z.object({ orderId: z.string().refine((id) => id !== 'A-0', 'order A-0 cannot be refunded') }),
  approval: 'always',
  run: ({ orderId }) => `refunded ${orderId}`,
});

const huge = defineTool({
  name: 'dump_everything',
  description: 'Returns far too much.',
  input: z.object({}),
  run: () => 'x'.repeat(2 * 1024 * 1024),
});

const throwsString = defineTool({
  name: 'throws_string',
  description: 'Throws a string.',
  input: z.object({}),
  maxAttempts: 1,
  run: () => {
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- what the test is about
    throw 'boom';
  },
});

const readTicket = defineTool({
  name: 'read_ticket',
  description: 'Reads a support ticket written by a customer.',
  input: z.object({ id: z.number().int() }),
  untrusted: true,
  local: true,
  run: ({ id }) => `ticket ${id}: please refund me`,
});

const TOOLS: Tool[] = [lookupOrder, refund, huge, throwsString, readTicket] as Tool[];

async function run(input: AgentInput, during?: (id: string) => Promise<void>) {
  const taskQueue = uid('tq');
  const worker: Worker = await agentWorkerOn(temporal.env, taskQueue, { tools: TOOLS });
  return worker.runUntil(async () => {
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue,
      workflowId: uid('own'),
      args: [input],
    });
    if (during) await during(handle.workflowId);
    const result = (await handle.result()) as AgentResult;
    const history = await handle.fetchHistory();
    const transcript = await handle.query(transcriptQuery, {});
    const events = await handle.query(eventsQuery, { since: 0 });
    const state = await handle.query(stateQuery);
    return { result, history, transcript, events, state, id: handle.workflowId };
  });
}

test('an own tool is offered, checked in the workflow, run as its own activity, and its result reaches the model', async () => {
  seen.length = 0;
  const out = await run({
    task: 'Where is order A-17?',
    tools: ['lookup_order', 'get_time'],
    model: {
      provider: 'scripted',
      turns: [
        // Fails the run's JSON Schema check: no activity, the model is told.
        callTurn(['lookup_order', { orderId: 17 }, 'bad']),
        callTurn(['lookup_order', { orderId: 'A-17' }, 'good']),
        answerTurn('Order {{last_tool_results}}'),
      ],
    },
  });
  expect(out.result.answer).toContain('"status":"shipped"');
  // The worker's schema filled its default: the run's check did not need to.
  expect(seen).toEqual([{ args: { orderId: 'A-17', verbose: false }, key: `${out.id}/good`, attempt: 1 }]);
  expect(scheduledActivityTypes(out.history).filter((t) => t === 'lookup_order')).toHaveLength(1);
  expect(scheduledActivityTypes(out.history)).toContain('describeOwnTools');
  const rejected = out.events.find((e) => e.kind === 'tool_rejected');
  expect(rejected?.text).toMatch(/Invalid arguments for lookup_order: orderId/);
  expect(out.events.some((e) => e.kind === 'tool_started' && e.tool === 'lookup_order')).toBe(true);
  expect(JSON.stringify(out.transcript)).toContain('lookup_order');
});

test('a tool that asks for approval waits for it; a run whose policy says "never" does not', async () => {
  const turns = [callTurn(['refund_order', { orderId: 'A-9' }, 'r1']), answerTurn('{{last_tool_results}}')];
  const waited = await run(
    { task: 'Refund A-9', tools: ['refund_order'], model: { provider: 'scripted', turns } },
    async (id) => {
      const handle = temporal.env.client.workflow.getHandle(id);
      for (;;) {
        const state = await handle.query(stateQuery);
        if (state.approvals?.length) {
          expect(state.approvals[0]?.reason).toMatch(/refund_order tool asks for approval/);
          break;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      await handle.executeUpdate(approveToolCallUpdate, { args: [{ toolCallId: 'r1', approve: true }] });
    },
  );
  expect(waited.result.answer).toBe('refunded A-9');
  const policyWins = await run({
    task: 'Refund A-9',
    tools: ['refund_order'],
    model: { provider: 'scripted', turns },
    policy: { approvals: { tools: { refund_order: 'never' } } },
  });
  expect(policyWins.result.answer).toBe('refunded A-9');
  expect(policyWins.events.some((e) => e.kind === 'approval_requested')).toBe(false);
});

test('a refinement only the worker knows, an oversized result and a thrown string each reach the model as errors; the run goes on', async () => {
  const out = await run({
    task: 'Try everything',
    tools: ['refund_order', 'dump_everything', 'throws_string'],
    policy: { approvals: { tools: { refund_order: 'never' } } },
    model: {
      provider: 'scripted',
      turns: [
        callTurn(['refund_order', { orderId: 'A-0' }], ['dump_everything', {}], ['throws_string', {}]),
        answerTurn('done: {{last_tool_results}}'),
      ],
    },
  });
  expect(out.result.stopReason).toBe('final_answer');
  const finished = out.events.filter((e) => e.kind === 'tool_finished');
  const text = (tool: string) => finished.find((e) => e.tool === tool)?.text ?? '';
  expect(text('refund_order')).toMatch(
    /Invalid arguments for refund_order: orderId: order A-0 cannot be refunded/,
  );
  expect(text('dump_everything')).toMatch(/Tool "dump_everything" returned 2 MiB, more than the 1 MiB/);
  expect(text('throws_string')).toMatch(/Tool "throws_string" threw the string "boom" instead of an Error/);
});

test('a local own tool runs as a local activity when the policy allows, and its untrusted result marks the run', async () => {
  const out = await run({
    task: 'Read ticket 4',
    tools: ['read_ticket'],
    policy: { localActivities: 'tools' },
    model: { provider: 'scripted', turns: [callTurn(['read_ticket', { id: 4 }]), answerTurn('read')] },
  });
  expect(localActivityTypes(out.history)).toContain('read_ticket');
  expect(scheduledActivityTypes(out.history)).not.toContain('read_ticket');
  expect(out.state.untrusted).toMatch(/read_ticket result at step 1/);
});

test('a run naming a tool the worker does not have fails at once, naming the tools there are', async () => {
  const err = await run({
    task: 'x',
    tools: ['lookup_ordr'],
    model: { provider: 'scripted', turns: [answerTurn('never')] },
  }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause as ApplicationFailure;
  expect(cause.type).toBe('InvalidAgentInput');
  expect(cause.nonRetryable).toBe(true);
  expect(cause.message).toMatch(
    /unknown tool "lookup_ordr" \(did you mean "lookup_order"\?\): this worker's own tools are lookup_order, refund_order/,
  );
});

test('the same workflow bundle serves runs with and without own tools (no rebuild per tool set)', async () => {
  const bundle = await workflowBundle();
  const taskQueue = uid('tq');
  // A worker with no own tools at all, on the shared bundle, still runs built-in runs.
  const worker = await agentWorkerOn(temporal.env, taskQueue, { workflowBundle: bundle });
  const result = await worker.runUntil(
    temporal.env.client.workflow.execute('agentWorkflow', {
      taskQueue,
      workflowId: uid('builtin'),
      args: [
        { task: 'x', tools: ['calculator'], model: { provider: 'scripted', turns: [answerTurn('ok')] } },
      ],
    }),
  );
  expect((result as AgentResult).answer).toBe('ok');
});
