/**
 * A server's prompts as a run's templates: `prompts.system` and `prompts.task` of the agent input
 * name `mcp:<server>/prompt/<name>` with its arguments; the `mcpPrompts` activity gets each from its
 * server (`prompts/get`) when the run starts and answers it as text. A prompt that does not exist,
 * arguments it does not declare or lacks, and a text over the run's budget fail the run at start,
 * saying what to fix; a server that cannot be reached is retried.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Prompt } from '@modelcontextprotocol/sdk/types.js';
import { AGENT_TEXT_BUDGETS } from '../../shared/agent/input';
import { formatBytes, utf8Bytes } from '../../shared/temporal-limits';
import type { McpPromptUse, McpPromptsInput, McpPromptsOutput } from '../../shared/tools/mcp';
import { parseMcpPromptRef } from '../../shared/tools/mcp';
import type { ContentStore } from '../content/store';
import type { McpPool } from './pool';
import { mcpResultToToolResult } from './results';

/** Pages of a server's prompt list read to find one. */
const MAX_PROMPT_PAGES = 10;

/** A prompt the run cannot start from, as it names it: not retried. */
function invalid(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: 'McpPromptInvalid', message, nonRetryable: true });
}

async function findPrompt(client: Client, server: string, name: string, timeout: number): Promise<Prompt> {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PROMPT_PAGES; page++) {
    const r = await client.listPrompts(cursor ? { cursor } : {}, { timeout });
    const found = r.prompts.find((p) => p.name === name);
    if (found) return found;
    seen.push(...r.prompts.map((p) => p.name));
    cursor = r.nextCursor;
    if (!cursor) break;
  }
  throw invalid(
    `MCP server "${server}" has no prompt "${name}"; its prompts: ${seen.join(', ') || '(none)'}`,
  );
}

/** The prompt's messages as one text: a lone user message as it is, several each under its role. */
async function render(
  server: string,
  name: string,
  messages: { role: string; content: unknown }[],
  store: ContentStore,
): Promise<string> {
  const parts: { role: string; text: string }[] = [];
  for (const m of messages) {
    const { content } = await mcpResultToToolResult(
      server,
      `prompt/${name}`,
      { content: [m.content] },
      store,
    );
    parts.push({ role: m.role, text: content });
  }
  if (parts.length === 1 && parts[0]?.role === 'user') return parts[0].text;
  return parts.map((p) => `${p.role === 'assistant' ? 'Assistant' : 'User'}: ${p.text}`).join('\n\n');
}

/** One prompt, got from its server with its arguments checked against what it declares. */
async function getPrompt(
  pool: McpPool,
  store: ContentStore,
  use: McpPromptUse,
  budget: { what: string; bytes: number },
): Promise<string> {
  const ref = parseMcpPromptRef(use.prompt);
  if (typeof ref === 'string') throw invalid(ref);
  const { server, prompt } = ref;
  if (!pool.serverNames().includes(server)) {
    throw invalid(
      `unknown MCP server "${server}" (in "${use.prompt}"); configured servers: ${pool.serverNames().join(', ') || '(none)'}`,
    );
  }
  const { connectTimeoutMs, callTimeoutMs } = pool.server(server);
  const args = use.arguments ?? {};
  let messages;
  try {
    messages = await pool.use(server, async (client) => {
      if (!client.getServerCapabilities()?.prompts) throw invalid(`MCP server "${server}" offers no prompts`);
      const declared = await findPrompt(client, server, prompt, connectTimeoutMs);
      const names = (declared.arguments ?? []).map((a) => a.name);
      const unknown = Object.keys(args).filter((a) => !names.includes(a));
      const missing = (declared.arguments ?? [])
        .filter((a) => a.required && !(a.name in args))
        .map((a) => a.name);
      if (unknown.length || missing.length) {
        throw invalid(
          `the prompt ${use.prompt}${missing.length ? ` needs the argument${missing.length > 1 ? 's' : ''} ${missing.join(', ')}` : ''}${
            missing.length && unknown.length ? ' and' : ''
          }${unknown.length ? ` has no argument${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}` : ''}; its arguments: ${
            (declared.arguments ?? []).map((a) => `${a.name}${a.required ? ' (required)' : ''}`).join(', ') ||
            '(none)'
          }`,
        );
      }
      return (await client.getPrompt({ name: prompt, arguments: args }, { timeout: callTimeoutMs })).messages;
    });
  } catch (err) {
    if (err instanceof ApplicationFailure) throw err;
    // The server refused the arguments or the prompt: the run's input must change.
    if (err instanceof McpError)
      throw invalid(`MCP server "${server}" refused the prompt ${use.prompt}: ${pool.redact(err.message)}`);
    throw ApplicationFailure.retryable(pool.redact((err as Error).message), 'McpServerUnavailable');
  }
  const text = await render(server, prompt, messages, store);
  const bytes = utf8Bytes(text);
  if (bytes > budget.bytes) {
    throw invalid(
      `the prompt ${use.prompt} is ${formatBytes(bytes)} as text, over the ${formatBytes(budget.bytes)} ${budget.what} may take`,
    );
  }
  return text;
}

/** The `mcpPrompts` activity: the run's system and task prompts as text. */
export async function renderPrompts(
  pool: McpPool,
  store: ContentStore,
  input: McpPromptsInput,
): Promise<McpPromptsOutput> {
  const out: McpPromptsOutput = {};
  if (input.system)
    out.system = await getPrompt(pool, store, input.system, {
      what: 'a system prompt',
      bytes: AGENT_TEXT_BUDGETS.system,
    });
  if (input.task)
    out.task = await getPrompt(pool, store, input.task, { what: 'a task', bytes: AGENT_TEXT_BUDGETS.task });
  return out;
}
