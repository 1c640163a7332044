import type { RefusalCode, SqlDialect, StatementKind } from '../activities/sql/guard';
import { MAX_SQL_LENGTH } from '../activities/sql/guard';

/**
 * Statements for the SQL guard, shared by the unit test (`tests/unit/sql-guard.test.ts`) and by
 * integration tests that send the same statements through the SQL tool to real engines and check that
 * a checksum of the fixture is unchanged afterwards.
 *
 * Every statement targets the small fixture in {@link SQL_CORPUS}`[dialect].schema`, so a guard failure
 * would show up as a changed fixture. Some hostile statements would do real damage if they ever ran
 * (DROP SCHEMA, COPY … PROGRAM, SHUTDOWN): run them only against a disposable database, as a
 * least-privilege role.
 */

/** One statement and the connection mode it is checked under. */
export interface SqlCase {
  /** What the statement does or tries, for test names. */
  name: string;
  sql: string;
  /** Values for `$n` / `?` placeholders, in order, when the statement is run for real. */
  params?: readonly unknown[];
  /** Whether the connection is writable for this case. */
  allowWrites: boolean;
}

/** A statement the guard must refuse, with the code it must refuse it with. */
export interface RefusedCase extends SqlCase {
  code: RefusalCode;
}

/** A statement the guard must allow, with the kind and statement type it must report. */
export interface AllowedCase extends SqlCase {
  kind: StatementKind;
  statementType: string;
}

/** Everything the tests need for one dialect. */
export interface DialectCorpus {
  /** DDL and seed rows for the fixture every statement below refers to. */
  schema: readonly string[];
  /** Hostile or tricky statements; each must be refused with its code. */
  hostile: readonly RefusedCase[];
  /** Legitimate reads, allowed as `read` on a read-only connection. */
  reads: readonly AllowedCase[];
  /** Legitimate writes, allowed as `write` on a writable connection (and refused on a read-only one). */
  writes: readonly AllowedCase[];
}

const R = false;
const W = true;

const refused = (
  code: RefusalCode,
  name: string,
  sql: string,
  allowWrites = R,
  params?: unknown[],
): RefusedCase => ({
  name,
  sql,
  allowWrites,
  code,
  ...(params ? { params } : {}),
});

const read = (name: string, sql: string, statementType: string, params?: unknown[]): AllowedCase => ({
  name,
  sql,
  allowWrites: R,
  kind: 'read',
  statementType,
  ...(params ? { params } : {}),
});

const write = (name: string, sql: string, statementType: string, params?: unknown[]): AllowedCase => ({
  name,
  sql,
  allowWrites: W,
  kind: 'write',
  statementType,
  ...(params ? { params } : {}),
});

/** Just over the length limit, built rather than stored. */
const TOO_LONG = `SELECT 1${' '.repeat(MAX_SQL_LENGTH)}`;

const POSTGRES_SCHEMA = [
  `CREATE TABLE customers (id integer PRIMARY KEY, name text NOT NULL, email text, country text NOT NULL, created_at timestamp NOT NULL)`,
  `CREATE TABLE products (id integer PRIMARY KEY, name text NOT NULL, price numeric(10,2) NOT NULL, stock integer NOT NULL, attrs jsonb NOT NULL DEFAULT '{}')`,
  `CREATE TABLE orders (id integer PRIMARY KEY, customer_id integer NOT NULL REFERENCES customers(id), status text NOT NULL, total numeric(10,2) NOT NULL, created_at timestamp NOT NULL)`,
  `CREATE TABLE order_items (order_id integer NOT NULL REFERENCES orders(id), product_id integer NOT NULL REFERENCES products(id), qty integer NOT NULL, price numeric(10,2) NOT NULL, PRIMARY KEY (order_id, product_id))`,
  `CREATE SEQUENCE order_seq`,
  `INSERT INTO customers VALUES (1, 'Ada', 'ada@example.com', 'GB', '2024-01-05'), (2, 'Lin', NULL, 'CN', '2024-02-11'), (3, 'Ana', 'ana@example.com', 'FR', '2024-03-20')`,
  `INSERT INTO products VALUES (1, 'Kettle', 30.00, 12, '{"colour": "red"}'), (2, 'Teapot', 45.50, 0, '{"colour": "blue"}'), (3, 'Cup', 6.25, 80, '{}')`,
  `INSERT INTO orders VALUES (1, 1, 'paid', 36.25, '2024-04-01'), (2, 2, 'paid', 45.50, '2024-04-03'), (3, 1, 'open', 12.50, '2024-05-09')`,
  `INSERT INTO order_items VALUES (1, 1, 1, 30.00), (1, 3, 1, 6.25), (2, 2, 1, 45.50), (3, 3, 2, 6.25)`,
] as const;

