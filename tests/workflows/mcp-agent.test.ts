/**
 * MCP tools as durable activities, against the reference servers from npm (server-filesystem,
 * server-memory and server-everything, over stdio and Streamable HTTP), on a real dev server with
 * an in-process worker and the scripted model. Nothing is mocked: the relay only forwards and
 * records what our client sends.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Worker } from '@temporalio/worker';
import { WorkflowFailedError } from '@temporalio/client';
import { closeMcpConnections } from '../../activities/mcp';
import type { McpConfig } from '../../activities/mcp/config';
import { IDEMPOTENCY_META_KEY } from '../../activities/mcp/call';
import type { AgentEvent, AgentInput, AgentResult } from '../../shared/agent';
import { approveToolCallUpdate, eventsQuery, stateQuery, transcriptQuery } from '../../shared/agent';
import { createAgentWorker } from '../../workers/worker';
import { notificationDelivery } from '../../client/deliver';
import { localActivityTypes, runChain, scheduledActivityTypes } from '../../testkit/history';
import type { HttpMcpServer, McpRelay } from '../../testkit/mcp';
import {
  everythingServer,
  filesystemServer,
  mcpConfig,
  memoryServer,
  pidsWith,
  startEverythingHttp,
  startRelay,
} from '../../testkit/mcp';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { tempDir, testConfig, uid, workflowBundle } from '../../testkit/temporal';
import { useLocalEnv } from '../support/environments';

const temporal = useLocalEnv();
const dir = tempDir('mcp-files');
const marker = uid('everything-marker');
let http: HttpMcpServer;
let relay: McpRelay;
let mcp: McpConfig;

beforeAll(async () => {
  fs.writeFileSync(path.join(dir, 'plan.md'), '# Plan\nOwner: Ada Lovelace\n');
  http = await startEverythingHttp();
  relay = await startRelay(http.url);
  mcp = mcpConfig({
    files: filesystemServer(dir),
    memory: memoryServer(path.join(dir, 'memory.jsonl')),
    everything: everythingServer(marker, { callTimeoutMs: 1500 }),
    remote: { url: relay.url, headers: { 'X-Test-Token': 'relay-secret-value' } },
  });
}, 60_000);

afterAll(async () => {
  await closeMcpConnections();
  await relay?.close();
  await http?.stop();
});

async function withWorker<T>(fn: (taskQueue: string) => Promise<T>, config = mcp): Promise<T> {
  const taskQueue = uid('mcp-tq');
  const worker: Worker = await createAgentWorker({
    connection: temporal.env.nativeConnection,
    namespace: temporal.env.namespace ?? 'default',
    config: testConfig({ mcp: config, taskQueue }),
    taskQueue,
    workflowBundle: await workflowBundle(),
    deliver: notificationDelivery(temporal.env.client, taskQueue),
  });
  return worker.runUntil(fn(taskQueue));
}

async function run(taskQueue: string, input: AgentInput) {
  const handle = await temporal.env.client.workflow.start('agentWorkflow', {
    taskQueue,
    workflowId: uid('mcp-agent'),
    args: [input],
  });
  const result = (await handle.result()) as AgentResult;
  const events = await handle.query(eventsQuery, {});
  const transcript = await handle.query(transcriptQuery, {});
  const history = await handle.fetchHistory();
  return { handle, result, events, transcript, history, scheduled: scheduledActivityTypes(history) };
}

const finished = (events: AgentEvent[]) => events.filter((e) => e.kind === 'tool_finished');

test('reads a file through server-filesystem and stores an entity in server-memory; each call is one activity named after its tool', async () => {
  const input: AgentInput = {
    task: 'Read the plan and remember its owner.',
    tools: ['mcp:files/read_text_file', 'mcp:memory'],
    policy: { approvals: { tools: { 'mcp:memory/create_entities': 'never' } } },
    model: {
      provider: 'scripted',
      turns: [
        callTurn(['read_text_file', { path: path.join(dir, 'plan.md') }, 'read']),
        callTurn([
          'create_entities',
          { entities: [{ name: 'Ada Lovelace', entityType: 'person', observations: ['owns the plan'] }] },
          'store',
        ]),
        answerTurn('Read: {{result:read}}\nStored: {{result:store}}'),
      ],
    },
  };
  const out = await withWorker((tq) => run(tq, input));
  expect(out.result.stopReason).toBe('final_answer');
  expect(out.result.answer).toContain('Owner: Ada Lovelace');
  expect(out.result.answer).toMatch(/Stored: \[\s*\{\s*"name": "Ada Lovelace"/);
  expect(out.scheduled).toEqual(
    expect.arrayContaining(['mcpDiscover', 'mcp:files/read_text_file', 'mcp:memory/create_entities']),
  );
  expect(out.scheduled.filter((t) => t === 'mcpDiscover')).toHaveLength(1);
  // The server really holds it.
  expect(fs.readFileSync(path.join(dir, 'memory.jsonl'), 'utf8')).toContain('"name":"Ada Lovelace"');
  // The transcript shows both calls with their arguments and results.
  const { transcript } = out;
  const calls = transcript.entries.flatMap((e) => e.toolCalls ?? []);
  expect(calls).toEqual([
    { id: 'read', name: 'read_text_file', args: { path: path.join(dir, 'plan.md') } },
    expect.objectContaining({ id: 'store', name: 'create_entities' }),
  ]);
  const results = transcript.entries.filter((e) => e.role === 'tool').map((e) => [e.name, e.text]);
  expect(results[0]).toEqual(['read_text_file', expect.stringContaining('Owner: Ada Lovelace')]);
  expect(results[1]).toEqual(['create_entities', expect.stringContaining('Ada Lovelace')]);
  // Only the tool that was named is offered from files; every tool of memory is.
  const discovered = out.events.find((e) => e.kind === 'mcp_tools')?.text ?? '';
  expect(discovered).toContain('read_text_file');
  expect(discovered).not.toContain('write_file');
  expect(discovered).toContain('open_nodes');
}, 120_000);

test('unknown servers and tools fail the run at start, saying what exists', async () => {
  await withWorker(async (tq) => {
    const err = await run(tq, {
      task: 't',
      tools: ['mcp:nosuch', 'mcp:files/no_such_tool'],
      model: { provider: 'scripted', turns: [answerTurn('never')] },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const message = ((err as WorkflowFailedError).cause as Error).message;
    expect(message).toContain('unknown MCP server "nosuch"');
    expect(message).toContain('configured servers: files, memory, everything, remote');
    expect(message).toContain(
      'MCP server "files" has no tool "no_such_tool"; its tools: read_file, read_text_file',
    );
  });
}, 120_000);

test('arguments that break the tool’s own JSON Schema go back to the model; no activity runs', async () => {
  const out = await withWorker((tq) =>
    run(tq, {
      task: 't',
      tools: ['mcp:everything/get-sum'],
      model: {
        provider: 'scripted',
        turns: [
          callTurn(['get-sum', { a: 'one', b: 2 }, 'bad']),
          callTurn(['get-sum', { a: 1, b: 2 }, 'good']),
          answerTurn('{{result:good}}'),
        ],
      },
    }),
  );
  const rejected = out.events.filter((e) => e.kind === 'tool_rejected');
  expect(rejected).toEqual([expect.objectContaining({ toolCallId: 'bad', tool: 'get-sum' })]);
  expect(rejected[0]?.text).toContain('Invalid arguments for get-sum: a: expected number, got string "one"');
  expect(out.scheduled.filter((t) => t === 'mcp:everything/get-sum')).toHaveLength(1);
  expect(out.result.answer).toContain('3');
}, 120_000);

test('an isError result and a server that hangs both reach the model as tool errors', async () => {
  const out = await withWorker((tq) =>
    run(tq, {
      task: 't',
      tools: ['mcp:files/read_text_file', 'mcp:everything/trigger-long-running-operation'],
      model: {
        provider: 'scripted',
        turns: [
          callTurn(['read_text_file', { path: path.join(dir, 'missing.md') }, 'missing']),
          callTurn(['trigger-long-running-operation', { duration: 30, steps: 30 }, 'slow']),
          answerTurn('done'),
        ],
      },
    }),
  );
  const [missing, slow] = finished(out.events);
  expect(missing).toEqual(expect.objectContaining({ toolCallId: 'missing', isError: true }));
  expect(missing?.text).toMatch(/ENOENT|no such file/i);
  expect(slow).toEqual(expect.objectContaining({ toolCallId: 'slow', isError: true }));
  expect(slow?.text).toContain('did not answer within 1.5 s');
  expect(out.result.stopReason).toBe('final_answer');
}, 120_000);

test('results map to text: images and binary resources by reference, links and structured content in words', async () => {
  const out = await withWorker((tq) =>
    run(tq, {
      task: 't',
      tools: ['mcp:everything'],
      model: {
        provider: 'scripted',
        turns: [
          callTurn(
            ['get-tiny-image', {}, 'image'],
            ['get-resource-links', { count: 2 }, 'links'],
            ['get-resource-reference', { resourceType: 'Text', resourceId: 1 }, 'embedded'],
            ['get-structured-content', { location: 'New York' }, 'structured'],
          ),
          answerTurn('ok'),
        ],
      },
    }),
  );
  const text = Object.fromEntries(finished(out.events).map((e) => [e.toolCallId, e.text ?? '']));
  expect(text.image).toMatch(/\[image image\/png, [\d.]+ (B|KiB), stored as sha256:[0-9a-f]{64}\]/);
  expect(text.links).toContain('[resource link: Blob Resource 1 <demo://resource/dynamic/blob/1>');
  expect(text.embedded).toMatch(
    /\[resource <demo:\/\/resource\/dynamic\/text\/1> \(text\/plain\)\]\nResource 1: This is a plaintext resource/,
  );
  expect(text.structured).toMatch(/"temperature"/);
}, 120_000);

test('over Streamable HTTP: every call carries workflow id + tool call id as its idempotency key; header secrets stay out of history', async () => {
  const before = relay.calls().length;
  const out = await withWorker((tq) =>
    run(tq, {
      task: 't',
      tools: ['mcp:remote/echo'],
      model: {
        provider: 'scripted',
        turns: [callTurn(['echo', { message: 'over http' }, 'e1']), answerTurn('{{result:e1}}')],
      },
    }),
  );
  expect(out.result.answer).toBe('Echo: over http');
  const calls = relay.calls().slice(before);
  expect(calls).toHaveLength(1);
  expect(calls[0]?.params?._meta?.[IDEMPOTENCY_META_KEY]).toBe(`${out.handle.workflowId}/e1`);
  expect(calls[0]?.headers['x-test-token']).toBe('relay-secret-value');
  expect(JSON.stringify(out.history)).not.toContain('relay-secret-value');
}, 120_000);

test('the stdio server killed mid-call is started again and the call retried; the run finishes', async () => {
  const out = await withWorker(async (tq) => {
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue: tq,
      workflowId: uid('mcp-kill'),
      args: [
        {
          task: 't',
          tools: ['mcp:everything/trigger-long-running-operation'],
          model: {
            provider: 'scripted',
            turns: [
              callTurn(['trigger-long-running-operation', { duration: 1, steps: 2 }, 'op']),
              answerTurn('{{result:op}}'),
            ],
          },
        } satisfies AgentInput,
      ],
    });
    // Wait for the call to start, then kill the server process under it.
    for (let i = 0; i < 200; i++) {
      const events = await handle.query(eventsQuery, {});
      if (events.some((e) => e.kind === 'tool_started')) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const pids = pidsWith(marker);
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    return { result: (await handle.result()) as AgentResult, history: await handle.fetchHistory() };
  });
  expect(out.result.answer).toContain('Long running operation completed');
  const attempts = (out.history.events ?? []).find(
    (e) =>
      e.activityTaskStartedEventAttributes &&
      e.activityTaskStartedEventAttributes.attempt &&
      e.activityTaskStartedEventAttributes.attempt > 1,
  );
  expect(attempts).toBeDefined();
  expect(pidsWith(marker).length).toBeGreaterThan(0);
}, 120_000);

test('continue-as-new carries the discovered tools: one discovery for the whole chain', async () => {
  await withWorker(async (tq) => {
    const input: AgentInput = {
      task: 't',
      tools: ['mcp:everything/echo'],
      policy: { continueAsNewAfterSteps: 1 },
      model: {
        provider: 'scripted',
        turns: [
          callTurn(['echo', { message: 'one' }, 'a']),
          callTurn(['echo', { message: 'two' }, 'b']),
          callTurn(['echo', { message: 'three' }, 'c']),
          answerTurn('{{result:a}} {{result:b}} {{result:c}}'),
        ],
      },
    };
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue: tq,
      workflowId: uid('mcp-can'),
      args: [input],
    });
    const result = (await handle.result()) as AgentResult;
    expect(result.answer).toBe('Echo: one Echo: two Echo: three');
    const first = await handle.describe();
    const chain = await runChain(temporal.env.client, handle.workflowId, handle.firstExecutionRunId);
    expect(chain.length).toBeGreaterThanOrEqual(3);
    expect(first.status.name).toBe('COMPLETED');
    const discoveries = chain.flatMap((h) => scheduledActivityTypes(h)).filter((t) => t === 'mcpDiscover');
    expect(discoveries).toHaveLength(1);
  });
}, 120_000);

test('an MCP result makes the run untrusted: then a tool the server does not mark read-only waits for approval, a read-only one does not', async () => {
  const entity = (name: string) => ({ entities: [{ name, entityType: 'note', observations: [] }] });
  const out = await withWorker(async (tq) => {
    const handle = await temporal.env.client.workflow.start('agentWorkflow', {
      taskQueue: tq,
      workflowId: uid('mcp-untrusted'),
      args: [
        {
          task: 't',
          tools: ['mcp:memory/create_entities', 'mcp:everything/echo'],
          model: {
            provider: 'scripted',
            turns: [
              // Nothing untrusted yet: it runs. Its result is an MCP result, so untrusted.
              callTurn(['create_entities', entity('First'), 'first']),
              callTurn(['create_entities', entity('Second'), 'second']),
              callTurn(['echo', { message: 'read-only' }, 'echo']),
              answerTurn('{{result:echo}}'),
            ],
          },
        } satisfies AgentInput,
      ],
    });
    let approvals: { toolCallId: string; reason: string }[] = [];
    for (let i = 0; i < 600 && approvals.length === 0; i++) {
      approvals = (await handle.query(stateQuery)).approvals ?? [];
      if (approvals.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    await handle.executeUpdate(approveToolCallUpdate, { args: [{ toolCallId: 'second', approve: true }] });
    return {
      approvals,
      result: (await handle.result()) as AgentResult,
      events: await handle.query(eventsQuery, {}),
    };
  });
  expect(out.approvals).toEqual([
    expect.objectContaining({
      toolCallId: 'second',
      reason: 'untrusted content is in the conversation (mcp:memory/create_entities result at step 1)',
    }),
  ]);
  // Only that call asked; the read-only echo after it ran without asking.
  expect(out.events.filter((e) => e.kind === 'approval_requested').map((e) => e.toolCallId)).toEqual([
    'second',
  ]);
  expect(out.result.answer).toBe('Echo: read-only');
  expect(finished(out.events).map((e) => [e.toolCallId, e.isError ?? false])).toEqual([
    ['first', false],
    ['second', false],
    ['echo', false],
  ]);
}, 120_000);

test('policy.localActivities "tools": a read-only, idempotent MCP tool runs as a local activity, any other as a regular one', async () => {
  const out = await withWorker((tq) =>
    run(tq, {
      task: 't',
      tools: [
        'mcp:everything/echo',
        'mcp:everything/get-sum',
        'mcp:memory/read_graph',
        'mcp:memory/create_entities',
      ],
      policy: { localActivities: 'tools', approvals: { tools: { 'mcp:memory': 'never' } } },
      model: {
        provider: 'scripted',
        turns: [
          callTurn(['echo', { message: 'local' }, 'echo']),
          callTurn(['get-sum', { a: 2, b: 3 }, 'sum']),
          callTurn([
            'create_entities',
            { entities: [{ name: 'X', entityType: 't', observations: [] }] },
            'write',
          ]),
          answerTurn('{{result:echo}} {{result:sum}}'),
        ],
      },
    }),
  );
  expect(out.result.answer).toMatch(/^Echo: local .*5/);
  // echo and get-sum say readOnlyHint and idempotentHint; create_entities neither.
  expect(localActivityTypes(out.history)).toEqual(['mcp:everything/echo', 'mcp:everything/get-sum']);
  expect(out.scheduled.filter((t) => t.startsWith('mcp:'))).toEqual(['mcp:memory/create_entities']);
}, 120_000);
