import type { DatabaseConnectionConfig, DatabasesConfig } from './config';
import { connectionUrlProblem, effectiveConnections, pickConnectionName } from './config';
import { MysqlEngine } from './engines/mysql';
import { PgliteEngine } from './engines/pglite';
import { PostgresEngine } from './engines/postgres';
import type { SqlEngine } from './engines/types';
import { secretsOfUrl, sqlFailure } from './errors';
import { privilegedAbilities, privilegedRoleProblem } from './role-check';

/** Builds the engine of one configured connection; swappable in tests. */
export type EngineFactory = (config: DatabaseConnectionConfig) => SqlEngine;

/** The engine for a connection's `engine` setting. */
export function createEngine(config: DatabaseConnectionConfig): SqlEngine {
  switch (config.engine) {
    case 'postgres':
      return new PostgresEngine(config);
    case 'mysql':
      return new MysqlEngine(config);
    case 'pglite':
      return new PgliteEngine(config);
  }
}

/** A connection a call resolved to. Its config holds the URL: never return it or log it. */
export interface ResolvedConnection {
  name: string;
  config: DatabaseConnectionConfig;
  engine: SqlEngine;
  /** The URL and password, for scrubbing driver messages. */
  secrets: string[];
}

/**
 * The database connections of one worker: one pool (or embedded database) per named connection,
 * created on first use and shared by every call. `close()` ends them; call it on worker shutdown.
 */
export class SqlConnections {
  /** The connections offered: the configured ones, or the `sample` PGlite connection when there are none. */
  readonly configs: DatabasesConfig;
  private readonly engines = new Map<string, SqlEngine>();

  constructor(
    config: DatabasesConfig,
    private readonly factory: EngineFactory = createEngine,
  ) {
    this.configs = effectiveConnections(config);
  }

  /** The connection a call names (see pickConnectionName), or a message for the model. */
  resolve(requested: string | undefined): ResolvedConnection | { error: string } {
    const picked = pickConnectionName(this.configs, requested);
    if (!picked.ok) return { error: picked.message };
    const config = this.configs[picked.name] as DatabaseConnectionConfig;
    let engine = this.engines.get(picked.name);
    if (!engine) {
      // A worker started from a config file has checked this already; one built in code may not have.
      const problem = config.engine === 'pglite' ? null : connectionUrlProblem(config.engine, config.url);
      if (problem) throw sqlFailure('SqlConfigError', `Database connection "${picked.name}": ${problem}`);
      engine = this.factory(config);
      this.engines.set(picked.name, engine);
    }
    return {
      name: picked.name,
      config,
      engine,
      secrets: config.engine === 'pglite' ? [] : secretsOfUrl(config.url),
    };
  }

  private readonly roleChecks = new Map<string, Promise<string | null>>();

  /**
   * Refuses (once per connection, cached) a server connection whose role is privileged, unless it
   * is allowed by configuration. Returns the refusal, or null; a connection failure propagates.
   */
  checkRole(conn: ResolvedConnection): Promise<string | null> {
    if (conn.config.engine === 'pglite') return Promise.resolve(null);
    let check = this.roleChecks.get(conn.name);
    if (!check) {
      const config = conn.config;
      check = privilegedAbilities(conn.engine, config.statementTimeoutMs).then((abilities) =>
        privilegedRoleProblem(conn.name, config, abilities),
      );
      // A failed check (server down) is tried again on the next call.
      check.catch(() => this.roleChecks.delete(conn.name));
      this.roleChecks.set(conn.name, check);
    }
    return check;
  }

  /** Closes every pool and stops every embedded database. Safe to call twice. */
  async close(): Promise<void> {
    const engines = [...this.engines.values()];
    this.engines.clear();
    await Promise.allSettled(engines.map((e) => e.close()));
  }
}

const created = new Set<SqlConnections>();

/** Connections registered for {@link closeSqlConnections} (the default of createSqlActivities). */
export function sharedSqlConnections(config: DatabasesConfig): SqlConnections {
  const c = new SqlConnections(config);
  created.add(c);
  return c;
}

/** Closes the pools of every worker-created SQL activity set. Call after `worker.run()` returns. */
export async function closeSqlConnections(): Promise<void> {
  const all = [...created];
  created.clear();
  await Promise.allSettled(all.map((c) => c.close()));
}