const POSTGRES_HOSTILE: RefusedCase[] = [
  // One statement per call.
  refused('multiple_statements', 'stacked DROP after a SELECT', 'SELECT 1; DROP TABLE customers'),
  refused(
    'multiple_statements',
    'COMMIT out of the read-only transaction, then DROP',
    'COMMIT; DROP SCHEMA public CASCADE',
  ),
  refused('multiple_statements', 'empty statements between two', 'SELECT * FROM orders;;DELETE FROM orders'),
  refused('multiple_statements', 'BEGIN; write; COMMIT', 'BEGIN; DELETE FROM orders WHERE id = 1; COMMIT', W),
  // DDL, however it is spelled.
  refused('ddl', 'comment between keywords', 'DROP/**/TABLE customers'),
  refused('ddl', 'nested comment between keywords', 'DROP /* a /* b */ c */ TABLE customers'),
  refused('ddl', 'DROP DATABASE', 'DROP DATABASE postgres'),
  refused('ddl', 'DROP SCHEMA', 'DROP SCHEMA public CASCADE', W),
  refused('ddl', 'TRUNCATE', 'TRUNCATE orders', W),
  refused('ddl', 'ALTER TABLE', 'ALTER TABLE customers ADD COLUMN pwned integer', W),
  refused('ddl', 'CREATE TABLE', 'CREATE TABLE pwned (id integer)', W),
  refused(
    'ddl',
    'CREATE FUNCTION that deletes',
    'CREATE FUNCTION pwn() RETURNS integer LANGUAGE sql AS $$ DELETE FROM orders RETURNING 1 $$',
  ),
  refused('ddl', 'CREATE TABLE AS', 'CREATE TABLE pwned AS SELECT * FROM customers'),
  refused('ddl', 'SELECT INTO creates a table', 'SELECT * INTO pwned FROM customers'),
  refused('ddl', 'SELECT INTO TEMP', 'SELECT id INTO TEMP pwned FROM orders'),
  refused('ddl', 'COMMENT ON', "COMMENT ON TABLE customers IS 'pwned'"),
  refused('ddl', 'CREATE EXTENSION', 'CREATE EXTENSION IF NOT EXISTS dblink'),
  refused('ddl', 'upper/lower case mix and newlines', 'dRoP\n\tTaBlE\n"customers"'),
  // Writes, anywhere in the tree, need a writable connection.
  refused(
    'write_not_allowed',
    'writable CTE (parses as a SelectStmt)',
    'WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d',
  ),
  refused(
    'write_not_allowed',
    'UPDATE inside a CTE',
    "WITH u AS (UPDATE customers SET name = 'x' WHERE id = 1 RETURNING 1) SELECT count(*) FROM u",
  ),
  refused(
    'write_not_allowed',
    'INSERT inside a CTE',
    "WITH i AS (INSERT INTO products (id, name, price, stock) VALUES (99, 'x', 1, 1) RETURNING id) SELECT * FROM i",
  ),
  refused(
    'write_not_allowed',
    'EXPLAIN ANALYZE executes the DELETE',
    'EXPLAIN ANALYZE DELETE FROM orders WHERE id = 1',
  ),
  refused(
    'write_not_allowed',
    'EXPLAIN (ANALYZE) of a writable CTE',
    'EXPLAIN (ANALYZE, FORMAT JSON) WITH d AS (DELETE FROM orders WHERE id = 1 RETURNING 1) SELECT * FROM d',
  ),
  refused(
    'write_not_allowed',
    'DELETE on a read-only connection',
    'DELETE FROM orders WHERE id = $1',
    R,
    [1],
  ),
  refused(
    'write_not_allowed',
    'INSERT on a read-only connection',
    "INSERT INTO customers (id, name, country, created_at) VALUES (99, 'x', 'FR', now())",
  ),
  refused(
    'write_not_allowed',
    'UPDATE on a read-only connection',
    'UPDATE products SET price = 0 WHERE id = 1',
  ),
  // UPDATE/DELETE must filter on the target table.
  refused(
    'missing_where',
    'writable CTE without WHERE, writes allowed',
    'WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d',
    W,
  ),
  refused('missing_where', 'WHERE 1=1', 'UPDATE products SET price = 0 WHERE 1=1', W),
  refused('missing_where', 'WHERE true', 'UPDATE products SET price = 0 WHERE true', W),
  refused('missing_where', "WHERE 'a'='a'", "DELETE FROM orders WHERE 'a'='a'", W),
  refused('missing_where', 'DELETE without WHERE', 'DELETE FROM order_items', W),
  refused(
    'missing_where',
    'WHERE only on the joined table',
    'UPDATE products p SET price = 0 FROM orders o WHERE o.id = 1',
    W,
  ),
  refused(
    'missing_where',
    'target shadowed inside EXISTS',
    'DELETE FROM orders WHERE EXISTS (SELECT 1 FROM orders WHERE orders.id = 1)',
    W,
  ),
  refused('missing_where', 'WHERE on a parameter only', 'DELETE FROM orders WHERE $1', W, [true]),
  refused(
    'tautological_where',
    'column compared with itself',
    'UPDATE products SET price = 0 WHERE id = id',
    W,
  ),
  refused('tautological_where', 'OR 1=1', 'DELETE FROM orders WHERE id = 1 OR 1=1', W),
  refused('tautological_where', 'NOT (x <> x)', 'DELETE FROM order_items WHERE NOT (qty <> qty)', W),
  refused(
    'unsupported_statement',
    'MERGE',
    'MERGE INTO products p USING orders o ON p.id = o.id WHEN MATCHED THEN DELETE',
    W,
  ),
  // Locks.
  refused('locking', 'SELECT … FOR UPDATE', 'SELECT * FROM customers FOR UPDATE'),
  refused(
    'locking',
    'SELECT … FOR SHARE with a parameter',
    'SELECT * FROM orders WHERE id = $1 FOR SHARE NOWAIT',
    R,
    [1],
  ),
  refused(
    'locking',
    'FOR UPDATE hidden in the left arm of a UNION',
    '(SELECT id FROM orders FOR UPDATE) UNION SELECT 1',
  ),
  refused(
    'locking',
    'FOR UPDATE inside a subquery',
    'SELECT * FROM (SELECT * FROM customers FOR NO KEY UPDATE) c',
  ),
  refused('locking', 'LOCK TABLE', 'LOCK TABLE orders IN ACCESS EXCLUSIVE MODE', W),
  // Functions that reach outside the query.
  refused('dangerous_function', 'pg_sleep', 'SELECT pg_sleep(100)'),
  refused('dangerous_function', 'schema-qualified pg_sleep', 'SELECT pg_catalog.pg_sleep(100)'),
  refused('dangerous_function', 'Unicode-escaped function name', 'SELECT U&"\\0070g_sleep"(100)'),
  refused('dangerous_function', 'quoted upper-case name', 'SELECT "PG_SLEEP"(100)'),
  refused(
    'dangerous_function',
    'pg_sleep in a FROM subquery',
    'SELECT * FROM customers WHERE id = (SELECT 1 FROM pg_sleep(100))',
  ),
  refused('dangerous_function', 'pg_read_file', "SELECT pg_read_file('/etc/passwd')"),
  refused('dangerous_function', 'pg_ls_dir as a table', "SELECT * FROM pg_ls_dir('/')"),
  refused('dangerous_function', 'lo_import', "SELECT lo_import('/etc/passwd')"),
  refused(
    'dangerous_function',
    'dblink_exec',
    "SELECT dblink_exec('dbname=postgres', 'DROP TABLE customers')",
  ),
  refused(
    'dangerous_function',
    'query_to_xml runs SQL text',
    "SELECT query_to_xml('DELETE FROM orders RETURNING 1', true, false, '')",
  ),
  refused(
    'dangerous_function',
    'set_config lifts read-only',
    "SELECT set_config('default_transaction_read_only', 'off', false)",
  ),
  refused('dangerous_function', 'pg_terminate_backend', 'SELECT pg_terminate_backend(pg_backend_pid())'),
  refused('dangerous_function', 'advisory lock', 'SELECT pg_advisory_lock(42)'),
  refused('dangerous_function', 'nextval writes a sequence', "SELECT nextval('order_seq')"),
  refused('privileged_catalog', 'password hashes (pg_authid)', 'SELECT rolname, rolpassword FROM pg_authid'),
  refused('privileged_catalog', 'password hashes (pg_shadow)', 'SELECT * FROM pg_catalog.pg_shadow'),
  refused('privileged_catalog', 'hba file', 'SELECT * FROM pg_hba_file_rules'),
  refused('privileged_catalog', 'config files', 'SELECT * FROM pg_file_settings'),
  refused(
    'privileged_catalog',
    'other sessions in a subquery',
    'SELECT id FROM orders WHERE EXISTS (SELECT 1 FROM pg_stat_activity WHERE query IS NOT NULL)',
  ),
  refused('privileged_catalog', 'SHOW ALL', 'SHOW ALL'),
  refused('privileged_catalog', 'SHOW hba_file', 'SHOW hba_file'),
  refused('privileged_catalog', 'current_setting of a file path', "SELECT current_setting('data_directory')"),
  refused(
    'privileged_catalog',
    'current_setting of a computed name',
    "SELECT current_setting('hba_' || 'file')",
  ),
  refused('dangerous_function', 'pg_stat_get_activity', 'SELECT * FROM pg_stat_get_activity(NULL)'),
  refused(
    'dangerous_function',
    'pg_cancel_backend in a UNION arm',
    'SELECT 1 UNION ALL SELECT pg_cancel_backend(pg_backend_pid())::int',
  ),
  refused(
    'dangerous_function',
    'ts_stat runs SQL text',
    "SELECT * FROM ts_stat('SELECT to_tsvector(name) FROM customers')",
  ),
  refused(
    'dangerous_function',
    'pg_sleep in RETURNING',
    'UPDATE products SET stock = stock WHERE id = 1 RETURNING pg_sleep(100)',
    W,
  ),
  refused(
    'dangerous_function',
    'INSERT … SELECT of a server file',
    "INSERT INTO products (id, name, price, stock) SELECT 100, pg_read_file('/etc/hostname'), 1, 1",
    W,
  ),
  // Files, programs and client streams.
  refused('file_access', 'COPY TO PROGRAM', "COPY customers TO PROGRAM 'sh'"),
  refused('file_access', 'COPY FROM a server file', "COPY customers FROM '/etc/passwd'", W),
  refused('file_access', 'COPY query TO STDOUT', 'COPY (SELECT * FROM customers) TO STDOUT'),
  refused('file_access', 'COPY FROM STDIN', 'COPY customers FROM STDIN', W),
  refused('file_access', 'LOAD a shared library', "LOAD 'auto_explain'"),
  // Code the guard cannot see.
  refused('procedural', 'DO block', 'DO $$ BEGIN DELETE FROM orders; END $$'),
  refused('procedural', 'CALL a procedure', 'CALL sp_cleanup()'),
  refused('procedural', 'PREPARE a DELETE', 'PREPARE p AS DELETE FROM orders'),
  refused('procedural', 'EXECUTE a prepared statement', 'EXECUTE p'),
  refused('procedural', 'DECLARE a cursor', 'DECLARE c CURSOR FOR SELECT * FROM customers'),
  // Session state.
  refused('session_state', 'SET ROLE', 'SET ROLE postgres'),
  refused('session_state', 'SET SESSION AUTHORIZATION', 'SET SESSION AUTHORIZATION postgres'),
  refused('session_state', 'SET read-only off', 'SET default_transaction_read_only = off'),
  refused('session_state', 'RESET ALL', 'RESET ALL'),
  refused('session_state', 'DISCARD ALL', 'DISCARD ALL'),
  refused('session_state', 'LISTEN', 'LISTEN orders_changed'),
  refused('session_state', 'NOTIFY', "NOTIFY orders_changed, 'x'"),
  // Transaction control.
  refused('transaction_control', 'BEGIN', 'BEGIN'),
  refused('transaction_control', 'COMMIT', 'COMMIT'),
  refused('transaction_control', 'ROLLBACK', 'ROLLBACK'),
  refused('transaction_control', 'SAVEPOINT', 'SAVEPOINT s1'),
  refused('transaction_control', 'START TRANSACTION READ WRITE', 'START TRANSACTION READ WRITE'),
  // Privileges.
  refused('access_control', 'GRANT', 'GRANT ALL ON customers TO PUBLIC'),
  refused('access_control', 'REVOKE', 'REVOKE SELECT ON customers FROM PUBLIC'),
  refused('access_control', 'GRANT a role', 'GRANT pg_read_server_files TO CURRENT_USER'),
  refused('access_control', 'CREATE ROLE', 'CREATE ROLE pwned SUPERUSER LOGIN'),
  refused('access_control', 'CREATE USER', "CREATE USER pwned WITH PASSWORD 'x'"),
  refused('access_control', 'ALTER ROLE', 'ALTER ROLE CURRENT_USER SUPERUSER'),
  refused('access_control', 'DROP ROLE', 'DROP ROLE pwned'),
  // Maintenance and administration.
  refused('maintenance', 'VACUUM FULL', 'VACUUM FULL orders'),
  refused('maintenance', 'ANALYZE', 'ANALYZE orders'),
  refused('maintenance', 'REINDEX', 'REINDEX TABLE orders'),
  refused('maintenance', 'CHECKPOINT', 'CHECKPOINT'),
  refused('maintenance', 'ALTER SYSTEM', "ALTER SYSTEM SET log_statement = 'none'"),
  // Text the parser and the server could read differently, or not at all.
  refused(
    'ambiguous_syntax',
    'backslash quote (standard_conforming_strings off)',
    "SELECT 'a\\', ' ; DROP TABLE customers; -- '",
  ),
  refused(
    'multiple_statements',
    'backslash quote read the standard way',
    "SELECT 'a\\'; DROP TABLE customers; --'",
  ),
  refused('ambiguous_syntax', 'NUL byte hides a second statement', 'SELECT 1\u0000; DROP TABLE customers'),
  refused('parse_error', 'misspelt keyword', 'SELEC * FROM customers'),
  refused('parse_error', 'unterminated comment', 'SELECT * FROM customers /* DROP TABLE customers'),
  refused('parse_error', 'full-width semicolon', 'SELECT 1；DROP TABLE customers'),
  refused('parse_error', 'psql meta-command', '\\! rm -rf /'),
  refused('empty_statement', 'only a semicolon', ';'),
  refused('empty_statement', 'only a comment', '/* DROP TABLE customers */'),
  refused('statement_too_long', 'longer than the limit', TOO_LONG),
  refused(
    'unsupported_syntax',
    'XMLTABLE is not on the allow-list',
    "SELECT * FROM XMLTABLE('/a' PASSING '<a/>' COLUMNS x integer PATH '.')",
  ),
];

