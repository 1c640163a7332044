/**
 * Questions through the doors people use, against a real dev server and a worker process: the
 * `asks` and `answer` commands, `run` prompting in a terminal (a pseudo-terminal from util-linux
 * `script`), `GET/POST /api/questions`, and the MCP server (an `input_required` task, then
 * `agent_answer` asking the client's user through elicitation). Refusals (malformed JSON, wrong
 * type, unknown choice, 1 MB) say why and leave the run waiting.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startApiServer } from '../../server/api/server';
import type { RunningApiServer } from '../../server/api/server';
import type { AgentInput, AgentResult } from '../../shared/agent';
import { answerQuestionUpdate, stateQuery } from '../../shared/agent';
import { startAgentRun } from '../../client/start-run';
import { listQuestions } from '../../client/questions';
import { runCli } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { CLI, tempDir, uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const dev = useDevServer({ worker: true, queue: 'questions' });
const { taskQueue } = dev;
let api: RunningApiServer;

beforeAll(async () => {
  api = await startApiServer({ client: dev.fx.client, taskQueue, host: '127.0.0.1', port: 0, webUi: false });
  dev.defer(() => api.close());
});

const CITIES = { enum: ['Lisbon', 'Porto', 'Faro'] };

function asking(question: Record<string, unknown>, answer = 'Chosen: {{last_tool_results}}'): AgentInput {
  return {
    task: 'pick',
    tools: ['ask_user'],
    model: { provider: 'scripted', turns: [callTurn(['ask_user', question, 'q1']), answerTurn(answer)] },
  };
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function waiting(id: string) {
  return until('the question', async () => {
    const s = await dev.fx.client.workflow
      .getHandle(id)
      .query(stateQuery)
      .catch(() => null);
    return s?.questions?.length ? s : undefined;
  });
}

async function call(method: string, p: string, body?: string) {
  const res = await fetch(`${api.url}${p}`, {
    method,
    headers: body !== undefined ? { 'content-type': 'application/json' } : {},
    ...(body !== undefined ? { body } : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

test('CLI: asks lists, answer refuses malformed JSON and unknown choices with the reason, then answers', async () => {
  const id = uid('cli-ask');
  const handle = await startAgentRun(dev.fx.client, asking({ question: 'Which city?', schema: CITIES }), {
    workflowId: id,
    taskQueue,
  });
  await waiting(id);
  const listed = await runCli(['asks', id], dev.env);
  expect(listed.code).toBe(0);
  expect(listed.stdout).toContain(`${id} q1: Which city? until `);
  expect(listed.stdout).toContain('    answer: one of "Lisbon", "Porto", "Faro"\n');
  expect(listed.stdout).toContain(`    form: /runs/${encodeURIComponent(id)}#question-q1\n`);
  const json = await runCli(['asks', id, '--json'], dev.env);
  expect(JSON.parse(json.stdout)).toEqual([
    expect.objectContaining({ workflowId: id, toolCallId: 'q1', schema: CITIES }),
  ]);

  const malformed = await runCli(['answer', id, 'q1', '--json', '{"city": Porto'], dev.env);
  expect(malformed.code).toBe(1);
  expect(malformed.stderr).toMatch(
    /^error: --json is not valid JSON \(.*\); quote text as JSON \('"Lisbon"'\) or use --text\n$/,
  );
  const unknown = await runCli(['answer', id, 'q1', '--text', 'Madrid'], dev.env);
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toBe(
    'error: The answer to q1 was refused: the answer: must be one of "Lisbon", "Porto", "Faro"; got "Madrid". It still waits for an answer.\n',
  );
  const neither = await runCli(['answer', id, 'q1'], dev.env);
  expect(neither.stderr).toMatch(/exactly one of --json <value>, --text <text>, --file <file.json>/);
  expect((await dev.fx.client.workflow.getHandle(id).query(stateQuery)).status).toBe('waiting_for_input');

  const ok = await runCli(['answer', id, 'q1', '--json', '"Porto"'], dev.env);
  expect(ok).toMatchObject({ code: 0, stdout: 'q1: answered\n' });
  expect(((await handle.result()) as AgentResult).answer).toBe('Chosen: Porto');
  const late = await runCli(['answer', id, 'q1', '--text', 'Faro'], dev.env);
  expect(late.stderr).toMatch(/has already ended \(COMPLETED\); nothing of it waits for an answer any more/);
}, 180_000);

test('HTTP: list, refuse (wrong type, malformed body, 1 MB, HTML kept as text), answer, then 409', async () => {
  const id = uid('http-ask');
  const form = {
    type: 'object',
    properties: { name: { type: 'string' }, seats: { type: 'integer', minimum: 1 } },
    required: ['name', 'seats'],
  };
  const handle = await startAgentRun(dev.fx.client, asking({ question: 'Who and how many?', schema: form }), {
    workflowId: id,
    taskQueue,
  });
  await waiting(id);
  const listed = await call('GET', `/api/questions?run=${encodeURIComponent(id)}`);
  expect(listed).toMatchObject({
    status: 200,
    body: { questions: [expect.objectContaining({ toolCallId: 'q1', schema: form })] },
  });
  const post = (body: string) => call('POST', `/api/questions/${encodeURIComponent(id)}/q1`, body);
  expect(await post(JSON.stringify({ answer: { name: 'Ann', seats: '2' } }))).toEqual({
    status: 400,
    body: {
      error:
        'The answer to q1 was refused: seats: expected integer, got string. It still waits for an answer.',
      code: 'invalid_answer',
    },
  });
  expect(await post(JSON.stringify({ answer: { name: 'Ann', seats: 0 } }))).toMatchObject({
    status: 400,
    body: { error: expect.stringContaining('seats: must be at least 1; got 0') },
  });
  const broken = await post('{"answer": {"name": ');
  expect(broken.status).toBe(400);
  expect(broken.body.error).toMatch(/^body must be JSON/);
  // 1 MB: over the API's body limit, and refused by the run's own validator when sent to it directly.
  const huge = 'x'.repeat(1024 * 1024);
  expect((await post(JSON.stringify({ answer: { name: huge, seats: 1 } }))).status).toBe(413);
  await expect(
    dev.fx.client.workflow.getHandle(id).executeUpdate(answerQuestionUpdate, {
      args: [{ toolCallId: 'q1', answer: { name: huge, seats: 1 } }],
    }),
  ).rejects.toMatchObject({ cause: { message: expect.stringContaining('at most 32 KiB is accepted') } });
  const still = await dev.fx.client.workflow.getHandle(id).query(stateQuery);
  expect(still.questions?.map((q) => q.toolCallId)).toEqual(['q1']);

  const html = '<script>alert(1)</script>Ann';
  expect(await post(JSON.stringify({ answer: { name: html, seats: 2 } }))).toEqual({
    status: 200,
    body: { toolCallId: 'q1', answered: true },
  });
  expect(((await handle.result()) as AgentResult).answer).toBe(
    `Chosen: ${JSON.stringify({ name: html, seats: 2 })}`,
  );
  expect(await post(JSON.stringify({ answer: { name: 'Bo', seats: 1 } }))).toMatchObject({
    status: 409,
    body: { code: 'finished' },
  });
  const history = JSON.stringify(await handle.fetchHistory());
  expect(history).not.toContain('xxxxxxxxxxxxxxxx');
}, 180_000);

test('run in a terminal prompts for the question; a refused answer is asked again', async () => {
  const dir = tempDir('ask-tty');
  const input = path.join(dir, 'input.json');
  fs.writeFileSync(
    input,
    JSON.stringify(asking({ question: 'Which city?', schema: CITIES }, 'Going to {{last_tool_results}}')),
  );
  const id = uid('tty-ask');
  const command = [CLI[0], CLI[1], 'run', '--input', input, '--id', id, '--no-stream']
    .map((a) => `'${String(a).replace(/'/g, `'\\''`)}'`)
    .join(' ');
  // `script` gives the CLI a pseudo-terminal for its stdin and stdout, as a person's shell does.
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: { ...process.env, ...dev.env, TERM: 'dumb' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const seen = async (needle: string, from = 0) =>
    until(`"${needle}" in the terminal`, async () => out.indexOf(needle, from) >= 0);
  try {
    // The run's event line says "? Which city?" too: the prompt is the question with its choices.
    await seen('  3) Faro');
    expect(out).toContain('? Which city?\r\n  1) Lisbon\r\n  2) Porto\r\n  3) Faro');
    child.stdin.write('Madrid\r');
    await seen('✗ The answer to q1 was refused: the answer: must be one of');
    const again = out.lastIndexOf('✗');
    await seen('? Which city?', again);
    child.stdin.write('2\r');
    await seen('✓ answered q1');
    await seen('Going to Porto');
    expect(await exited).toBe(0);
  } finally {
    child.stdin.end();
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  const result = (await dev.fx.client.workflow.getHandle(id).result()) as AgentResult;
  expect(result.answer).toBe('Going to Porto');
}, 180_000);

test('MCP: the run is an input_required task; agent_answer asks the user by elicitation and the run goes on', async () => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI[1] as string, 'mcp'],
    env: { ...(process.env as Record<string, string>), ...dev.env },
    stderr: 'pipe',
  });
  const client = new McpClient(
    { name: 'questions-test', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } } },
  );
  const asked: unknown[] = [];
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    asked.push(req.params);
    return { action: 'accept', content: { answer: 'Faro' } };
  });
  await client.connect(transport);
  const id = uid('mcp-ask');
  try {
    const input = asking({ question: 'Which city?', schema: CITIES });
    await client.request(
      {
        method: 'tools/call',
        params: {
          name: 'agent_run',
          arguments: { task: input.task, id, model: input.model, tools: input.tools },
          task: {},
        },
      },
      CreateTaskResultSchema,
    );
    const task = await until('input_required', async () => {
      const t = await client.experimental.tasks.getTask(id);
      return t.status === 'input_required' ? t : undefined;
    });
    expect(task.statusMessage).toMatch(
      /^Waiting for an answer: "Which city\?" \(toolCallId "q1", until .*\)\. Answer with agent_answer/,
    );
    const listedOver = (await client.callTool(
      { name: 'agent_asks', arguments: { id } },
      CallToolResultSchema,
    )) as CallToolResult;
    expect((listedOver.structuredContent as { questions: unknown[] }).questions).toEqual([
      expect.objectContaining({ toolCallId: 'q1', question: 'Which city?' }),
    ]);
    const wrong = (await client.callTool(
      { name: 'agent_answer', arguments: { id, toolCallId: 'q1', answer: 7 } },
      CallToolResultSchema,
    )) as CallToolResult;
    expect(wrong.isError).toBe(true);
    expect(wrong.structuredContent).toMatchObject({ code: 'invalid_answer' });
    const answered = (await client.callTool(
      { name: 'agent_answer', arguments: { id, toolCallId: 'q1' } },
      CallToolResultSchema,
    )) as CallToolResult;
    expect(answered.isError).toBeFalsy();
    expect(asked).toEqual([
      expect.objectContaining({
        message: 'Which city?',
        requestedSchema: {
          type: 'object',
          properties: { answer: { type: 'string', enum: ['Lisbon', 'Porto', 'Faro'] } },
          required: ['answer'],
        },
      }),
    ]);
    const result = await until('the answer', async () => {
      const t = await client.experimental.tasks.getTask(id);
      return t.status === 'completed'
        ? client.experimental.tasks.getTaskResult(id, CallToolResultSchema)
        : undefined;
    });
    expect(JSON.stringify(result.content)).toContain('Chosen: Faro');
    expect(await listQuestions(dev.fx.client, {})).not.toContainEqual(
      expect.objectContaining({ workflowId: id }),
    );
  } finally {
    await client.close();
  }
}, 180_000);
