import { z } from 'zod';

const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

const Common = {
  /** How long one call may take before the model is told it timed out. */
  callTimeoutMs: z.number().int().min(100).max(3_600_000).default(60_000),
  /** How long discovery (connect + list every tool) may take. */
  connectTimeoutMs: z.number().int().min(100).max(300_000).default(30_000),
};

const StdioServerSchema = z
  .object({
    command: z.string().min(1).describe('Program that runs the server, e.g. "npx" or "node"'),
    args: z.array(z.string()).default([]),
    env: z
      .record(z.string(), z.string())
      .default({})
      .describe('Extra environment of the server process; write "${env:NAME}" for secrets'),
    cwd: z.string().min(1).optional(),
    ...Common,
  })
  .strict();

const HttpServerSchema = z
  .object({
    url: z.url({ message: 'must be the server’s Streamable HTTP URL, e.g. http://127.0.0.1:3001/mcp' }),
    headers: z
      .record(z.string(), z.string())
      .default({})
      .describe('Request headers, e.g. Authorization; write "${env:NAME}" for secrets'),
    ...Common,
  })
  .strict();

/** One MCP server: a program to run over stdio, or a Streamable HTTP endpoint. */
export const McpServerSchema = z.union([StdioServerSchema, HttpServerSchema], {
  error:
    'an MCP server is either { "command", "args", "env", "cwd" } (stdio) or { "url", "headers" } (Streamable HTTP)',
});

/** The `mcp` section of the config file. */
export const McpConfigSchema = z
  .object({
    servers: z
      .record(
        z.string().regex(SERVER_NAME, 'server names are 1–64 letters, digits, "_" or "-"'),
        McpServerSchema,
      )
      .default({}),
    /** A pooled connection unused this long is closed (a stdio server's process ends). */
    idleTimeoutMs: z.number().int().min(1000).max(86_400_000).default(300_000),
  })
  .strict();

/** The worker's MCP servers, by name. */
export type McpConfig = z.output<typeof McpConfigSchema>;
/** One configured MCP server. */
export type McpServerConfig = z.output<typeof McpServerSchema>;

/** Every value of the section that may be a secret: server environments and request headers. */
export function mcpSecrets(config: McpConfig): string[] {
  return Object.values(config.servers).flatMap((s) =>
    'url' in s ? Object.values(s.headers) : Object.values(s.env),
  );
}
