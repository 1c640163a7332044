import type { DatabasesConfig } from './config';
import { SqlConnections } from './connections';

/** What the worker-start check of the database roles found. */
export interface RoleCheckReport {
  /** Refusals of privileged roles, one per connection; the worker must not start with any. */
  refused: string[];
  /** Connections that could not be checked now (server down); their first call checks again. */
  unchecked: string[];
}

/**
 * Checks every configured server connection's role at worker start, so a privileged role stops the
 * worker before any agent uses it. A server that cannot be reached is reported, not fatal: the
 * tools report it per call and check the role on first use.
 */
export async function checkConnectionRoles(config: DatabasesConfig): Promise<RoleCheckReport> {
  const connections = new SqlConnections(config);
  const report: RoleCheckReport = { refused: [], unchecked: [] };
  try {
    for (const [name, c] of Object.entries(config)) {
      if (c.engine === 'pglite') continue;
      const conn = connections.resolve(name);
      if ('error' in conn) continue;
      try {
        const problem = await connections.checkRole(conn);
        if (problem) report.refused.push(problem);
      } catch {
        report.unchecked.push(name);
      }
    }
  } finally {
    await connections.close();
  }
  return report;
}
