import { SIZE_BUDGETS } from '../../shared/temporal-limits';
import type { CitationState } from '../../shared/citations';
import {
  DEFAULT_MAX_TEXT_CHARS,
  applyCitations,
  boundCitationState,
  createCitationState,
  resolveCitations,
  searchRecordsOf,
} from '../../shared/citations';
import { previewOf } from '../../shared/content';
import type { ToolMessageContent } from '../../shared/conversation';
import type { ToolDefinition, ToolResult } from '../../shared/tools/define';

/** A run's citations: search results numbered across every search of the run, within their budget. */
export class RunCitations {
  /** Carried over continue-as-new. */
  state: CitationState;

  constructor(carried: CitationState | undefined) {
    this.state = carried ?? createCitationState();
  }

  /**
   * Numbers the records of a search tool's result for citation (`[[a1]]`), counting on across every
   * search of the run, and returns what the model reads: rendered now for small results, or by the
   * model activity from the stored records for large ones. Undefined for other tools.
   */
  cite(def: ToolDefinition, args: unknown, result: ToolResult): ToolMessageContent | undefined {
    if (def.category !== 'search') return undefined;
    const records = searchRecordsOf(result.data);
    if (!records) return undefined;
    const query = (args as { query?: unknown } | undefined)?.query;
    const applied = applyCitations(this.state, records, typeof query === 'string' ? { query } : {});
    this.state = boundCitationState(applied.state, SIZE_BUDGETS.citationsBytes);
    if (!result.dataRef || applied.picks.length === 0) return applied.content;
    return {
      search: result.dataRef,
      picks: applied.picks,
      maxTextChars: DEFAULT_MAX_TEXT_CHARS,
      preview: previewOf(
        applied.records.map((r) => `[${r.sign}${r.cite_index}] ${r.title}`).join('; '),
        SIZE_BUDGETS.toolResultPreviewBytes,
      ),
      bytes: result.dataBytes ?? 0,
    };
  }

  /** Keeps fewer snippets when the state carried over continue-as-new must shrink. */
  shrink(bytes: number): void {
    this.state = boundCitationState(this.state, bytes);
  }

  /** The `citations` query's answer. */
  resolved(): ReturnType<typeof resolveCitations> {
    return resolveCitations(this.state);
  }
}
