/**
 * Keeps tool results within their budgets at the activity boundary, for every tool alike: small
 * results travel by value; large ones go to the content store and history keeps a reference, a
 * size and a preview. So a tool can return what it finds (up to SIZE_BUDGETS.toolResultBytes) without
 * ever growing a run's history by more than a preview.
 */
import { SIZE_BUDGETS, jsonBytes, truncateUtf8, utf8Bytes } from '../../shared/temporal-limits';
import { compactSearchRecords, searchRecordsOf } from '../../shared/citations';
import { previewOf } from '../../shared/content';
import type { ToolResult } from '../../shared/tools/define';
import type { ContentStore } from './store';

/** Budgets the wrapper applies; the defaults come from shared/temporal-limits.ts. */
export interface ToolResultBudgets {
  /** Largest result kept by value (content and data each). */
  inlineBytes: number;
  /** Preview history keeps of a stored content. */
  previewBytes: number;
  /** Largest content kept at all; more is cut with a notice. */
  maxBytes: number;
}

/** The budgets of shared/temporal-limits.ts. */
export const TOOL_RESULT_BUDGETS: ToolResultBudgets = Object.freeze({
  inlineBytes: SIZE_BUDGETS.inlineToolResultBytes,
  previewBytes: SIZE_BUDGETS.toolResultPreviewBytes,
  maxBytes: SIZE_BUDGETS.toolResultBytes,
});

/**
 * A tool result as history should carry it. Content over `inlineBytes` is stored and replaced by
 * its preview (`contentRef` names the whole); `data` over `inlineBytes` is stored (`dataRef`) and
 * kept compact (search records with snippets, so the run can number citations) or dropped; search
 * data is always stored.
 */
export async function boundToolResult(
  result: ToolResult,
  store: ContentStore,
  budgets: ToolResultBudgets = TOOL_RESULT_BUDGETS,
): Promise<ToolResult> {
  const out: ToolResult = { ...result };
  const content = truncateUtf8(result.content, budgets.maxBytes, 'tool result').text;
  const contentBytes = utf8Bytes(content);
  if (contentBytes > budgets.inlineBytes) {
    out.contentRef = await store.put(content);
    out.contentBytes = contentBytes;
    out.content = previewOf(content, budgets.previewBytes);
  } else {
    out.content = content;
  }
  if (result.data !== undefined) {
    const dataBytes = jsonBytes(result.data);
    const records = searchRecordsOf(result.data);
    // Search results always go by reference: the run numbers them from the compact records, and
    // the model activity renders what the model reads from the stored ones, so history never
    // holds the passages twice.
    if (dataBytes > budgets.inlineBytes || (records && records.length > 0)) {
      out.dataRef = await store.put(result.data);
      out.dataBytes = dataBytes;
      if (records) out.data = { records: compactSearchRecords(records) };
      else delete out.data;
    }
  }
  return out;
}
