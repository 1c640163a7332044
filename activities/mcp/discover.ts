/**
 * Discovery: the tools a run's `mcp:` references name, as the model will see them. Runs as the
 * `mcpDiscover` activity when a run starts and again when a server's tool list changed; the run
 * keeps the answer (its catalog) instead of listing tools on every step.
 */
import { log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ServerCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import { SIZE_BUDGETS, formatBytes, jsonBytes } from '../../shared/temporal-limits';
import type { McpCatalog, McpDiscoverInput, McpSkippedTool, McpToolSpec } from '../../shared/tools/mcp';
import { MCP_RESOURCES_TOOL, mcpToolId, modelNameFor, parseMcpRef } from '../../shared/tools/mcp';
import { jsonSchemaProblems } from '../../shared/tools/json-schema-check';
import type { ContentStore } from '../content/store';
import type { McpResourceListing } from './listings';
import type { McpPool } from './pool';
import { resourcesToolSpec } from './resources';

/** What the model is offered for one MCP tool (stored once per catalog, named by its reference). */
export interface McpModelToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** The longest reason a skipped tool is given: it goes into an event of the run (400 bytes of text). */
const MAX_REASON_CHARS = 360;

/**
 * Why a tool's input schema cannot be offered, or null when it can be: the workflow checks every
 * call's arguments against it (shared/tools/json-schema-check.ts), so only a schema that check
 * cannot follow is refused: one that is not valid JSON Schema, refers outside itself, loops without
 * a base case, or is over its budget.
 */
export function schemaProblem(schema: unknown): string | null {
  if (!schema || typeof schema !== 'object' || (schema as { type?: unknown }).type !== 'object') {
    return 'its input schema is not a JSON Schema of type "object"';
  }
  const problems = jsonSchemaProblems(schema);
  if (problems.length === 0) return null;
  // The reason goes into the run's events and the worker's log: the first few problems say enough.
  const reason = `its input schema cannot be checked: ${problems.slice(0, 3).join('; ')}${problems.length > 3 ? '; and more' : ''}`;
  return reason.length > MAX_REASON_CHARS ? `${reason.slice(0, MAX_REASON_CHARS - 1)}…` : reason;
}

/** Lists the servers' tools and builds the run's catalog; unknown names fail, listing what exists. */
export async function discover(
  pool: McpPool,
  store: ContentStore,
  input: McpDiscoverInput,
): Promise<McpCatalog> {
  const problems: string[] = [];
  const wanted = new Map<string, Set<string> | 'all'>();
  for (const ref of input.refs) {
    const parsed = parseMcpRef(ref);
    if (typeof parsed === 'string') {
      problems.push(parsed);
      continue;
    }
    if (!pool.serverNames().includes(parsed.server)) {
      problems.push(
        `unknown MCP server "${parsed.server}" (in "${ref}"); configured servers: ${pool.serverNames().join(', ') || '(none: add an "mcp" section to the worker config)'}`,
      );
      continue;
    }
    const have = wanted.get(parsed.server);
    if (parsed.tool === undefined) wanted.set(parsed.server, 'all');
    else if (have !== 'all') wanted.set(parsed.server, new Set([...(have ?? []), parsed.tool]));
  }
  const listed = new Map<string, { tools: Tool[]; digest: string; capabilities: ServerCapabilities }>();
  const resources = new Map<string, McpResourceListing>();
  for (const [server, want] of wanted) {
    try {
      const l = await pool.tools(server);
      listed.set(server, l);
      if (l.capabilities.resources && (want === 'all' || want.has(MCP_RESOURCES_TOOL)))
        resources.set(server, await pool.resources(server));
    } catch (err) {
      // A server that cannot start or answer now may later: the activity retries.
      throw ApplicationFailure.retryable(pool.redact((err as Error).message), 'McpServerUnavailable');
    }
  }
  for (const [server, want] of wanted) {
    if (want === 'all') continue;
    const names = (listed.get(server)?.tools ?? []).map((t) => t.name);
    for (const tool of want) {
      if (tool === MCP_RESOURCES_TOOL) {
        if (!resources.has(server)) problems.push(`MCP server "${server}" offers no resources`);
      } else if (!names.includes(tool)) {
        problems.push(
          `MCP server "${server}" has no tool "${tool}"; its tools: ${names.join(', ') || '(none)'}`,
        );
      }
    }
  }
  if (problems.length > 0) {
    throw ApplicationFailure.create({
      type: 'McpToolsUnknown',
      message: problems.join('; '),
      nonRetryable: true,
    });
  }

  const taken = new Set(input.reserved);
  const tools: McpToolSpec[] = [];
  const skipped: McpSkippedTool[] = [];
  let catalogBytes = 0;
  const offer = (spec: McpToolSpec, skip: (reason: string) => void): void => {
    const bytes = jsonBytes(spec);
    if (bytes > SIZE_BUDGETS.mcpToolSpecBytes) {
      skip(
        `its description and schema take ${formatBytes(bytes)}, over the ${formatBytes(SIZE_BUDGETS.mcpToolSpecBytes)} one tool may`,
      );
    } else if (catalogBytes + bytes > SIZE_BUDGETS.mcpCatalogBytes) {
      skip(
        `the run's MCP tools are over their ${formatBytes(SIZE_BUDGETS.mcpCatalogBytes)} budget; enable fewer by mcp:<server>/<tool>`,
      );
    } else {
      catalogBytes += bytes;
      taken.add(spec.name);
      tools.push(spec);
    }
  };
  for (const [server, want] of wanted) {
    const skipper =
      (tool: string) =>
      (reason: string): void => {
        skipped.push({ server, tool, reason });
        log.warn('MCP tool skipped', { tool: mcpToolId(server, tool), reason });
      };
    for (const t of listed.get(server)?.tools ?? []) {
      if (want !== 'all' && !want.has(t.name)) continue;
      const skip = skipper(t.name);
      if (t.execution?.taskSupport === 'required') {
        skip('it runs only as an MCP task (taskSupport "required"), and this client calls tools directly');
        continue;
      }
      const problem = schemaProblem(t.inputSchema);
      if (problem) {
        skip(problem);
        continue;
      }
      const name = modelNameFor(server, t.name, taken);
      if (name === null) {
        skip('its name clashes with another tool of the run; enable one of them by mcp:<server>/<tool>');
        continue;
      }
      offer(
        {
          server,
          tool: t.name,
          name,
          description: t.description ?? t.annotations?.title ?? t.title ?? '',
          inputSchema: t.inputSchema,
          ...(t.annotations?.readOnlyHint ? { readOnly: true } : {}),
          ...(t.annotations?.idempotentHint ? { idempotent: true } : {}),
        },
        skip,
      );
    }
    const listing = resources.get(server);
    if (listing) {
      const spec = resourcesToolSpec(server, listing);
      if (taken.has(spec.name))
        skipper(MCP_RESOURCES_TOOL)(`its name ${spec.name} clashes with another tool of the run`);
      else offer(spec, skipper(MCP_RESOURCES_TOOL));
    }
  }
  const modelSpecs: McpModelToolSpec[] = tools.map((t) => ({
    name: t.name,
    description: t.description,
    parameters: t.inputSchema,
  }));
  return {
    tools,
    skipped,
    digests: Object.fromEntries([...listed].map(([server, l]) => [server, l.digest])),
    specsRef: await store.put(modelSpecs),
  };
}
