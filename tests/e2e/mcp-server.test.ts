/**
 * The MCP server against a real dev server and a worker process, through real MCP clients: the
 * reference `inspector-cli` over stdio (`durable-agent mcp`), the SDK's client over stdio (MCP Tasks,
 * and a restart of our server mid-run), and the SDK's Streamable HTTP client against `/mcp` of the
 * HTTP API (with its token and origin checks).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { WorkflowFailedError } from '@temporalio/client';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { TOOL_CALL_WORKFLOW_TYPE } from '../../shared/tools/tool-call';
import { PROJECT_ROOT } from '../../shared/project-root';
import { loadApiConfig, startApiServer } from '../../server/api/server';
import type { RunningApiServer } from '../../server/api/server';
import { runCli } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { CLI, uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const dev = useDevServer({ worker: true, queue: 'mcp-server' });
const { taskQueue } = dev;
const TOKEN = 'mcp-server-token-0123456789';

const INSPECTOR = path.join(PROJECT_ROOT, 'node_modules', '.bin', 'mcp-inspector-cli');

/** Server scenarios of `@modelcontextprotocol/conformance` that apply to this server. */
const CONFORMANCE_SCENARIOS = [
  'server-initialize',
  'ping',
  'logging-set-level',
  'tools-list',
  'dns-rebinding-protection',
] as const;

/** Runs a process to its end (without blocking this process, which serves the API under test). */
function output(command: string, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out }));
  });
}

/** The Node 22 binary and the conformance suite's entry file, installed when missing. */
async function installConformance(): Promise<[string, string]> {
  const r = await output('bash', [path.join(PROJECT_ROOT, 'scripts', 'install-mcp-conformance.sh')]);
  const [node22, suite] = r.out.trim().split('\n').slice(-2);
  if (r.code !== 0 || !node22 || !suite)
    throw new Error(`scripts/install-mcp-conformance.sh failed:\n${r.out}`);
  return [node22, suite];
}

/** A scripted run whose one calculation waits for approval (as examples/runs/approval.json). */
const APPROVAL_MODEL = {
  provider: 'scripted',
  turns: [
    callTurn(['calculator', { expression: '3 * 49.90' }, 'refund']),
    answerTurn('Refund: {{result:refund}}'),
  ],
};
const APPROVAL_POLICY = { requireApproval: ['calculator'], approvalTimeout: '1 hour' };

/**
 * Runs `inspector-cli --cli` against `durable-agent mcp` and returns the JSON it prints. It runs in
 * bin/: inspector-cli 1.0.3 looks for its package.json relative to the working directory's parent.
 */
function inspect(
  mcpArgs: string[],
  args: string[],
): Promise<{ code: number | null; json: unknown; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [INSPECTOR, '--cli', process.execPath, CLI[1] as string, 'mcp', ...mcpArgs, ...args],
      {
        cwd: path.join(PROJECT_ROOT, 'bin'),
        env: { ...process.env, ...dev.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.once('exit', (code) => {
      const start = out.indexOf('\n{');
      let json: unknown;
      try {
        json = start >= 0 ? JSON.parse(out.slice(start)) : undefined;
      } catch {
        json = undefined;
      }
      resolve({ code, json, out });
    });
  });
}

/** `tools/call` through inspector-cli; `--tool-arg` values are JSON where they parse as JSON. */
async function inspectCall(
  tool: string,
  args: Record<string, string>,
  opts: { mcpArgs?: string[]; meta?: Record<string, string> } = {},
): Promise<CallToolResult> {
  const flags = ['--method', 'tools/call', '--tool-name', tool];
  for (const [k, v] of Object.entries(args)) flags.push('--tool-arg', `${k}=${v}`);
  for (const [k, v] of Object.entries(opts.meta ?? {})) flags.push('--tool-metadata', `${k}=${v}`);
  const r = await inspect(opts.mcpArgs ?? [], flags);
  if (r.code !== 0 || !r.json) throw new Error(`inspector-cli failed (${r.code}):\n${r.out}`);
  return r.json as CallToolResult;
}

