/**
 * Tools of the user's own from a module, as a CLI user adds them (no worker code of their own), on
 * the real dev server: `durable-agent worker --tools-module` runs one, its worker is SIGKILLed
 * mid-call and another worker runs the call again with the same idempotency key; `durable-agent mcp
 * --tools-module` offers one to MCP clients, each call a durable workflow.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AgentClient } from '../../client/agent-client';
import { PROJECT_ROOT } from '../../shared/project-root';
import { startWorkerProcess } from '../../testkit/processes';
import { answerTurn, callTurn } from '../../testkit/scripts';
import { CLI, uid } from '../../testkit/temporal';
import { useDevServer } from '../support/environments';

const dev = useDevServer();
// Inside the checkout, so the module's own imports (zod) resolve as in a user's project.
fs.mkdirSync(path.join(PROJECT_ROOT, '.data'), { recursive: true });
const dir = fs.mkdtempSync(path.join(PROJECT_ROOT, '.data', 'own-tools-crash-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const record = path.join(dir, 'calls.log');
const toolsModule = path.join(dir, 'tools.ts');
fs.writeFileSync(
  toolsModule,
  `import fs from 'node:fs';
import { z } from 'zod';
import { defineTool } from ${JSON.stringify(path.join(PROJECT_ROOT, 'activities', 'own-tools', 'define'))};

/** Records each attempt; the first never ends (its worker is killed), later ones answer. */
export const slowLookup = defineTool({
  name: 'slow_lookup',
  description: 'Looks something up, slowly.',
  input: z.object({ what: z.string() }),
  heartbeatTimeout: '2 seconds',
  run: async ({ what }, ctx) => {
    fs.appendFileSync(${JSON.stringify(record)}, JSON.stringify({ key: ctx.idempotencyKey, attempt: ctx.attempt, pid: process.pid }) + '\\n');
    if (ctx.attempt > 1) return 'found ' + what;
    for (;;) {
      ctx.heartbeat();
      await new Promise((r) => setTimeout(r, 200));
    }
  },
});

export default [
  defineTool({
    name: 'shout_text',
    description: 'Shouts a text.',
    input: z.object({ text: z.string().min(1) }),
    run: ({ text }) => text.toUpperCase() + '!',
  }),
];
`,
);

const attempts = () =>
  fs.existsSync(record)
    ? fs
        .readFileSync(record, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { key: string; attempt: number; pid: number })
    : [];

test('worker --tools-module runs a tool from the user’s file; a SIGKILL mid-call retries it elsewhere with the same idempotency key', async () => {
  const taskQueue = uid('own-crash');
  const env = { ...dev.env, DURABLE_AGENT_TASK_QUEUE: taskQueue, DURABLE_AGENT_TOOLS_MODULE: toolsModule };
  const first = await startWorkerProcess(env);
  const agents = new AgentClient({ client: dev.fx.client, taskQueue });
  const run = await agents.start({
    task: 'Look up the thing',
    tools: ['slow_lookup'],
    model: {
      provider: 'scripted',
      turns: [callTurn(['slow_lookup', { what: 'the thing' }, 'c1']), answerTurn('{{last_tool_results}}')],
    },
  });
  const deadline = Date.now() + 60_000;
  while (attempts().length === 0) {
    if (Date.now() > deadline) throw new Error(`the tool never ran: ${first.stderr.join('')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  first.child.kill('SIGKILL');
  await first.exited;
  const second = await startWorkerProcess(env);
  try {
    const result = await run.result();
    expect(result.answer).toBe('found the thing');
    const seen = attempts();
    expect(seen.map((a) => a.attempt)).toEqual([1, 2]);
    expect(new Set(seen.map((a) => a.key))).toEqual(new Set([`${run.id}/c1`]));
    expect(seen[0]?.pid).not.toBe(seen[1]?.pid);
    // The call is in the transcript like a built-in tool's.
    expect(JSON.stringify(await run.transcript())).toContain('slow_lookup');
  } finally {
    second.child.kill('SIGTERM');
    await second.exited;
  }
}, 180_000);

test('durable-agent mcp --tools-module offers a tool of the user’s own; its calls run on a worker of the same module', async () => {
  const taskQueue = uid('own-mcp');
  const env = { ...dev.env, DURABLE_AGENT_TASK_QUEUE: taskQueue, DURABLE_AGENT_TOOLS_MODULE: toolsModule };
  const worker = await startWorkerProcess(env);
  const mcp = new McpClient({ name: 'own-tools-test', version: '1' });
  await mcp.connect(
    new StdioClientTransport({
      command: CLI[0] as string,
      args: [CLI[1] as string, 'mcp', '--tools', 'calculator,shout_text', '--tools-module', toolsModule],
      env: { ...(process.env as Record<string, string>), ...env },
      stderr: 'pipe',
    }),
  );
  try {
    const listed = await mcp.listTools();
    const shout = listed.tools.find((t) => t.name === 'shout_text');
    expect(shout?.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } } });
    const ok = (await mcp.callTool({ name: 'shout_text', arguments: { text: 'hello' } })) as CallToolResult;
    expect(ok.content).toEqual([{ type: 'text', text: 'HELLO!' }]);
    const bad = (await mcp.callTool({ name: 'shout_text', arguments: { text: '' } })) as CallToolResult;
    expect(bad.isError).toBe(true);
  } finally {
    await mcp.close();
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
}, 180_000);
