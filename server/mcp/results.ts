/**
 * Tool results of the MCP server, each within a byte budget: a client reads one JSON-RPC message
 * per answer, and nothing a run holds (answers, events, approvals' arguments) may make it unbounded.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { formatBytes, jsonBytes, truncateUtf8 } from '../../shared/temporal-limits';

/**
 * The most one tool result carries, text and structured content together. A run's largest parts
 * (its answer, ≤ 256 KiB; its recent events, ≤ 64 KiB; its pending approvals) fit under it.
 */
export const MCP_RESULT_BYTES = 1024 * 1024;

/** An error result: the message says what is wrong and what to do instead. */
export function errorResult(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/**
 * A result holding `value` as structured content and as its JSON text (for clients that read text
 * only). Over the budget, only the text goes, cut with a notice saying so.
 */
export function jsonResult(value: Record<string, unknown>, isError = false): CallToolResult {
  const text = JSON.stringify(value);
  const error = isError ? { isError: true } : {};
  if (jsonBytes(value) * 2 <= MCP_RESULT_BYTES) {
    return { content: [{ type: 'text', text }], structuredContent: value, ...error };
  }
  const cut = truncateUtf8(text, MCP_RESULT_BYTES, `result (${formatBytes(jsonBytes(value))})`);
  return { content: [{ type: 'text', text: cut.text }], ...error };
}
