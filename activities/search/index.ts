import type { ToolActivity } from '../types';
import type { IndexReport } from './kb/indexer';
import type { IndexKnowledgeBaseInput } from './knowledge-base';
import { createKnowledgeBaseActivities } from './knowledge-base';
import type { SearchConfig } from './config';
import { createWebSearch } from './web-search';

/** What the search activities are built from: the worker's search config and a swappable `fetch`. */
export interface SearchActivityDeps {
  search: SearchConfig;
  fetchImpl?: typeof fetch;
}

/** The search activities: the two tools (named after them) and `indexKnowledgeBase` for workflows that add documents. */
export interface SearchActivities {
  knowledge_base_search: ToolActivity;
  web_search: ToolActivity;
  indexKnowledgeBase: (input: IndexKnowledgeBaseInput) => Promise<IndexReport>;
}

/** Creates the search activities from the worker's config. */
export function createSearchActivities(deps: SearchActivityDeps): SearchActivities {
  const kb = createKnowledgeBaseActivities(deps.search.knowledgeBase, deps.fetchImpl);
  return {
    knowledge_base_search: kb.knowledge_base_search as ToolActivity,
    web_search: createWebSearch({ web: deps.search.web, fetchImpl: deps.fetchImpl }) as ToolActivity,
    indexKnowledgeBase: kb.indexKnowledgeBase,
  };
}
