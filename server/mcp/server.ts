/**
 * The durable-agent MCP server: an `McpServer` over a Temporal client, served over stdio by
 * `durable-agent mcp` and over Streamable HTTP at `/mcp` of the HTTP API. It offers (a) the built-in
 * tools it is told to (each call a durable `toolCallWorkflow`), and (b) agent runs: start, read,
 * approve, cancel, and `agent_run` as an MCP Task whose id is the run's workflow id. It holds no
 * state of its own and no secret of the worker's: everything it answers is read from Temporal.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Client } from '@temporalio/client';
import { PROJECT_ROOT } from '../../shared/project-root';
import { registerQuestionTools } from './questions';
import { registerRunTools } from './runs';
import { TemporalTaskStore } from './task-store';
import { DEFAULT_MCP_TOOLS, registerBuiltInTools } from './tools';

export { DEFAULT_MCP_TOOLS, OFFERABLE_TOOLS, checkOfferedTools } from './tools';

/** The server's name and version in the MCP handshake. */
export const MCP_SERVER_INFO = { name: 'durable-agent', version: '0.1.0' } as const;

/**
 * Most elements (array items, object fields, nested) one call's arguments may hold: tool arguments
 * are small objects, and this bounds the work a hostile request makes before any schema runs.
 */
const MAX_TOOL_INPUT_ELEMENTS = 10_000;

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  client: Client;
  /** Task queue runs and tool calls start on (the worker's). */
  taskQueue: string;
  /** Built-in tools to offer; default {@link DEFAULT_MCP_TOOLS}. */
  tools?: readonly string[];
  /** Folder of scripted-model files, to enable the tools a script calls (default examples/scripts). */
  scriptsDir?: string;
}

/** Builds the server; connect it to a transport (stdio, Streamable HTTP). Throws on a tool it cannot offer. */
export function createMcpServer(opts: McpServerOptions): McpServer {
  const store = new TemporalTaskStore(opts.client);
  const server = new McpServer(MCP_SERVER_INFO, {
    // logging: a tool call says which durable workflow runs it (at `info`; the client sets the level).
    capabilities: {
      logging: {},
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    },
    taskStore: store,
    maxToolInputElements: MAX_TOOL_INPUT_ELEMENTS,
    instructions:
      'Agent runs are durable Temporal workflows: agent_start (or agent_run as a task) starts one, ' +
      'agent_status reads it by id at any time, also after this server restarted. A run that asks ' +
      '(input_required) is answered with agent_answer.',
  });
  registerBuiltInTools(
    server,
    { client: opts.client, taskQueue: opts.taskQueue, connectionId: randomUUID() },
    opts.tools ?? DEFAULT_MCP_TOOLS,
  );
  registerRunTools(server, {
    client: opts.client,
    taskQueue: opts.taskQueue,
    scriptsDir: opts.scriptsDir ?? path.join(PROJECT_ROOT, 'examples', 'scripts'),
    store,
  });
  registerQuestionTools(server, opts.client);
  return server;
}