const POSTGRES_READS: AllowedCase[] = [
  read(
    'join with parameters',
    'SELECT o.id, c.name, o.total FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.country = $1 AND o.total > $2 ORDER BY o.id',
    'SELECT',
    ['GB', 10],
  ),
  read(
    'aggregate with GROUP BY and HAVING',
    'SELECT c.country, count(*) AS n, sum(o.total) AS revenue FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY c.country HAVING count(*) >= 1 ORDER BY revenue DESC',
    'SELECT',
  ),
  read(
    'CTE',
    "WITH paid AS (SELECT * FROM orders WHERE status = 'paid') SELECT customer_id, count(*) FROM paid GROUP BY customer_id",
    'SELECT',
  ),
  read(
    'recursive CTE',
    'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10) SELECT sum(i) FROM n',
    'SELECT',
  ),
  read(
    'window functions',
    'SELECT id, customer_id, total, row_number() OVER (PARTITION BY customer_id ORDER BY created_at DESC) AS rn, sum(total) OVER w AS running FROM orders WINDOW w AS (ORDER BY created_at ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)',
    'SELECT',
  ),
  read(
    'IN and NOT EXISTS subqueries',
    'SELECT * FROM products p WHERE p.id IN (SELECT product_id FROM order_items) AND NOT EXISTS (SELECT 1 FROM order_items oi WHERE oi.product_id = p.id AND oi.qty > 5)',
    'SELECT',
  ),
  read(
    'LATERAL subquery',
    'SELECT c.name, last.total FROM customers c LEFT JOIN LATERAL (SELECT total FROM orders o WHERE o.customer_id = c.id ORDER BY created_at DESC LIMIT 1) last ON true',
    'SELECT',
  ),
  read(
    'CASE, casts, COALESCE, NULLIF, GREATEST',
    "SELECT CASE WHEN price > 40 THEN 'high' ELSE 'low' END AS band, price::text, CAST(stock AS bigint), coalesce(NULLIF(stock, 0), -1), GREATEST(price, 10) FROM products",
    'SELECT',
  ),
  read(
    'date functions and intervals',
    "SELECT date_trunc('month', created_at) AS month, EXTRACT(year FROM created_at) AS y, created_at + interval '7 days' FROM orders WHERE created_at > $1::timestamp - interval '1 year'",
    'SELECT',
    ['2024-06-01'],
  ),
  read(
    'string functions and LIKE',
    "SELECT upper(name), length(name), substring(name FROM 1 FOR 2), concat_ws('-', name, country) FROM customers WHERE name ILIKE $1 AND email IS NOT NULL",
    'SELECT',
    ['a%'],
  ),
  read(
    'jsonb operators and functions',
    "SELECT name, attrs->>'colour' AS colour, jsonb_build_object('id', id, 'stock', stock) FROM products WHERE attrs ? 'colour'",
    'SELECT',
  ),
  read(
    'FILTER, WITHIN GROUP, ROLLUP',
    'SELECT status, count(*) FILTER (WHERE total > 20), percentile_cont(0.5) WITHIN GROUP (ORDER BY total) FROM orders GROUP BY ROLLUP (status)',
    'SELECT',
  ),
  read('ANY with an array parameter', 'SELECT * FROM customers WHERE id = ANY($1::int[])', 'SELECT', [
    [1, 2],
  ]),
  read(
    'UNION and ORDER BY',
    'SELECT name FROM customers UNION SELECT name FROM products ORDER BY 1 LIMIT 10 OFFSET 0',
    'SELECT',
  ),
  read('generate_series as a table', 'SELECT g.i, g.i * 2 FROM generate_series(1, 5) AS g(i)', 'SELECT'),
  read('VALUES', "VALUES (1, 'a'), (2, 'b')", 'VALUES'),
  read('TABLE shorthand', 'TABLE customers', 'SELECT'),
  read(
    'DISTINCT ON',
    'SELECT DISTINCT ON (customer_id) customer_id, id FROM orders ORDER BY customer_id, created_at DESC',
    'SELECT',
  ),
  read('EXPLAIN SELECT', 'EXPLAIN SELECT * FROM orders WHERE customer_id = $1', 'EXPLAIN SELECT', [1]),
  read(
    'EXPLAIN (FORMAT JSON)',
    'EXPLAIN (FORMAT JSON, COSTS false) SELECT count(*) FROM orders',
    'EXPLAIN SELECT',
  ),
  read('EXPLAIN ANALYZE SELECT', 'EXPLAIN ANALYZE SELECT count(*) FROM customers', 'EXPLAIN ANALYZE SELECT'),
  read('EXPLAIN of a DELETE only plans it', 'EXPLAIN DELETE FROM orders WHERE id = 1', 'EXPLAIN DELETE'),
  read('SHOW a setting', 'SHOW statement_timeout', 'SHOW'),
  read(
    'catalog query with size helpers',
    "SELECT relname, pg_size_pretty(pg_total_relation_size(oid)) FROM pg_class WHERE relname = 'orders'",
    'SELECT',
  ),
  read(
    'txid and current_setting',
    "SELECT txid_current_if_assigned(), current_setting('search_path'), current_user",
    'SELECT',
  ),
  read('dollar-quoted string that looks like SQL', 'SELECT $$; DROP TABLE customers; $$ AS s', 'SELECT'),
  read('E-string with a backslash escape', "SELECT E'line\\nbreak' AS s", 'SELECT'),
  read(
    'Unicode-escaped string that spells SQL',
    "SELECT U&'\\0027; DROP TABLE customers; --' AS s",
    'SELECT',
  ),
  read(
    'comments, including one that looks like code',
    'SELECT id -- ; DROP TABLE customers\nFROM customers /* ; DELETE FROM orders */ WHERE id = 1',
    'SELECT',
  ),
  read('trailing semicolon', 'SELECT 1;', 'SELECT'),
];

