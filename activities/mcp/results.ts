/**
 * An MCP tool result as the model reads it: text as text; images, audio and binary resources by
 * reference in the content store (the model reads what they are and where); resource links and
 * embedded text resources in words; structured content as JSON when the server sent no text.
 * The tool-result budgets then apply as to every tool (activities/content/tool-results.ts).
 */
import { formatBytes } from '../../shared/temporal-limits';
import type { ToolResult } from '../../shared/tools/define';
import type { ContentStore } from '../content/store';

/** The parts of a `tools/call` result this project reads. */
export interface McpCallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
}

type Block = { type?: unknown } & Record<string, unknown>;

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** Bytes a base64 string decodes to. */
function base64Bytes(data: string): number {
  const pad = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - pad);
}

/** Maps a `tools/call` result to a tool result. */
export async function mcpResultToToolResult(
  server: string,
  tool: string,
  result: McpCallResult,
  store: ContentStore,
): Promise<ToolResult> {
  const parts: string[] = [];
  const blocks = Array.isArray(result.content) ? (result.content as Block[]) : [];
  for (const b of blocks) {
    switch (b.type) {
      case 'text':
        parts.push(str(b.text));
        break;
      case 'image':
      case 'audio': {
        const data = str(b.data);
        const ref = await store.put({ mimeType: str(b.mimeType), data });
        parts.push(
          `[${b.type} ${str(b.mimeType) || 'of unknown type'}, ${formatBytes(base64Bytes(data))}, stored as ${ref}]`,
        );
        break;
      }
      case 'resource_link':
        parts.push(
          `[resource link: ${str(b.name) || str(b.uri)} <${str(b.uri)}>${b.mimeType ? ` (${str(b.mimeType)})` : ''}${b.description ? `: ${str(b.description)}` : ''}]`,
        );
        break;
      case 'resource': {
        const r = (b.resource ?? {}) as Record<string, unknown>;
        if (typeof r.text === 'string') {
          parts.push(`[resource <${str(r.uri)}>${r.mimeType ? ` (${str(r.mimeType)})` : ''}]\n${r.text}`);
        } else {
          const blob = str(r.blob);
          const ref = await store.put({ uri: str(r.uri), mimeType: str(r.mimeType), blob });
          parts.push(
            `[resource <${str(r.uri)}>, ${formatBytes(base64Bytes(blob))} of ${str(r.mimeType) || 'binary data'}, stored as ${ref}]`,
          );
        }
        break;
      }
      default:
        parts.push(`[content of type ${String(b.type)} not shown]`);
    }
  }
  const hasText = parts.some((p) => p.trim() !== '');
  if (!hasText && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent));
  const isError = result.isError === true;
  const content =
    parts.join('\n').trim() ||
    (isError ? `The MCP tool ${tool} failed and said nothing more.` : '(no content)');
  return {
    content,
    ...(isError ? { isError: true } : {}),
    data: {
      mcp: { server, tool },
      ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
    },
  };
}
