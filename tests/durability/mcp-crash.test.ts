/**
 * An MCP call survives its worker: a worker process SIGKILLed while server-everything runs a
 * long operation for it is noticed by the heartbeat timeout, a second worker process runs the call
 * again with the same idempotency key, and the run finishes. The recording relay in front of the
 * server (Streamable HTTP) shows both `tools/call` requests as the server received them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { IDEMPOTENCY_META_KEY } from '../../activities/mcp/call';
import type { AgentInput, AgentResult } from '../../shared/agent';
import type { HttpMcpServer, McpRelay } from '../../testkit/mcp';
import { startEverythingHttp, startRelay } from '../../testkit/mcp';
import { startWorkerProcess } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { tempDir, uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const TOOL = 'trigger-long-running-operation';
const configFile = path.join(tempDir('mcp-crash'), 'config.json');
let http: HttpMcpServer;
let relay: McpRelay;

const dev = useDevServer({ queue: 'mcp-crash' });

beforeAll(async () => {
  http = await startEverythingHttp();
  relay = await startRelay(http.url);
  fs.writeFileSync(configFile, JSON.stringify({ mcp: { servers: { remote: { url: relay.url } } } }));
}, 60_000);

afterAll(async () => {
  await relay?.close();
  await http?.stop();
});

async function until(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} never happened`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('a worker SIGKILLed mid-call: another worker retries the call with the same idempotency key, and the run answers', async () => {
  const env = {
    TEMPORAL_ADDRESS: dev.fx.address,
    DURABLE_AGENT_TASK_QUEUE: dev.taskQueue,
    DURABLE_AGENT_CONFIG: configFile,
  };
  const first = await startWorkerProcess(env);
  const workflowId = uid('mcp-crash-run');
  const input: AgentInput = {
    task: 'a long MCP operation',
    tools: [`mcp:remote/${TOOL}`],
    model: {
      provider: 'scripted',
      turns: [callTurn([TOOL, { duration: 3, steps: 3 }, 'op']), answerTurn('{{result:op}}')],
    },
  };
  const handle = await dev.fx.client.workflow.start('agentWorkflow', {
    taskQueue: dev.taskQueue,
    workflowId,
    args: [input],
  });

  // The server has the request and works on it (3 s): the worker dies under it.
  await until(() => relay.calls().length === 1, 'the first tools/call');
  first.child.kill('SIGKILL');
  await first.exited;

  const second = await startWorkerProcess(env);
  try {
    const result = (await handle.result()) as AgentResult;
    expect(result.stopReason).toBe('final_answer');
    expect(result.answer).toBe('Long running operation completed. Duration: 3 seconds, Steps: 3.');

    // Two requests reached the server, the second from the other worker, with one key.
    const calls = relay.calls();
    expect(calls.map((c) => c.params?.name)).toEqual([TOOL, TOOL]);
    expect(calls.map((c) => c.params?.arguments)).toEqual([
      { duration: 3, steps: 3 },
      { duration: 3, steps: 3 },
    ]);
    expect(calls.map((c) => c.params?._meta?.[IDEMPOTENCY_META_KEY])).toEqual([
      `${workflowId}/op`,
      `${workflowId}/op`,
    ]);
    // Each worker opened its own session: the second request is not a replay of the first.
    expect(calls[0]?.headers['mcp-session-id']).toBeDefined();
    expect(calls[1]?.headers['mcp-session-id']).not.toBe(calls[0]?.headers['mcp-session-id']);

    // One activity, two attempts; the first lost to the heartbeat timeout.
    const events = (await handle.fetchHistory()).events ?? [];
    const scheduled = events.filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === `mcp:remote/${TOOL}`,
    );
    expect(scheduled).toHaveLength(1);
    const started = events.find(
      (e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled[0]?.eventId),
    )?.activityTaskStartedEventAttributes;
    expect(started?.attempt).toBe(2);
    expect(started?.lastFailure?.timeoutFailureInfo?.timeoutType).toBe(
      temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT,
    );
    expect(
      second.lines.some(
        (l) =>
          l.msg === 'activity completed' &&
          l.workflowId === workflowId &&
          l.activityType === `mcp:remote/${TOOL}`,
      ),
    ).toBe(true);
  } finally {
    second.child.kill('SIGTERM');
    await second.exited;
  }
}, 120_000);