const POSTGRES_WRITES: AllowedCase[] = [
  write(
    'INSERT with parameters',
    'INSERT INTO customers (id, name, email, country, created_at) VALUES ($1, $2, $3, $4, now())',
    'INSERT',
    [10, 'Kim', null, 'KR'],
  ),
  write(
    'INSERT … SELECT',
    "INSERT INTO order_items (order_id, product_id, qty, price) SELECT 3, id, 1, price FROM products WHERE name = 'Kettle'",
    'INSERT',
  ),
  write(
    'INSERT … ON CONFLICT DO UPDATE',
    'INSERT INTO products (id, name, price, stock) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO UPDATE SET stock = EXCLUDED.stock, price = EXCLUDED.price RETURNING id',
    'INSERT',
    [3, 'Cup', 6.5, 79],
  ),
  write(
    'UPDATE by primary key',
    'UPDATE products SET stock = stock - 1 WHERE id = $1 AND stock > 0',
    'UPDATE',
    [1],
  ),
  write(
    'UPDATE with OR on target columns',
    "UPDATE orders SET status = 'shipped' WHERE id = 1 OR id = 2",
    'UPDATE',
  ),
  write(
    'UPDATE … FROM with a qualified target column',
    "UPDATE orders o SET status = 'vip' FROM customers c WHERE o.customer_id = c.id AND c.country = $1",
    'UPDATE',
    ['GB'],
  ),
  write(
    'DELETE with IN subquery',
    "DELETE FROM order_items WHERE order_id IN (SELECT id FROM orders WHERE status = 'open')",
    'DELETE',
  ),
  write(
    'writable CTE moving rows, with WHERE',
    'WITH gone AS (DELETE FROM order_items WHERE order_id = 3 RETURNING *) SELECT count(*) FROM gone',
    'SELECT',
  ),
  write(
    'EXPLAIN ANALYZE of a write runs it',
    'EXPLAIN ANALYZE UPDATE products SET stock = stock WHERE id = 2',
    'EXPLAIN ANALYZE UPDATE',
  ),
];

