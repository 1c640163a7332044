/**
 * The text sql_schema gives the model (and the transcript shows people): counts read in the right
 * number, `1 table` and `1 row`, not `1 tables` and `1 rows`.
 */
import type { TableInfo } from '../../activities/sql/schema';
import { formatSchema } from '../../activities/sql/schema';
import { SCHEMA_HEAD } from '../../activities/model/local/prompt';

const table = (name: string, rows: number): TableInfo => ({
  name,
  kind: 'table',
  rows,
  rowsExact: true,
  columns: [{ name: 'id', type: 'integer', nullable: false }],
  primaryKey: ['id'],
  foreignKeys: [],
});

test('one table of one row reads "1 table" and "1 row"; more read in the plural', () => {
  const one = formatSchema(
    { connection: 'shop', engine: 'pglite', writable: false, tables: [table('customers', 1)] },
    [],
  );
  expect(one.split('\n')[0]).toBe('Connection "shop" (PostgreSQL dialect, read-only): 1 table.');
  expect(one).toContain('customers — 1 row\n');
  const two = formatSchema(
    {
      connection: 'shop',
      engine: 'pglite',
      writable: false,
      tables: [table('customers', 400), table('orders', 0)],
    },
    [],
  );
  expect(two.split('\n')[0]).toBe('Connection "shop" (PostgreSQL dialect, read-only): 2 tables.');
  expect(two).toContain('customers — 400 rows\n');
  expect(two).toContain('orders — 0 rows\n');
  // The local model's scaffold reads the head either way.
  for (const text of [one, two]) expect(SCHEMA_HEAD.test(text.split('\n')[0]!)).toBe(true);
});
