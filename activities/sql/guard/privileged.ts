/**
 * Privileged catalogs, settings and functions, per dialect: what a role with more rights than the
 * agent needs could read through an otherwise harmless SELECT — password hashes, server
 * configuration files, other sessions' SQL. The least-privilege role is the real boundary (the
 * server refuses these to it); this list makes the refusal explicit, with the reason, on any role.
 */

/** Postgres relations (tables and views, in any schema) that are refused, with the reason. */
const PG_RELATIONS: ReadonlyMap<string, string> = new Map([
  ['pg_authid', 'holds every role’s password hash'],
  ['pg_shadow', 'holds every role’s password hash'],
  ['pg_user_mapping', 'holds passwords for foreign servers'],
  ['pg_user_mappings', 'holds passwords for foreign servers'],
  ['pg_subscription', 'holds replication connection strings with passwords'],
  ['pg_hba_file_rules', 'shows the server’s client authentication file'],
  ['pg_ident_file_mappings', 'shows the server’s identity map file'],
  ['pg_file_settings', 'shows the server’s configuration files'],
  ['pg_settings', 'shows server settings, including file paths and connection settings'],
  ['pg_config', 'shows how and where the server was built and installed'],
  ['pg_stat_activity', 'shows other sessions’ running SQL and client addresses'],
  ['pg_stat_statements', 'shows other users’ SQL text'],
  ['pg_stat_replication', 'shows replication connections and their addresses'],
  ['pg_stat_wal_receiver', 'shows the replication connection string'],
  ['pg_stat_ssl', 'shows other sessions’ client certificates'],
  ['pg_stat_gssapi', 'shows other sessions’ authentication principals'],
  ['pg_locks', 'shows what other sessions are doing'],
  ['pg_prepared_xacts', 'shows other sessions’ prepared transactions'],
  ['pg_largeobject', 'holds large objects, which may be server files'],
  ['pg_backend_memory_contexts', 'shows server memory internals'],
  ['pg_shmem_allocations', 'shows server memory internals'],
]);

/** Postgres settings SHOW refuses (besides SHOW ALL): paths, files, and connection settings. */
const PG_SETTINGS =
  /^(all|data_directory|config_file|hba_file|ident_file|external_pid_file|ssl_\w+_file|ssl_passphrase_command|archive_command|restore_command|primary_conninfo|log_directory|unix_socket_directories|shared_preload_libraries|dynamic_library_path|local_preload_libraries|session_preload_libraries)$/;

/** The reason a Postgres relation may not be read, or undefined. */
export function deniedPgRelation(name: string): string | undefined {
  return PG_RELATIONS.get(name.toLowerCase());
}

/** The reason a Postgres `SHOW name` is refused, or undefined. */
export function deniedPgSetting(name: string): string | undefined {
  const n = name.toLowerCase();
  if (n === 'all') return 'lists every server setting, including file paths and connection settings';
  return PG_SETTINGS.test(n) ? 'names a server file, command or connection setting' : undefined;
}

/** MySQL/MariaDB schemas refused as a whole, with the reason. */
const MYSQL_SCHEMAS: ReadonlyMap<string, string> = new Map([
  [
    'mysql',
    'is the server’s own schema: accounts, password hashes (mysql.user, mysql.global_priv) and privileges',
  ],
  ['performance_schema', 'shows other sessions’ SQL, accounts and hosts'],
  ['sys', 'shows other sessions’ SQL, accounts and hosts'],
]);

/** information_schema tables refused, with the reason. */
const MYSQL_INFO_TABLES: ReadonlyMap<string, string> = new Map([
  ['processlist', 'shows other sessions’ running SQL and hosts'],
  ['user_privileges', 'lists every account’s global privileges'],
  ['user_statistics', 'shows other accounts’ activity'],
  ['client_statistics', 'shows other clients’ addresses and activity'],
  ['global_variables', 'shows server settings, including file paths'],
  ['session_variables', 'shows server settings, including file paths'],
  ['global_status', 'shows server internals'],
  ['plugins', 'shows server plugins and their libraries'],
]);

/** The reason a MySQL/MariaDB table may not be read, or undefined. `db` is null when unqualified. */
export function deniedMysqlTable(db: string | null, table: string): string | undefined {
  const schema = db?.toLowerCase();
  if (schema === undefined) return undefined;
  const whole = MYSQL_SCHEMAS.get(schema);
  if (whole) return whole;
  if (schema === 'information_schema') return MYSQL_INFO_TABLES.get(table.toLowerCase());
  return undefined;
}

/** MySQL/MariaDB `@@` system variables refused: file paths and server secrets. */
const MYSQL_VARIABLES =
  /^(datadir|basedir|tmpdir|plugin_dir|secure_file_priv|general_log_file|slow_query_log_file|log_error|pid_file|socket|ssl_\w+|init_file|init_connect|.*password.*|.*_key.*)$/;

/** The reason reading `@@name` is refused, or undefined. */
export function deniedMysqlVariable(name: string): string | undefined {
  return MYSQL_VARIABLES.test(name.toLowerCase().replace(/^(global|session)\./, ''))
    ? 'names a server file path, key or password setting'
    : undefined;
}
