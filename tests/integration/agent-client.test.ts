/**
 * The client SDK (AgentClient) on a real dev server, with a worker of the plugin and a tool of its
 * own: start (the input checked first), events as data, an approval, a question answered once,
 * the result, transcript, notifications, replay and eval; each wrong request a typed error.
 */
import { z } from 'zod';
import { defineTool } from '../../activities/own-tools/define';
import { AgentClient, AgentClientError } from '../../client/agent-client';
import type { AgentEvent } from '../../shared/agent';
import { agentWorkerOn } from '../../testkit/agent-worker';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { uid } from '../../testkit/temporal';
import { useLocalEnv } from '../support/environments';

const temporal = useLocalEnv();
const calls: string[] = [];
const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Looks up an order.',
  input: z.object({ orderId: z.string() }),
  approval: 'always',
  run: ({ orderId }, ctx) => {
    calls.push(ctx.idempotencyKey);
    return { orderId, status: 'shipped' };
  },
});

async function withClient<T>(fn: (agents: AgentClient) => Promise<T>): Promise<T> {
  const taskQueue = uid('tq');
  const worker = await agentWorkerOn(temporal.env, taskQueue, { tools: [lookupOrder] });
  return worker.runUntil(fn(new AgentClient({ client: temporal.env.client, taskQueue })));
}

async function code(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AgentClientError);
  return (err as AgentClientError).code;
}

test('a run from start to answer: events as data, an own tool approved, a question answered once, result, transcript, replay, eval', async () => {
  await withClient(async (agents) => {
    const scripted = {
      provider: 'scripted' as const,
      turns: [
        callTurn(['lookup_order', { orderId: 'A-17' }, 'look']),
        callTurn(['ask_user', { question: 'Refund it?', schema: { type: 'boolean' } }, 'ask']),
        answerTurn('Order A-17: {{last_tool_results}}'),
      ],
    };
    const run = await agents.start({
      task: 'Check A-17',
      model: scripted,
      tools: ['lookup_order', 'ask_user'],
    });
    const seen: AgentEvent[] = [];
    let winner: boolean | undefined;
    for await (const e of run.events({ pollMs: 50 })) {
      seen.push(e);
      if (e.kind === 'approval_requested') await run.approve('look');
      if (e.kind === 'tool_started' && e.tool === 'ask_user') {
        // The question may not be listed yet when its start event is seen.
        let waiting = await run.questions();
        while (waiting.length === 0) waiting = await run.questions();
        expect(waiting[0]).toMatchObject({ toolCallId: 'ask', question: 'Refund it?' });
        expect(await code(run.answer('ask', 'yes'))).toBe('invalid_input');
        // Two answers at once: either may win, the other is refused and never enters the run.
        const sent = [true, false];
        const settled = await Promise.allSettled(sent.map((v) => run.answer('ask', v)));
        const won = settled.findIndex((s) => s.status === 'fulfilled');
        const lost = settled[1 - won];
        expect(won).toBeGreaterThanOrEqual(0);
        expect(lost?.status).toBe('rejected');
        const refusal = (lost as PromiseRejectedResult).reason as unknown;
        expect(refusal).toBeInstanceOf(AgentClientError);
        winner = sent[won];
        // Refused by the question (already answered), or by the run that has finished with the winner.
        seen.push({ kind: 'error', text: (refusal as AgentClientError).code } as AgentEvent);
      }
    }
    const kinds = seen.map((e) => e.kind);
    expect(kinds).toEqual(expect.arrayContaining(['approval_requested', 'tool_finished', 'final_answer']));
    expect(['already_answered', 'finished']).toContain(seen.find((e) => e.kind === 'error')?.text);
    const result = await run.result();
    expect(result.answer).toBe(`Order A-17: ${winner}`);
    expect(calls).toEqual([`${run.id}/look`]);
    expect((await run.state()).status).toBe('completed');
    expect(JSON.stringify(await run.transcript())).toContain('lookup_order');
    expect(await run.replay()).toEqual({ workflowId: run.id, ok: true });
    // eval reads the own tool from the run's recorded model input, and the scripted model decides the same.
    const verdict = await run.eval({});
    expect(verdict.steps[0]).toMatchObject({ sameTool: true, sameArgs: true });
  });
});

test('each wrong request is a typed error that says what to fix, and nothing starts', async () => {
  await withClient(async (agents) => {
    const before = await temporal.env.client.workflow.count();
    expect(
      await code(agents.start({ task: '', model: { provider: 'scripted', turns: [answerTurn('x')] } })),
    ).toBe('invalid_input');
    await expect(
      agents.start({
        task: 'x',
        model: { provider: 'scripted', turns: [answerTurn('x')] },
        tools: ['Bad Name'],
      }),
    ).rejects.toThrow(/Invalid run: tools: unknown tool "Bad Name"/);
    expect((await temporal.env.client.workflow.count()).count).toBe(before.count);
    const run = await agents.start(
      { task: 'x', model: { provider: 'scripted', turns: [answerTurn('done')] } },
      { id: uid('client') },
    );
    await run.result();
    expect(
      await code(
        agents.start(
          { task: 'y', model: { provider: 'scripted', turns: [answerTurn('x')] } },
          { id: run.id },
        ),
      ),
    ).toBe('id_taken');
    expect(await code(run.message('too late'))).toBe('finished');
    expect(await code(run.cancel())).toBe('finished');
    expect(await code(agents.run(uid('nobody')).state())).toBe('not_found');
    expect(await code(run.message(''))).toBe('invalid_input');
    expect(await code(agents.notify('inbox:someone', { message: '' }))).toBe('invalid_input');
  });
});

test('inboxes: notify, read, mark read', async () => {
  await withClient(async (agents) => {
    const target = `inbox:${uid('u').replace(/[^a-z0-9]/gi, '')}`;
    const sent = await agents.notify(target, { message: 'Backup done', type: 'success' });
    const page = await agents.notifications(target);
    expect(page.notifications.map((n) => [n.message, n.read])).toEqual([['Backup done', false]]);
    await agents.markRead(target, { ids: [sent.id] });
    expect((await agents.notifications(target)).notifications[0]?.read).toBe(true);
  });
});
