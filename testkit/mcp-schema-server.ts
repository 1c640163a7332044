/**
 * An MCP server (the SDK's own, over stdio) that offers whatever tools a JSON file lists, with
 * their input schemas exactly as written there, and answers every call with the arguments it
 * received, as JSON. Tests use it to offer the captured schema corpus and bad schemas through real
 * discovery, and to see what a call really sends.
 *
 *   node --import tsx testkit/mcp-schema-server.ts <tools.json>
 *
 * where tools.json is `[{ "name", "description", "inputSchema" }, …]`.
 */
import fs from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';

const file = process.argv[2];
if (!file) throw new Error('usage: mcp-schema-server.ts <tools.json>');
const tools = JSON.parse(fs.readFileSync(file, 'utf8')) as Tool[];
const server = new Server({ name: 'schema-fixtures', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, (req) => ({
  content: [
    { type: 'text', text: JSON.stringify({ tool: req.params.name, arguments: req.params.arguments ?? {} }) },
  ],
}));
void server.connect(new StdioServerTransport());