function structured(result: CallToolResult): Record<string, unknown> {
  expect(result.structuredContent).toBeDefined();
  return result.structuredContent as Record<string, unknown>;
}

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 120_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** The SDK's client on `durable-agent mcp` over stdio. */
async function stdioClient(): Promise<{ client: McpClient; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI[1] as string, 'mcp', '--tools', 'calculator'],
    env: { ...(process.env as Record<string, string>), ...dev.env },
    stderr: 'pipe',
  });
  const client = new McpClient({ name: 'mcp-server-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

async function callTool(
  client: McpClient,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args }, CallToolResultSchema)) as CallToolResult;
}

describe('durable-agent mcp through inspector-cli', () => {
  test('lists the offered tools and calls one as a durable workflow', async () => {
    const listed = await inspect(['--tools', 'calculator'], ['--method', 'tools/list']);
    expect(listed.code).toBe(0);
    const names = (listed.json as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['calculator', 'agent_start', 'agent_run', 'agent_status', 'agent_approve']),
    );
    // Only the tools named are offered.
    expect(names).not.toContain('sql_query');
    expect(names).not.toContain('send_email');

    const result = await inspectCall(
      'calculator',
      { expression: '3 * 49.90' },
      { mcpArgs: ['--tools', 'calculator'] },
    );
    expect(result.isError).toBeFalsy();
    expect(text(result)).toBe('149.7');
    const workflowId = structured(result).workflowId as string;
    expect(workflowId).toMatch(/^tool-calculator-[0-9a-f]{32}$/);
    const described = await dev.fx.client.workflow.getHandle(workflowId).describe();
    expect(described.type).toBe(TOOL_CALL_WORKFLOW_TYPE);
    expect(described.status.name).toBe('COMPLETED');
  });

  test('invalid arguments and tools that cannot be offered are refused clearly', async () => {
    const bad = await inspectCall('calculator', { expr: '1 + 1' }, { mcpArgs: ['--tools', 'calculator'] });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/expression/);

    // (inspector-cli does not show a server's stderr, so the command runs on its own here.)
    const refused = await runCli(['mcp', '--tools', 'calculator,notify_user'], dev.env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /cannot offer "notify_user" over MCP; offerable tools: get_time, calculator/,
    );
  });

  test('the same idempotency key is one call, whichever process sends it', async () => {
    const meta = { 'durable-agent/idempotency-key': uid('key') };
    const first = await inspectCall('calculator', { expression: '6 * 7' }, { meta });
    const again = await inspectCall('calculator', { expression: '6 * 7' }, { meta });
    expect(text(first)).toBe('42');
    expect(structured(again).workflowId).toBe(structured(first).workflowId);
    // One workflow under the id, with one run: the second request read the first call's result.
    const id = structured(first).workflowId as string;
    const runs = await until('the call in visibility', async () => {
      const found: string[] = [];
      for await (const wf of dev.fx.client.workflow.list({ query: `WorkflowId = '${id}'` }))
        found.push(wf.runId);
      return found.length > 0 ? found : undefined;
    });
    expect(runs).toHaveLength(1);
  });

  test('starts an agent run with the scripted model and reads its answer', async () => {
    const started = await inspectCall('agent_start', { task: 'Plan my trip' });
    const workflowId = structured(started).workflowId as string;
    expect(workflowId).toMatch(/^agent-/);
    const done = await until('the run to complete', async () => {
      const s = structured(await inspectCall('agent_status', { id: workflowId }));
      return s.status === 'completed' ? s : undefined;
    });
    expect(done.stopReason).toBe('final_answer');
    expect(done.answer).toMatch(/1806\.2 EUR/);
    expect((done.events as { kind: string }[]).map((e) => e.kind)).toContain('final_answer');
  });

  test('answers a pending approval', async () => {
    const started = await inspectCall('agent_start', {
      task: 'Work out the refund',
      model: JSON.stringify(APPROVAL_MODEL),
      tools: '["calculator"]',
      policy: JSON.stringify(APPROVAL_POLICY),
    });
    const workflowId = structured(started).workflowId as string;
    const waiting = await until('the approval', async () => {
      const s = structured(await inspectCall('agent_status', { id: workflowId }));
      return (s.approvals as unknown[]).length ? s : undefined;
    });
    expect(waiting.status).toBe('waiting_for_approval');
    expect(waiting.approvals).toEqual([
      expect.objectContaining({ toolCallId: 'refund', tool: 'calculator' }),
    ]);

    const approved = await inspectCall('agent_approve', { id: workflowId, toolCallId: 'refund' });
    expect(structured(approved)).toEqual(expect.objectContaining({ toolCallId: 'refund', approved: true }));
    const again = await inspectCall('agent_approve', { id: workflowId, toolCallId: 'refund' });
    expect(again.isError).toBe(true);

    const done = await until('the answer', async () => {
      const s = structured(await inspectCall('agent_status', { id: workflowId }));
      return s.status === 'completed' ? s : undefined;
    });
    expect(done.answer).toBe('Refund: 149.7');
  });

  test('a bad run is refused before anything starts', async () => {
    const r = await inspectCall('agent_start', { task: 'x', model: 'nosuch:model' });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/unknown provider "nosuch"/);
    const tools = await inspectCall('agent_start', { task: 'x', tools: '["No Such Tool"]' });
    expect(tools.isError).toBe(true);
    expect(text(tools)).toMatch(/unknown tool "No Such Tool"/);
  });
});

