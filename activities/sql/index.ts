import type { ToolActivity } from '../types';
import type { DatabasesConfig } from './config';
import type { SqlConnections } from './connections';
import { sharedSqlConnections } from './connections';
import type { SqlQueryDeps, SqlQueryInput } from './query';
import { sqlQuery } from './query';
import type { SqlSchemaInput } from './schema';
import { SchemaCache, sqlSchema } from './schema';

export { closeSqlConnections, SqlConnections } from './connections';

/** What the SQL activities are built from. */
export interface SqlActivityDeps {
  /** The `databases` section of the worker config (connections by name). */
  config: DatabasesConfig;
  /** Connections to use (tests, benchmarks); by default a set closed by closeSqlConnections(). */
  connections?: SqlConnections;
  /** Replaces the statement guard (tests of the later safety layers only). */
  guard?: SqlQueryDeps['guard'];
  /** Test-only pause inside sql_query; defaults to each connection's `testHooks`. */
  stall?: SqlQueryDeps['stall'];
}

/**
 * The `sql_query` and `sql_schema` activities, named after their tools. Connections are resolved by
 * name on each call; with no databases configured, the `sample` PGlite connection serves the
 * shipped sample database.
 */
export function createSqlActivities(deps: SqlActivityDeps): Record<'sql_query' | 'sql_schema', ToolActivity> {
  const connections = deps.connections ?? sharedSqlConnections(deps.config);
  const cache = new SchemaCache();
  const queryDeps: SqlQueryDeps = { connections, guard: deps.guard, stall: deps.stall };
  return {
    sql_query: (input) => sqlQuery(queryDeps, input as SqlQueryInput),
    sql_schema: (input) => sqlSchema({ connections, cache }, input as SqlSchemaInput),
  };
}