const MYSQL_SCHEMA = [
  `CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL, email VARCHAR(200), country CHAR(2) NOT NULL, created_at DATETIME NOT NULL)`,
  `CREATE TABLE products (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL, price DECIMAL(10,2) NOT NULL, stock INT NOT NULL, attrs JSON)`,
  `CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NOT NULL, status VARCHAR(20) NOT NULL, total DECIMAL(10,2) NOT NULL, created_at DATETIME NOT NULL, FOREIGN KEY (customer_id) REFERENCES customers(id))`,
  `CREATE TABLE order_items (order_id INT NOT NULL, product_id INT NOT NULL, qty INT NOT NULL, price DECIMAL(10,2) NOT NULL, PRIMARY KEY (order_id, product_id), FOREIGN KEY (order_id) REFERENCES orders(id), FOREIGN KEY (product_id) REFERENCES products(id))`,
  `INSERT INTO customers VALUES (1, 'Ada', 'ada@example.com', 'GB', '2024-01-05'), (2, 'Lin', NULL, 'CN', '2024-02-11'), (3, 'Ana', 'ana@example.com', 'FR', '2024-03-20')`,
  `INSERT INTO products VALUES (1, 'Kettle', 30.00, 12, '{"colour": "red"}'), (2, 'Teapot', 45.50, 0, '{"colour": "blue"}'), (3, 'Cup', 6.25, 80, '{}')`,
  `INSERT INTO orders VALUES (1, 1, 'paid', 36.25, '2024-04-01'), (2, 2, 'paid', 45.50, '2024-04-03'), (3, 1, 'open', 12.50, '2024-05-09')`,
  `INSERT INTO order_items VALUES (1, 1, 1, 30.00), (1, 3, 1, 6.25), (2, 2, 1, 45.50), (3, 3, 2, 6.25)`,
] as const;

