/**
 * Least privilege, enforced: a connection whose role could read other accounts' password hashes,
 * server files or every database (a Postgres superuser or a role with CREATEROLE / REPLICATION /
 * BYPASSRLS; a MySQL/MariaDB account with global privileges) is refused unless its configuration
 * says `allowPrivilegedRole: true`. The guard's deny-list is the second line; the role is the first.
 */
import type { DatabaseConnectionConfig } from './config';
import type { SqlEngine } from './engines/types';

/** What the role can do that an agent's role should not, or an empty list. */
export async function privilegedAbilities(engine: SqlEngine, timeoutMs: number): Promise<string[]> {
  return engine.session(
    async (s) => {
      if (engine.dialect === 'postgres') {
        const r = await s.query(
          'SELECT rolsuper, rolcreaterole, rolreplication, rolbypassrls FROM pg_roles WHERE rolname = current_user',
        );
        const [superuser, createrole, replication, bypassrls] = r.rows[0] ?? [];
        return [
          ...(superuser === true ? ['is a superuser'] : []),
          ...(createrole === true ? ['can create roles (CREATEROLE)'] : []),
          ...(replication === true ? ['can start replication (REPLICATION)'] : []),
          ...(bypassrls === true ? ['bypasses row-level security (BYPASSRLS)'] : []),
        ];
      }
      const r = await s.query('SHOW GRANTS');
      const global = r.rows
        .map((row) => (typeof row[0] === 'string' ? row[0] : ''))
        .filter((g) => /\bON \*\.\*/i.test(g) && !/^GRANT USAGE ON \*\.\*/i.test(g));
      return global.map((g) => `has global privileges (${g.replace(/ TO .*$/i, '').trim()})`);
    },
    { timeoutMs },
  );
}

/** How to create a least-privilege role for a connection, shown when a privileged one is refused. */
export function leastPrivilegeRecipe(engine: 'postgres' | 'mysql' | 'pglite'): string {
  return engine === 'mysql'
    ? "CREATE USER 'agent'@'%' IDENTIFIED BY '…'; GRANT SELECT ON app.* TO 'agent'@'%'; (add INSERT, UPDATE, DELETE on the tables a writable connection changes)"
    : "CREATE ROLE agent LOGIN PASSWORD '…'; GRANT USAGE ON SCHEMA app TO agent; GRANT SELECT ON ALL TABLES IN SCHEMA app TO agent; (add INSERT, UPDATE, DELETE on the tables a writable connection changes)";
}

/** The refusal message for a privileged role, or null when the connection may be used. */
export function privilegedRoleProblem(
  name: string,
  config: DatabaseConnectionConfig,
  abilities: readonly string[],
): string | null {
  if (abilities.length === 0 || config.allowPrivilegedRole) return null;
  return (
    `Database connection "${name}" logs in with a role that ${abilities.join(', ')}; ` +
    'an agent could read password hashes, server files or other sessions through it. ' +
    `Connect as a least-privilege role instead: ${leastPrivilegeRecipe(config.engine)}. ` +
    `Or, knowingly, set databases.${name}.allowPrivilegedRole: true.`
  );
}
