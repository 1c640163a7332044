/**
 * Which function calls the guard refuses, by name.
 *
 * Functions are judged by name because the parser cannot see what a function does. An allow-list of
 * every function an analytics query may use would refuse user-defined and extension functions that
 * legitimate schemas rely on, so this is a deny-list of the families that reach outside the query
 * (sleeping, files, the network, other sessions, locks, SQL given as text, non-transactional writes),
 * plus one allow-list where it matters most: PostgreSQL's `pg_*` namespace, where administrative
 * functions live, is refused except for known harmless helpers. Whatever a user-defined function
 * does is bounded by the READ ONLY transaction and the least-privilege role, not by this file.
 */

/** Harmless `pg_*` functions: sizes, catalog pretty-printers, visibility tests, snapshots, stats readers. */
const PG_PREFIX_ALLOWED = new Set([
  'pg_typeof',
  'pg_size_pretty',
  'pg_size_bytes',
  'pg_column_size',
  'pg_column_compression',
  'pg_table_size',
  'pg_indexes_size',
  'pg_relation_size',
  'pg_total_relation_size',
  'pg_database_size',
  'pg_get_viewdef',
  'pg_get_indexdef',
  'pg_get_constraintdef',
  'pg_get_expr',
  'pg_get_functiondef',
  'pg_get_function_arguments',
  'pg_get_function_result',
  'pg_get_function_identity_arguments',
  'pg_get_triggerdef',
  'pg_get_ruledef',
  'pg_get_partkeydef',
  'pg_get_statisticsobjdef',
  'pg_get_serial_sequence',
  'pg_get_userbyid',
  'pg_get_keywords',
  'pg_table_is_visible',
  'pg_type_is_visible',
  'pg_function_is_visible',
  'pg_has_role',
  'pg_backend_pid',
  'pg_postmaster_start_time',
  'pg_conf_load_time',
  'pg_is_in_recovery',
  'pg_encoding_to_char',
  'pg_char_to_encoding',
  'pg_client_encoding',
  'pg_input_is_valid',
  'pg_input_error_info',
  'pg_describe_object',
  'pg_identify_object',
  'pg_index_column_has_property',
  'pg_index_has_property',
  'pg_indexam_has_property',
  'pg_partition_tree',
  'pg_partition_root',
  'pg_partition_ancestors',
  'pg_options_to_table',
  'pg_jit_available',
  'pg_trigger_depth',
  'pg_current_snapshot',
  'pg_snapshot_xmin',
  'pg_snapshot_xmax',
  'pg_snapshot_xip',
  'pg_visible_in_snapshot',
  'pg_xact_status',
  'pg_current_xact_id',
  'pg_current_xact_id_if_assigned',
]);

/** Exact names, lower case, with the reason given to the model. */
const DENIED: ReadonlyMap<string, string> = new Map([
  // Sleeping and busy loops hold a connection and a worker slot.
  ['sleep', 'sleeps on the server'],
  ['benchmark', 'burns CPU on purpose'],
  ['pg_sleep', 'sleeps on the server'],
  ['pg_sleep_for', 'sleeps on the server'],
  ['pg_sleep_until', 'sleeps on the server'],
  ['pg_terminate_backend', 'kills another database session'],
  ['pg_cancel_backend', "cancels another session's query"],
  ['pg_notify', 'sends a notification to other sessions'],
  ['pg_reload_conf', 'reloads the server configuration'],
  // Files and other sessions.
  ['load_file', 'reads a file on the database server'],
  ['get_lock', 'takes a named lock that outlives the query'],
  ['release_lock', 'releases a named lock held by the session'],
  ['release_all_locks', 'releases named locks held by the session'],
  ['master_pos_wait', 'blocks until replication catches up'],
  ['source_pos_wait', 'blocks until replication catches up'],
  ['master_gtid_wait', 'blocks until replication catches up'],
  ['wait_for_executed_gtid_set', 'blocks until replication catches up'],
  ['wait_until_sql_thread_after_gtids', 'blocks until replication catches up'],
  ['sys_exec', 'runs an operating-system command'],
  ['sys_eval', 'runs an operating-system command'],
  ['sys_get', 'reads server environment variables'],
  ['sys_set', 'sets server environment variables'],
  // Sequences change state outside the transaction, so a retried tool call would not be idempotent.
  ['nextval', 'advances a sequence, a write that is never rolled back'],
  ['setval', 'sets a sequence, a write that is never rolled back'],
  ['set_config', 'changes a session setting'],
  ['version', 'reveals the server build; use SHOW server_version'],
  ['setseed', 'changes the session random seed'],
  // These run SQL given as a text argument, which this guard never sees.
  ['ts_stat', 'runs SQL given as text'],
  ['ts_rewrite', 'can run SQL given as text'],
  ['crosstab', 'runs SQL given as text'],
  ['crosstab2', 'runs SQL given as text'],
  ['crosstab3', 'runs SQL given as text'],
  ['crosstab4', 'runs SQL given as text'],
  ['connectby', 'runs SQL given as text'],
  ['loread', 'reads a large object'],
  ['lowrite', 'writes a large object'],
]);

/** Name families, tested in order; the first match gives the reason. */
const DENIED_PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^(xp|sp)_/, 'is a stored procedure, which runs code the guard cannot inspect'],
  [/^pg_(read|ls|stat_file|file)/, 'reads or lists files on the database server'],
  [/^pg_(try_)?advisory/, 'takes or releases an advisory lock that outlives the query'],
  [/^lo_/, 'works on large objects, which can read and write server files (lo_import/lo_export)'],
  [/^dblink/, 'opens a connection to another database'],
  [/^https?(_|$)/, 'makes a network request'],
  [/^(query|cursor|table|schema|database)_to_xml/, 'runs SQL given as text or dumps whole tables'],
  [/(^|_)(import|export)(_|$)/, 'moves data in or out of the server'],
  [/^binary_upgrade_/, 'is a server-internal upgrade function'],
  [/^pg_stat_get_(backend_|activity)/, 'shows other sessions’ running SQL and client addresses'],
];

/**
 * Why a call to `name` is refused, or `undefined` when it may run. `name` is the unqualified function
 * name; the comparison ignores case because quoted and unquoted spellings may reach the same function.
 */
export function deniedFunctionReason(name: string): string | undefined {
  const fn = name.toLowerCase();
  const exact = DENIED.get(fn);
  if (exact) return exact;
  for (const [pattern, reason] of DENIED_PATTERNS) if (pattern.test(fn)) return reason;
  if (fn.startsWith('pg_') && !PG_PREFIX_ALLOWED.has(fn) && !fn.startsWith('pg_stat_get_')) {
    return 'is an administrative pg_* function (sleeping, files, signalling backends, settings, locks or replication are all in this namespace) that is not on the allow-list';
  }
  return undefined;
}