const MYSQL_HOSTILE: RefusedCase[] = [
  // Executable comments and hints: code for the server, comments for the parser.
  refused('executable_comment', 'executable comment carrying a DROP', '/*! DROP TABLE customers */ SELECT 1'),
  refused('executable_comment', 'versioned executable comment', 'SELECT 1 /*!50000 , SLEEP(100) */'),
  refused(
    'executable_comment',
    'executable comment inside WHERE',
    'SELECT * FROM customers WHERE id = 1 /*!OR 1=1*/',
  ),
  refused('executable_comment', 'MariaDB executable comment', 'SELECT 1 /*M!100100 , SLEEP(100) */'),
  refused(
    'executable_comment',
    'optimizer hint lifting the time limit',
    'SELECT /*+ MAX_EXECUTION_TIME(100000000) */ * FROM orders',
  ),
  refused(
    'executable_comment',
    'executable comment hiding WHERE removal',
    'DELETE FROM orders /*!WHERE id = 1*/',
    W,
  ),
  // Comment and quoting tricks where parser and server disagree.
  refused('ambiguous_syntax', '--x is a double minus for MySQL', 'SELECT 1--1'),
  refused(
    'ambiguous_syntax',
    '--x hiding the rest of the line from the parser',
    'SELECT * FROM orders WHERE id = 1 --x\n',
  ),
  refused(
    'ambiguous_syntax',
    'CR ends the comment for the parser only',
    'DELETE FROM orders # \r WHERE id = 1',
    W,
  ),
  refused('ambiguous_syntax', 'backslash escape in a single-quoted string', "SELECT 'a\\' , SLEEP(100) -- '"),
  refused(
    'ambiguous_syntax',
    'backslash in a double-quoted string (ANSI_QUOTES)',
    'SELECT "a\\" , SLEEP(100) -- "',
  ),
  refused(
    'ambiguous_syntax',
    'unterminated comment read as division by the parser',
    'SELECT 1 /* unterminated',
  ),
  refused('ambiguous_syntax', 'nested comment opener', 'SELECT 1 /* a /* b */ , SLEEP(100) */'),
  refused('ambiguous_syntax', 'NUL byte hides a second statement', 'SELECT 1\u0000; DROP TABLE customers'),
  // One statement per call.
  refused('multiple_statements', 'stacked DROP after a SELECT', 'SELECT 1; DROP TABLE customers'),
  refused('multiple_statements', 'COMMIT then DROP DATABASE', 'COMMIT; DROP DATABASE shop'),
  refused('multiple_statements', 'stacked DELETE after a comment', 'SELECT 1 -- x\n; DELETE FROM orders'),
  // Files.
  refused('file_access', 'SELECT INTO OUTFILE', "SELECT * INTO OUTFILE '/tmp/x' FROM customers"),
  refused(
    'file_access',
    'SELECT … INTO DUMPFILE at the end',
    "SELECT * FROM customers INTO DUMPFILE '/tmp/x'",
  ),
  refused('file_access', 'LOAD DATA INFILE', "LOAD DATA INFILE '/etc/passwd' INTO TABLE customers", W),
  refused(
    'file_access',
    'LOAD DATA LOCAL INFILE',
    "LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE customers",
    W,
  ),
  refused('dangerous_function', 'LOAD_FILE', "SELECT LOAD_FILE('/etc/passwd')"),
  refused(
    'dangerous_function',
    'LOAD_FILE in a UNION arm',
    "SELECT name FROM customers UNION SELECT LOAD_FILE('/etc/passwd')",
  ),
  // Functions with side effects.
  refused('dangerous_function', 'SLEEP', 'SELECT SLEEP(100)'),
  refused('dangerous_function', 'lower-case sleep in WHERE', 'SELECT * FROM orders WHERE sleep(100) = 0'),
  refused(
    'dangerous_function',
    'SLEEP in a scalar subquery',
    'SELECT * FROM orders WHERE id = (SELECT SLEEP(100))',
  ),
  refused('dangerous_function', 'BENCHMARK', "SELECT BENCHMARK(100000000, MD5('a'))"),
  refused('dangerous_function', 'GET_LOCK', "SELECT GET_LOCK('x', 100)"),
  refused('dangerous_function', 'sys_exec UDF', "SELECT sys_exec('rm -rf /')"),
  refused(
    'privileged_catalog',
    'password hashes (mysql.user)',
    'SELECT User, authentication_string FROM mysql.user',
  ),
  refused('privileged_catalog', 'password hashes (mysql.global_priv)', 'SELECT * FROM `mysql`.`global_priv`'),
  refused(
    'privileged_catalog',
    'processlist in a join',
    'SELECT o.id FROM orders o JOIN information_schema.PROCESSLIST p ON p.ID = o.id',
  ),
  refused(
    'privileged_catalog',
    'performance_schema in a subquery',
    'SELECT (SELECT COUNT(*) FROM performance_schema.threads) AS n',
  ),
  refused('privileged_catalog', '@@datadir', 'SELECT @@datadir'),
  refused(
    'dangerous_function',
    'SLEEP in an INSERT … SELECT',
    'INSERT INTO order_items SELECT * FROM order_items WHERE SLEEP(100)',
    W,
  ),
  // Session state.
  refused('session_state', 'user variable assignment', 'SELECT @a := 1'),
  refused('session_state', 'SELECT INTO a variable', 'SELECT id INTO @x FROM orders LIMIT 1'),
  refused('session_state', 'SET a variable', 'SET @a = 1'),
  refused('session_state', 'SET sql_mode', "SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'"),
  refused('session_state', 'SET ROLE', 'SET ROLE admin'),
  refused('session_state', 'USE another database', 'USE mysql'),
  // Locks.
  refused('locking', 'SELECT … FOR UPDATE', 'SELECT * FROM orders FOR UPDATE'),
  refused('locking', 'LOCK IN SHARE MODE', 'SELECT * FROM orders WHERE id = ? LOCK IN SHARE MODE', R, [1]),
  refused(
    'locking',
    'FOR UPDATE in a parenthesised UNION arm',
    '(SELECT id FROM orders) UNION ALL (SELECT id FROM customers FOR UPDATE)',
  ),
  refused(
    'locking',
    'FOR UPDATE in an IN subquery',
    'SELECT * FROM orders WHERE id IN (SELECT id FROM orders FOR UPDATE)',
  ),
  refused('locking', 'LOCK TABLES', 'LOCK TABLES orders WRITE'),
  refused('locking', 'UNLOCK TABLES', 'UNLOCK TABLES'),
  // Procedures and prepared statements.
  refused('procedural', 'EXEC xp_cmdshell', "EXEC xp_cmdshell 'dir'"),
  refused('procedural', 'CALL sp_', 'CALL sp_x()'),
  refused('procedural', 'PREPARE', "PREPARE s FROM 'DROP TABLE customers'"),
  refused('procedural', 'EXECUTE', 'EXECUTE s'),
  refused('procedural', 'DO SLEEP', 'DO SLEEP(100)'),
  refused('procedural', 'HANDLER', 'HANDLER orders OPEN'),
  // Transaction control.
  refused('transaction_control', 'START TRANSACTION', 'START TRANSACTION'),
  refused('transaction_control', 'BEGIN', 'BEGIN'),
  refused('transaction_control', 'ROLLBACK', 'ROLLBACK'),
  refused('transaction_control', 'SAVEPOINT', 'SAVEPOINT a'),
  // DDL.
  refused('ddl', 'DROP TABLE', 'DROP TABLE customers', W),
  refused('ddl', 'comment between keywords', 'DROP/**/TABLE customers'),
  refused('ddl', 'DROP DATABASE', 'DROP DATABASE shop'),
  refused('ddl', 'TRUNCATE', 'TRUNCATE TABLE orders', W),
  refused('ddl', 'ALTER TABLE', 'ALTER TABLE customers ADD COLUMN pwned INT', W),
  refused('ddl', 'RENAME TABLE', 'RENAME TABLE orders TO orders_old'),
  refused('ddl', 'CREATE TABLE AS', 'CREATE TABLE pwned AS SELECT * FROM customers'),
  refused('ddl', 'CREATE FUNCTION', 'CREATE FUNCTION f() RETURNS INT RETURN 1'),
  refused(
    'ddl',
    'CREATE EVENT that deletes daily',
    'CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO DELETE FROM orders',
  ),
  // Privileges.
  refused('access_control', 'GRANT', "GRANT ALL ON *.* TO 'x'@'%'"),
  refused('access_control', 'REVOKE', "REVOKE ALL ON *.* FROM 'x'@'%'"),
  refused('access_control', 'CREATE USER', "CREATE USER 'pwned'@'%' IDENTIFIED BY 'x'"),
  refused('access_control', 'DROP USER', "DROP USER 'app'@'%'"),
  refused('access_control', 'ALTER USER', "ALTER USER 'app'@'%' IDENTIFIED BY 'x'"),
  // Server administration.
  refused('maintenance', 'KILL', 'KILL 1'),
  refused('maintenance', 'SHUTDOWN', 'SHUTDOWN'),
  refused('maintenance', 'FLUSH', 'FLUSH PRIVILEGES'),
  refused('maintenance', 'OPTIMIZE TABLE', 'OPTIMIZE TABLE orders'),
  // Writes.
  refused('write_not_allowed', 'DELETE on a read-only connection', 'DELETE FROM orders WHERE id = ?', R, [1]),
  refused(
    'write_not_allowed',
    'INSERT on a read-only connection',
    "INSERT INTO customers VALUES (9, 'x', NULL, 'FR', NOW())",
  ),
  refused(
    'write_not_allowed',
    'UPDATE on a read-only connection',
    'UPDATE products SET price = 0 WHERE id = 1',
  ),
  refused('missing_where', 'WHERE 1=1', "UPDATE customers SET name = 'x' WHERE 1=1", W),
  refused('missing_where', "WHERE 'a'='a'", "DELETE FROM orders WHERE 'a' = 'a'", W),
  refused('missing_where', 'DELETE without WHERE but with LIMIT', 'DELETE FROM order_items LIMIT 100', W),
  refused(
    'missing_where',
    'multi-table UPDATE filtering only the other table',
    'UPDATE products p JOIN order_items oi ON oi.product_id = p.id SET p.price = 0 WHERE oi.qty > 0',
    W,
  ),
  refused(
    'tautological_where',
    'column compared with itself',
    'UPDATE products SET price = 0 WHERE id = id',
    W,
  ),
  refused('tautological_where', 'OR TRUE', 'DELETE FROM orders WHERE id = 1 OR TRUE', W),
  refused('tautological_where', '|| is OR in MySQL', 'DELETE FROM orders WHERE id = 1 || 1', W),
  refused(
    'unsupported_statement',
    'REPLACE deletes then inserts',
    "REPLACE INTO customers VALUES (1, 'x', NULL, 'FR', NOW())",
    W,
  ),
  refused('unsupported_statement', 'SHOW GRANTS', 'SHOW GRANTS'),
  refused('unsupported_statement', 'SHOW BINLOG EVENTS', 'SHOW BINLOG EVENTS'),
  // Placeholders that are not MySQL's: $1 is an identifier there, :name is not bound by the driver.
  refused(
    'unsupported_syntax',
    'Postgres-style placeholder',
    'SELECT * FROM customers WHERE id = $1',
    R,
    [1],
  ),
  refused('unsupported_syntax', 'named placeholder', 'SELECT * FROM customers WHERE id = :id'),
  // Unreadable or empty.
  refused('parse_error', 'misspelt keyword', 'SELEC * FROM customers'),
  refused('parse_error', 'unterminated string', "SELECT 'abc"),
  refused('empty_statement', 'only a semicolon', ';'),
  refused('empty_statement', 'only comments', '-- DROP TABLE customers\n# DROP TABLE orders'),
  refused('statement_too_long', 'longer than the limit', TOO_LONG),
];

