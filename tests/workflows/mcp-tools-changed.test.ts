/**
 * A server's tool list changes mid-run, and the run discovers again. None of the npm reference
 * servers changes its tool list after initialization (server-everything registers its conditional
 * tools once, when the session is initialized, before the first tools/list; server-filesystem and
 * server-memory register theirs at start), so the change here is a redeploy: the worker that
 * finishes the run serves the same server name with another reference server. The first call
 * there reports another `toolsDigest` than the run's catalog holds; the run discovers again before
 * its next model call, and the model calls a tool only the new list has.
 */
import path from 'node:path';
import type { Worker } from '@temporalio/worker';
import { closeMcpConnections } from '../../activities/mcp';
import type { McpConfig } from '../../activities/mcp/config';
import type { AgentInput, AgentResult } from '../../shared/agent';
import { approveToolCallUpdate, eventsQuery, stateQuery } from '../../shared/agent';
import { createAgentWorker } from '../../workers/worker';
import { notificationDelivery } from '../../client/deliver';
import { scheduledActivityTypes } from '../../testkit/history';
import { everythingServer, mcpConfig, memoryServer } from '../../testkit/mcp';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { tempDir, testConfig, uid, workflowBundle } from '../../testkit/temporal';
import { useLocalEnv } from '../support/environments';

const temporal = useLocalEnv();
const dir = tempDir('mcp-tools-changed');

afterAll(() => closeMcpConnections());

async function startWorker(taskQueue: string, mcp: McpConfig): Promise<Worker> {
  return createAgentWorker({
    connection: temporal.env.nativeConnection,
    namespace: temporal.env.namespace ?? 'default',
    config: testConfig({ mcp, taskQueue }),
    taskQueue,
    workflowBundle: await workflowBundle(),
    deliver: notificationDelivery(temporal.env.client, taskQueue),
  });
}

test('a call that sees another tool list makes the run discover again; the model then calls a tool of the new list', async () => {
  const taskQueue = uid('mcp-changed');
  const before = mcpConfig({ svc: everythingServer(uid('everything-marker')) });
  const after = mcpConfig({ svc: memoryServer(path.join(dir, 'memory.jsonl')) });
  const input: AgentInput = {
    task: 'use the svc server',
    tools: ['mcp:svc'],
    // The second call waits for approval: the worker is redeployed meanwhile.
    policy: { approvals: { tools: { 'mcp:svc/get-sum': 'always', 'mcp:svc/read_graph': 'never' } } },
    model: {
      provider: 'scripted',
      turns: [
        callTurn(['echo', { message: 'before' }, 'e1']),
        callTurn(['get-sum', { a: 1, b: 2 }, 'sum']),
        callTurn(['read_graph', {}, 'graph']),
        answerTurn('{{result:e1}} | {{result:sum}} | {{result:graph}}'),
      ],
    },
  };
  const handle = await temporal.env.client.workflow.start('agentWorkflow', {
    taskQueue,
    workflowId: uid('mcp-changed'),
    args: [input],
  });

  const first = await startWorker(taskQueue, before);
  await first.runUntil(async () => {
    for (let i = 0; i < 600; i++) {
      const state = await handle.query(stateQuery);
      // And the approval request delivered: a worker stopping with a delivery in flight waits for it.
      const pending = (await handle.describe()).raw.pendingActivities ?? [];
      if (state.approvals?.some((a) => a.toolCallId === 'sum') && pending.length === 0) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the get-sum call never waited for approval');
  });
  // The same server name now runs another server, with other tools.
  await closeMcpConnections();
  const second = await startWorker(taskQueue, after);
  const { result, events } = await second.runUntil(async () => {
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ toolCallId: 'sum', approve: true }] });
    return { result: (await handle.result()) as AgentResult, events: await handle.query(eventsQuery, {}) };
  });

  expect(result.stopReason).toBe('final_answer');
  const [echo, sum, graph] = (result.answer ?? '').split(' | ');
  expect(echo).toBe('Echo: before');
  // The tool is gone: the model is told so.
  expect(sum).toContain('Tool get-sum not found');
  // The tool only the new list has ran.
  expect(JSON.parse(graph ?? '')).toEqual({ entities: [], relations: [] });

  // (Events naming a tool say why discovery skipped it.)
  const lists = events.filter((e) => e.kind === 'mcp_tools' && !e.tool).map((e) => e.text ?? '');
  expect(lists).toHaveLength(2);
  expect(lists[0]).toMatch(/^MCP tools: .*\becho\b.*\bget-sum\b/);
  expect(lists[0]).not.toContain('read_graph');
  expect(lists[1]).toMatch(/^MCP tools changed, now: .*\bread_graph\b/);
  expect(lists[1]).not.toContain('echo');
  // Discovered again after the call that saw the change, before the model's next turn.
  const scheduled = scheduledActivityTypes(await handle.fetchHistory());
  // (The approval request is delivered as notifications, in between.)
  expect(scheduled.filter((t) => t !== 'deliverNotification')).toEqual([
    'mcpDiscover',
    'callModel',
    'mcp:svc/echo',
    'callModel',
    'mcp:svc/get-sum',
    'mcpDiscover',
    'callModel',
    'mcp:svc/read_graph',
    'callModel',
  ]);
}, 120_000);
