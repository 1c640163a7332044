import { noResultsMessage } from '../../shared/citations';

/**
 * The `content` of a search activity's result. The workflow replaces it with the numbered, lean
 * results (see `applyCitations`); it only reaches a model when no workflow numbering happens, so
 * it still says something true and useful on its own.
 */
export function pendingCitationContent(query: string, count: number): string {
  return count === 0
    ? noResultsMessage(query)
    : `Found ${count} result${count === 1 ? '' : 's'} for "${query}"; the agent workflow numbers them for citation.`;
}