describe('toolCallWorkflow', () => {
  test('checks the arguments with the tool’s schema before any activity, and refuses unknown tools', async () => {
    const { client } = dev.fx;
    const id = uid('tool-direct');
    const invalid = await client.workflow.execute(TOOL_CALL_WORKFLOW_TYPE, {
      taskQueue,
      workflowId: id,
      args: [{ tool: 'calculator', args: { expression: 42 } }],
    });
    expect(invalid).toEqual({
      content: expect.stringMatching(/^Invalid arguments for calculator: expression/),
      isError: true,
    });
    const history = await client.workflow.getHandle(id).fetchHistory();
    expect(history.events?.some((e) => e.activityTaskScheduledEventAttributes)).toBe(false);

    await expect(
      client.workflow.execute(TOOL_CALL_WORKFLOW_TYPE, {
        taskQueue,
        workflowId: uid('tool-direct'),
        args: [{ tool: 'no_such_tool', args: {} }],
      }),
    ).rejects.toThrow(WorkflowFailedError);
  });
});

describe('MCP Tasks over stdio', () => {
  test('logging: a call says which durable workflow runs it, at the level the client set', async () => {
    const { client } = await stdioClient();
    const messages: LoggingMessageNotification['params'][] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      messages.push(n.params);
    });
    try {
      await client.setLoggingLevel('info');
      const first = await callTool(client, 'calculator', { expression: '5 * 5' });
      const workflowId = structured(first).workflowId as string;
      await until('the log message', async () => messages.length > 0);
      expect(messages).toEqual([
        expect.objectContaining({
          level: 'info',
          logger: 'durable-agent',
          data: expect.objectContaining({ tool: 'calculator', workflowId }),
        }),
      ]);
      await client.setLoggingLevel('error');
      expect(text(await callTool(client, 'calculator', { expression: '6 * 6' }))).toBe('36');
      expect(messages).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  test('task id = workflow id, input_required = a pending approval, and a restarted server finds the run', async () => {
    const id = uid('agent-mcp-task');
    let { client, transport } = await stdioClient();
    const created = await client.request(
      {
        method: 'tools/call',
        params: {
          name: 'agent_run',
          arguments: {
            task: 'Work out the refund',
            id,
            model: APPROVAL_MODEL,
            tools: ['calculator'],
            policy: APPROVAL_POLICY,
          },
          task: { ttl: 60_000 },
        },
      },
      CreateTaskResultSchema,
    );
    expect(created.task.taskId).toBe(id);
    const waiting = await until('input_required', async () => {
      const t = await client.experimental.tasks.getTask(id);
      return t.status === 'input_required' ? t : undefined;
    });
    expect(waiting.statusMessage).toMatch(/calculator \(toolCallId "refund"/);

    // Our server dies mid-run (SIGKILL: no chance to save anything); a new process finds the run.
    const pid = transport.pid as number;
    process.kill(pid, 'SIGKILL');
    await client.close();
    await until('the old server to exit', async () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    });
    ({ client, transport } = await stdioClient());
    try {
      expect((await client.experimental.tasks.getTask(id)).status).toBe('input_required');
      const listed = await client.experimental.tasks.listTasks();
      expect(listed.tasks.map((t) => t.taskId)).toContain(id);

      const approved = await callTool(client, 'agent_approve', { id, toolCallId: 'refund' });
      expect(approved.isError).toBeFalsy();
      const result = await client.experimental.tasks.getTaskResult(id, CallToolResultSchema);
      expect(structured(result)).toEqual(
        expect.objectContaining({ workflowId: id, answer: 'Refund: 149.7' }),
      );
      expect((await client.experimental.tasks.getTask(id)).status).toBe('completed');
      // Starting again under the same id starts nothing: it is the same run.
      const again = await callTool(client, 'agent_start', { task: 'Work out the refund', id });
      expect(structured(again)).toEqual({ workflowId: id, alreadyStarted: true });
    } finally {
      await client.close();
    }
  });

  test('tasks/cancel cancels the run', async () => {
    const id = uid('agent-mcp-cancel');
    const { client } = await stdioClient();
    try {
      await client.request(
        {
          method: 'tools/call',
          params: {
            name: 'agent_run',
            arguments: {
              task: 'Refund',
              id,
              model: APPROVAL_MODEL,
              tools: ['calculator'],
              policy: APPROVAL_POLICY,
            },
            task: {},
          },
        },
        CreateTaskResultSchema,
      );
      await until(
        'input_required',
        async () => (await client.experimental.tasks.getTask(id)).status === 'input_required',
      );
      const cancelled = await client.experimental.tasks.cancelTask(id);
      expect(cancelled.status).toBe('cancelled');
      const described = await dev.fx.client.workflow.getHandle(id).describe();
      expect(described.status.name).toBe('CANCELLED');
      const result = await client.experimental.tasks.getTaskResult(id, CallToolResultSchema);
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/ended without an answer/);
    } finally {
      await client.close();
    }
  });
});