const MYSQL_READS: AllowedCase[] = [
  read(
    'join with parameters',
    'SELECT o.id, c.name, o.total FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.country = ? AND o.total > ? ORDER BY o.id',
    'SELECT',
    ['GB', 10],
  ),
  read(
    'aggregate with GROUP BY and HAVING',
    'SELECT c.country, COUNT(*) AS n, SUM(o.total) AS revenue FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY c.country HAVING COUNT(*) >= 1 ORDER BY revenue DESC',
    'SELECT',
  ),
  read(
    'LEFT JOIN … USING and LIMIT/OFFSET',
    'SELECT o.id, oi.qty FROM orders o LEFT JOIN order_items oi ON oi.order_id = o.id ORDER BY o.id LIMIT 10 OFFSET 0',
    'SELECT',
  ),
  read(
    'CTE',
    "WITH paid AS (SELECT * FROM orders WHERE status = 'paid') SELECT customer_id, COUNT(DISTINCT id) FROM paid GROUP BY customer_id",
    'SELECT',
  ),
  read(
    'recursive CTE',
    'WITH RECURSIVE n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 10) SELECT SUM(i) FROM n',
    'SELECT',
  ),
  read(
    'window functions',
    'SELECT id, customer_id, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY created_at DESC) AS rn, LAG(total, 1) OVER (ORDER BY created_at) AS prev FROM orders',
    'SELECT',
  ),
  read(
    'IN and NOT EXISTS subqueries',
    'SELECT * FROM products p WHERE p.id IN (SELECT product_id FROM order_items) AND NOT EXISTS (SELECT 1 FROM order_items oi WHERE oi.product_id = p.id AND oi.qty > 5)',
    'SELECT',
  ),
  read(
    'derived table',
    'SELECT sub.customer_id, sub.n FROM (SELECT customer_id, COUNT(*) AS n FROM orders GROUP BY customer_id) AS sub WHERE sub.n > 1',
    'SELECT',
  ),
  read(
    'CASE, CAST, IF, IFNULL, COALESCE',
    "SELECT CASE WHEN price > 40 THEN 'high' ELSE 'low' END AS band, CAST(stock AS CHAR), IF(stock > 0, 'yes', 'no'), IFNULL(attrs, '{}'), COALESCE(NULL, name) FROM products",
    'SELECT',
  ),
  read(
    'date functions and intervals',
    "SELECT DATE_FORMAT(created_at, '%Y-%m') AS month, YEAR(created_at), DATE_ADD(created_at, INTERVAL 7 DAY) FROM orders WHERE created_at > DATE_SUB(?, INTERVAL 1 YEAR)",
    'SELECT',
    ['2024-06-01'],
  ),
  read(
    'string functions, LIKE and BETWEEN',
    "SELECT UPPER(name), CHAR_LENGTH(name), SUBSTRING(name, 1, 2), CONCAT_WS('-', name, country) FROM customers WHERE name LIKE ? AND id BETWEEN 1 AND 10 AND email IS NOT NULL",
    'SELECT',
    ['A%'],
  ),
  read(
    'GROUP_CONCAT and JSON_EXTRACT',
    "SELECT GROUP_CONCAT(name ORDER BY name SEPARATOR ', '), MAX(JSON_EXTRACT(attrs, '$.colour')) FROM products",
    'SELECT',
  ),
  read(
    'IN list of parameters',
    'SELECT * FROM customers WHERE id IN (?, ?) AND country NOT IN (?)',
    'SELECT',
    [1, 2, 'FR'],
  ),
  read('UNION ALL', 'SELECT name FROM customers UNION ALL SELECT name FROM products', 'SELECT'),
  read(
    'parenthesised UNION with ORDER BY and LIMIT',
    '(SELECT id FROM orders ORDER BY id LIMIT 2) UNION (SELECT id FROM customers) ORDER BY 1 LIMIT 3',
    'SELECT',
  ),
  read('LIKE … ESCAPE', "SELECT name FROM customers WHERE name LIKE 'A!%' ESCAPE '!'", 'SELECT'),
  read('SELECT from DUAL', 'SELECT 1 + 1 FROM DUAL', 'SELECT'),
  read('system variable read', 'SELECT @@version', 'SELECT'),
  read('SHOW TABLES', 'SHOW TABLES', 'SHOW'),
  read('SHOW COLUMNS', 'SHOW COLUMNS FROM orders', 'SHOW'),
  read('SHOW INDEX', 'SHOW INDEX FROM orders', 'SHOW'),
  read('SHOW CREATE TABLE', 'SHOW CREATE TABLE orders', 'SHOW'),
  read('DESCRIBE', 'DESCRIBE orders', 'DESCRIBE'),
  read('EXPLAIN SELECT', 'EXPLAIN SELECT * FROM orders WHERE customer_id = ?', 'EXPLAIN', [1]),
  read('string that looks like SQL', "SELECT '; DROP TABLE customers; -- /*! x */' AS s", 'SELECT'),
  read('doubled-quote escape', "SELECT 'it''s' AS s", 'SELECT'),
  read(
    'comments of every ordinary kind',
    'SELECT id -- a comment\nFROM customers # another\nWHERE id = 1 /* and another */',
    'SELECT',
  ),
  read('double minus with a space', 'SELECT 1 - -1', 'SELECT'),
  read('backtick identifier with a backslash', 'SELECT id AS `a\\b` FROM customers', 'SELECT'),
  read('trailing semicolon', 'SELECT 1;', 'SELECT'),
];

