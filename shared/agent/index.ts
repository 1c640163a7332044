/**
 * The agent workflow's public contract: its input (`input.ts`), what its queries and result read
 * (`views.ts`) and its signals, queries and updates (`messages.ts`). What a run carries across
 * continue-as-new is the workflow's own business: workflows/agent/carried-state.ts.
 */
export * from './input';
export * from './output-schema';
export * from './views';
export * from './messages';
export * from './sub-agents';
export * from './questions';
