/**
 * A server's resources, for the agent: one tool per server (`<server>__resources`, enabled by
 * `mcp:<server>` or `mcp:<server>/resources/*`) that lists them (no arguments) or reads one (`uri`).
 * Its description names the resources the server had when the run discovered its tools, so the
 * model can read one without listing first; a server that says its resource list changed makes the
 * run discover again, as a changed tool list does. What a read returns goes through the same
 * mapping as tool results (text as text, binary content by reference in the content store) and
 * then the tool-result budgets (a large text by reference too).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import { formatBytes, utf8Bytes } from '../../shared/temporal-limits';
import type { ToolResult } from '../../shared/tools/define';
import type { McpToolSpec } from '../../shared/tools/mcp';
import { MCP_RESOURCES_TOOL } from '../../shared/tools/mcp';
import type { ContentStore } from '../content/store';
import type { McpResourceListing } from './listings';
import { mcpResultToToolResult } from './results';

/** The part of the tool's description that names resources; past it, it says how many more. */
const DESCRIPTION_LISTING_BYTES = 3 * 1024;
/** Resources one listing shows (a server's page may hold more; the model asks for the next page). */
const LISTING_ITEMS = 200;
/** The longest description of one resource in a listing. */
const ITEM_DESCRIPTION_CHARS = 160;

/** The arguments of the resources tool. */
const RESOURCES_SCHEMA = {
  type: 'object',
  properties: {
    uri: {
      type: 'string',
      minLength: 1,
      description:
        'The URI of the resource to read, from the list (or a template with its {…} filled in). Omit it to list the resources.',
    },
    cursor: {
      type: 'string',
      description: 'To list the next page: the cursor the previous listing gave.',
    },
  },
  additionalProperties: false,
} as const;

/** The name the model calls a server's resources tool by. */
export function resourcesToolName(server: string): string {
  return `${server}__resources`.slice(0, 64);
}

function clip(text: string, chars: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > chars ? `${flat.slice(0, chars - 1)}…` : flat;
}

function resourceLine(r: Resource): string {
  const about = [r.mimeType, typeof r.size === 'number' ? formatBytes(r.size) : undefined]
    .filter(Boolean)
    .join(', ');
  const description = r.description ? `: ${clip(r.description, ITEM_DESCRIPTION_CHARS)}` : '';
  return `- ${r.name} <${r.uri}>${about ? ` (${about})` : ''}${description}`;
}

function templateLine(t: ResourceTemplate): string {
  const description = t.description ? `: ${clip(t.description, ITEM_DESCRIPTION_CHARS)}` : '';
  return `- ${t.uriTemplate} (${t.name}${t.mimeType ? `, ${t.mimeType}` : ''})${description}`;
}

/** The resources tool of `server`, as discovery offers it (its description names what the server has). */
export function resourcesToolSpec(server: string, listing: McpResourceListing): McpToolSpec {
  const lines: string[] = [];
  let bytes = 0;
  let shown = 0;
  const items: [string, string][] = [
    ...listing.resources.map((r): [string, string] => ['resource', resourceLine(r)]),
    ...listing.templates.map((t): [string, string] => ['template', templateLine(t)]),
  ];
  for (const [kind, line] of items) {
    if (bytes + utf8Bytes(line) > DESCRIPTION_LISTING_BYTES) break;
    if (kind === 'template' && !lines.includes('Templates:')) lines.push('Templates:');
    lines.push(line);
    bytes += utf8Bytes(line) + 1;
    shown += 1;
  }
  const rest = items.length - shown;
  const description = [
    `Lists and reads the resources of the MCP server "${server}". Call it without arguments to list them; with "uri" to read one (text as text; images and binary content are stored and named by reference).`,
    listing.resources.length + listing.templates.length === 0
      ? 'It has none listed now.'
      : `It has${listing.more ? ' at least' : ''} ${listing.resources.length} resources and ${listing.templates.length} templates:`,
    ...(lines[0] === 'Templates:' ? lines : lines.length ? ['Resources:', ...lines] : []),
    ...(rest > 0 || listing.more
      ? [`… and ${listing.more ? 'more' : `${rest} more`}: list them to see all.`]
      : []),
  ].join('\n');
  return {
    server,
    tool: MCP_RESOURCES_TOOL,
    name: resourcesToolName(server),
    description,
    inputSchema: RESOURCES_SCHEMA,
    readOnly: true,
    idempotent: true,
    resources: true,
  };
}

/** One call of the resources tool: a page of the list, or one resource read. */
export async function callResourcesTool(
  client: Client,
  server: string,
  args: unknown,
  store: ContentStore,
  options: { timeout: number; signal: AbortSignal },
): Promise<ToolResult> {
  const a = (args ?? {}) as { uri?: string; cursor?: string };
  if (typeof a.uri === 'string') {
    const read = await client.readResource({ uri: a.uri }, options);
    const content = read.contents.map((resource) => ({ type: 'resource', resource }));
    const result = await mcpResultToToolResult(server, MCP_RESOURCES_TOOL, { content }, store);
    return content.length ? result : { ...result, content: `The resource <${a.uri}> has no contents.` };
  }
  const page = await client.listResources(a.cursor ? { cursor: a.cursor } : {}, options);
  // Templates once, with the first page; a server without any may not answer the request at all.
  const templates = a.cursor
    ? []
    : await client
        .listResourceTemplates({}, options)
        .then((r) => r.resourceTemplates)
        .catch(() => []);
  const shown = page.resources.slice(0, LISTING_ITEMS);
  const lines = [
    `Resources of "${server}"${a.cursor ? ' (next page)' : ''}: ${page.resources.length}${page.resources.length > shown.length ? `, the first ${shown.length} shown` : ''}.`,
    ...shown.map(resourceLine),
    ...(templates.length
      ? [
          'Templates (fill in each {…} and read the URI):',
          ...templates.slice(0, LISTING_ITEMS).map(templateLine),
        ]
      : []),
    ...(page.nextCursor ? [`More follow: call again with cursor ${JSON.stringify(page.nextCursor)}.`] : []),
  ];
  return {
    content: lines.join('\n'),
    data: {
      mcp: { server, tool: MCP_RESOURCES_TOOL },
      resources: shown.map((r) => ({
        uri: r.uri,
        name: r.name,
        ...(r.mimeType ? { mimeType: r.mimeType } : {}),
      })),
      ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    },
  };
}