describe('/mcp on the HTTP API', () => {
  let api: RunningApiServer;
  let open: RunningApiServer;

  beforeAll(async () => {
    const base = {
      client: dev.fx.client,
      taskQueue,
      host: '127.0.0.1',
      port: 0,
      webUi: false,
      logError: () => undefined,
    };
    api = await startApiServer({ ...base, token: TOKEN, mcp: { tools: ['calculator'] } });
    open = await startApiServer(base);
    dev.defer(() => Promise.all([api.close(), open.close()]));
  });

  async function httpClient(server: RunningApiServer, headers: Record<string, string>): Promise<McpClient> {
    const client = new McpClient({ name: 'mcp-http-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers } }),
    );
    return client;
  }

  test('with the token: lists, calls a tool, runs an agent to its answer, cancels a run', async () => {
    const client = await httpClient(api, { authorization: `Bearer ${TOKEN}` });
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(
        expect.arrayContaining(['calculator', 'agent_run', 'agent_cancel']),
      );
      const sum = await callTool(client, 'calculator', { expression: '2 + 2' });
      expect(text(sum)).toBe('4');

      // Called plainly, agent_run returns once the run has its answer.
      const run = await callTool(client, 'agent_run', { task: 'Plan my trip' });
      expect(run.isError).toBeFalsy();
      expect(structured(run).answer).toMatch(/1806\.2 EUR/);

      const started = await callTool(client, 'agent_start', {
        task: 'Refund',
        model: APPROVAL_MODEL,
        tools: ['calculator'],
        policy: APPROVAL_POLICY,
      });
      const id = structured(started).workflowId as string;
      await until('the approval', async () => {
        const s = structured(await callTool(client, 'agent_status', { id }));
        return s.status === 'waiting_for_approval';
      });
      const notifications = await callTool(client, 'agent_notifications', { id });
      expect(notifications.isError).toBeFalsy();
      expect(structured(notifications).notifications).toEqual(expect.any(Array));
      const cancelled = await callTool(client, 'agent_cancel', { id });
      expect(structured(cancelled)).toEqual({ workflowId: id, status: 'cancelled' });
      const late = await callTool(client, 'agent_approve', { id, toolCallId: 'refund' });
      expect(late.isError).toBe(true);
      expect(text(late)).toMatch(/has already ended/);
      const unknown = await callTool(client, 'agent_status', { id: uid('agent-nosuch') });
      expect(unknown.isError).toBe(true);
      expect(text(unknown)).toMatch(/No run with id/);
    } finally {
      await client.close();
    }
  });

  test('DURABLE_AGENT_MCP_TOOLS names the tools; one that cannot be offered stops the API at start', async () => {
    expect(() => loadApiConfig({ DURABLE_AGENT_MCP_TOOLS: 'calculator,notify_user' })).toThrow(
      /Invalid API configuration: DURABLE_AGENT_MCP_TOOLS: cannot offer "notify_user"/,
    );
    const config = loadApiConfig({ DURABLE_AGENT_MCP_TOOLS: 'get_time' });
    expect(config.mcpTools).toEqual(['get_time']);
    const server = await startApiServer({
      client: dev.fx.client,
      taskQueue,
      host: '127.0.0.1',
      port: 0,
      webUi: false,
      mcp: { tools: config.mcpTools },
    });
    try {
      const client = await httpClient(server, {});
      const { tools } = await client.listTools();
      await client.close();
      expect(tools.map((t) => t.name)).toContain('get_time');
      expect(tools.map((t) => t.name)).not.toContain('calculator');
    } finally {
      await server.close();
    }
  });

  test('the MCP conformance suite: the server scenarios that apply to this server pass', async () => {
    // The suite needs Node 22; scripts/install-mcp-conformance.sh installs both from npm, apart.
    const [node22, suite] = await installConformance();
    // The other server scenarios call the suite's own fixture tools, resources and prompts.
    // At once: each scenario is a process of its own, against a server that holds no state per client.
    const runs = await Promise.all(
      CONFORMANCE_SCENARIOS.map(async (scenario) => ({
        scenario,
        ...(await output(node22, [suite, 'server', '--url', `${open.url}/mcp`, '--scenario', scenario])),
      })),
    );
    for (const r of runs) {
      const passed = /Passed: (\d+)\/(\d+), 0 failed/.exec(r.out);
      if (r.code !== 0 || !passed || passed[1] !== passed[2] || passed[1] === '0') {
        throw new Error(
          `conformance scenario ${r.scenario} did not pass (exit ${r.code}):\n${r.out.slice(-3000)}`,
        );
      }
    }
  });

  test('without the token, with a wrong one, or from another origin, it is refused', async () => {
    await expect(httpClient(api, {})).rejects.toThrow();
    await expect(httpClient(api, { authorization: 'Bearer wrong-token-0123456789' })).rejects.toThrow();

    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const noToken = await fetch(`${api.url}/mcp`, { method: 'POST', headers, body: initialize });
    expect(noToken.status).toBe(401);
    const ok = await fetch(`${api.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${TOKEN}` },
      body: initialize,
    });
    expect(ok.status).toBe(200);
    const crossOrigin = await fetch(`${api.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${TOKEN}`, origin: 'https://evil.example' },
      body: initialize,
    });
    expect(crossOrigin.status).toBe(403);
    // Without a token the API answers loopback pages only, and never another origin's.
    const openCross = await fetch(`${open.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, origin: 'https://evil.example' },
      body: initialize,
    });
    expect(openCross.status).toBe(403);
    const simpleRequest = await fetch(`${open.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', accept: 'application/json, text/event-stream' },
      body: initialize,
    });
    expect(simpleRequest.status).toBe(415);
  });
});
