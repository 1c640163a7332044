/** Names the per-run file (set by the global setup) where test files share one workflow bundle. */
export const SHARED_BUNDLE_ENV = 'DURABLE_AGENT_TEST_BUNDLE_FILE';