const MYSQL_WRITES: AllowedCase[] = [
  write(
    'INSERT with parameters',
    'INSERT INTO customers (id, name, email, country, created_at) VALUES (?, ?, ?, ?, NOW())',
    'INSERT',
    [10, 'Kim', null, 'KR'],
  ),
  write(
    'INSERT … SET',
    "INSERT INTO customers SET id = 11, name = 'Lee', country = 'KR', created_at = NOW()",
    'INSERT',
  ),
  write(
    'INSERT … SELECT',
    "INSERT INTO order_items (order_id, product_id, qty, price) SELECT 3, id, 1, price FROM products WHERE name = 'Kettle'",
    'INSERT',
  ),
  write(
    'INSERT … ON DUPLICATE KEY UPDATE',
    'INSERT INTO products (id, name, price, stock) VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE stock = VALUES(stock)',
    'INSERT',
    [3, 'Cup', 6.5, 79],
  ),
  write(
    'UPDATE by primary key',
    'UPDATE products SET stock = stock - 1 WHERE id = ? AND stock > 0',
    'UPDATE',
    [1],
  ),
  write(
    'UPDATE with OR on target columns',
    "UPDATE orders SET status = 'shipped' WHERE id = 1 OR id = 2",
    'UPDATE',
  ),
  write(
    'multi-table UPDATE with a qualified target column',
    "UPDATE orders o JOIN customers c ON c.id = o.customer_id SET o.status = 'vip' WHERE o.total > ? AND c.country = 'GB'",
    'UPDATE',
    [10],
  ),
  write(
    'DELETE with ORDER BY and LIMIT',
    'DELETE FROM order_items WHERE order_id = ? ORDER BY product_id LIMIT 1',
    'DELETE',
    [3],
  ),
  write(
    'multi-table DELETE',
    "DELETE oi FROM order_items oi JOIN orders o ON o.id = oi.order_id WHERE oi.qty > 1 AND o.status = 'open'",
    'DELETE',
  ),
];

/** The corpora, by dialect. */
export const SQL_CORPUS: Readonly<Record<SqlDialect, DialectCorpus>> = {
  postgres: {
    schema: POSTGRES_SCHEMA,
    hostile: POSTGRES_HOSTILE,
    reads: POSTGRES_READS,
    writes: POSTGRES_WRITES,
  },
  mysql: { schema: MYSQL_SCHEMA, hostile: MYSQL_HOSTILE, reads: MYSQL_READS, writes: MYSQL_WRITES },
};
