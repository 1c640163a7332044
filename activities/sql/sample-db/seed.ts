/**
 * The shipped sample database: a small shop (customers, products, orders, order_items) with a few
 * thousand rows, generated deterministically so every worker and every test sees the same data.
 * The SQL is portable: it loads into PGlite (the zero-setup `sample` connection), PostgreSQL and
 * MariaDB/MySQL alike.
 *
 *   npx tsx activities/sql/sample-db/seed.ts > sample.sql     # then psql -f sample.sql, or mariadb < sample.sql
 */

/** Table definitions, in dependency order. */
export const SAMPLE_SCHEMA: readonly string[] = [
  `CREATE TABLE customers (
  id integer PRIMARY KEY,
  name varchar(100) NOT NULL,
  email varchar(200) NOT NULL UNIQUE,
  country char(2) NOT NULL,
  city varchar(100) NOT NULL,
  signed_up_at timestamp NOT NULL
)`,
  `CREATE TABLE products (
  id integer PRIMARY KEY,
  sku varchar(20) NOT NULL UNIQUE,
  name varchar(100) NOT NULL,
  category varchar(50) NOT NULL,
  price numeric(10,2) NOT NULL,
  stock integer NOT NULL
)`,
  `CREATE TABLE orders (
  id integer PRIMARY KEY,
  customer_id integer NOT NULL,
  status varchar(20) NOT NULL,
  ordered_at timestamp NOT NULL,
  shipped_at timestamp NULL,
  FOREIGN KEY (customer_id) REFERENCES customers (id)
)`,
  `CREATE TABLE order_items (
  order_id integer NOT NULL,
  product_id integer NOT NULL,
  quantity integer NOT NULL,
  unit_price numeric(10,2) NOT NULL,
  PRIMARY KEY (order_id, product_id),
  FOREIGN KEY (order_id) REFERENCES orders (id),
  FOREIGN KEY (product_id) REFERENCES products (id)
)`,
  `CREATE INDEX orders_customer_idx ON orders (customer_id)`,
  `CREATE INDEX order_items_product_idx ON order_items (product_id)`,
];

/** How many rows each table gets. */
export const SAMPLE_SIZES = { customers: 400, products: 60, orders: 2500 } as const;

const FIRST = [
  'Ada',
  'Lin',
  'Ana',
  'Omar',
  'Mia',
  'Kenji',
  'Sofia',
  'Liam',
  'Priya',
  'Noah',
  'Yuki',
  'Elena',
];
const LAST = [
  'Lovelace',
  'Chen',
  'Silva',
  'Haddad',
  'Novak',
  'Sato',
  'Rossi',
  'Murphy',
  'Rao',
  'Berg',
  'Kim',
];
const PLACES: ReadonlyArray<readonly [string, string]> = [
  ['GB', 'London'],
  ['GB', 'Manchester'],
  ['FR', 'Paris'],
  ['FR', 'Lyon'],
  ['DE', 'Berlin'],
  ['CN', 'Shanghai'],
  ['CN', 'Beijing'],
  ['JP', 'Osaka'],
  ['US', 'Boston'],
  ['US', 'Denver'],
  ['BR', 'Recife'],
  ['IN', 'Pune'],
];
const CATALOGUE: ReadonlyArray<readonly [string, readonly string[], number]> = [
  [
    'kitchen',
    ['Kettle', 'Teapot', 'Mug', 'Cafetiere', 'Toaster', 'Knife Set', 'Chopping Board', 'Whisk'],
    12,
  ],
  ['garden', ['Trowel', 'Watering Can', 'Hose', 'Seed Tray', 'Pruner', 'Gloves', 'Planter'], 15],
  ['office', ['Notebook', 'Desk Lamp', 'Stapler', 'Monitor Stand', 'Pen Set', 'Chair Mat', 'Whiteboard'], 9],
  ['travel', ['Backpack', 'Neck Pillow', 'Adapter', 'Luggage Tag', 'Packing Cubes', 'Water Bottle'], 18],
];
const STATUSES = ['delivered', 'delivered', 'delivered', 'shipped', 'paid', 'cancelled', 'refunded'];

/** A small, fast, seedable PRNG (mulberry32): same seed, same database, on every machine. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const pad = (n: number): string => String(n).padStart(2, '0');
/** `YYYY-MM-DD HH:MM:SS`, which every engine reads as a timestamp. */
function stamp(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** Multi-row INSERTs of at most 500 rows each: few round trips, and statements any engine accepts. */
function inserts(table: string, rows: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < rows.length; i += 500)
    out.push(`INSERT INTO ${table} VALUES ${rows.slice(i, i + 500).join(',\n')}`);
  return out;
}

/** The INSERT statements for the sample rows, in dependency order. */
export function sampleRows(): string[] {
  const rand = prng(20241130);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)] as T;
  const start = Date.UTC(2023, 0, 1);
  const day = 86_400_000;

  const customers: string[] = [];
  for (let id = 1; id <= SAMPLE_SIZES.customers; id += 1) {
    const first = pick(FIRST);
    const last = pick(LAST);
    const [country, city] = pick(PLACES);
    const email = `${first}.${last}.${id}@example.com`.toLowerCase();
    const signedUp = start + Math.floor(rand() * 365 * day);
    customers.push(
      `(${id}, ${quote(`${first} ${last}`)}, ${quote(email)}, '${country}', ${quote(city)}, '${stamp(signedUp)}')`,
    );
  }

  const products: string[] = [];
  const prices: number[] = [];
  let productId = 0;
  while (productId < SAMPLE_SIZES.products) {
    const [category, names, base] = CATALOGUE[productId % CATALOGUE.length] as (typeof CATALOGUE)[number];
    const name = names[Math.floor(productId / CATALOGUE.length) % names.length] as string;
    productId += 1;
    const edition = Math.floor((productId - 1) / (CATALOGUE.length * names.length));
    const price = Math.round((base + rand() * base * 4) * 100) / 100;
    prices[productId] = price;
    const label = edition ? `${name} Mk ${edition + 1}` : name;
    const sku = `${category.slice(0, 3).toUpperCase()}-${String(productId).padStart(4, '0')}`;
    products.push(
      `(${productId}, '${sku}', ${quote(label)}, '${category}', ${price.toFixed(2)}, ${Math.floor(rand() * 200)})`,
    );
  }

  const orders: string[] = [];
  const items: string[] = [];
  for (let id = 1; id <= SAMPLE_SIZES.orders; id += 1) {
    const customer = 1 + Math.floor(rand() * SAMPLE_SIZES.customers);
    const status = pick(STATUSES);
    const ordered = start + 30 * day + Math.floor(rand() * 640 * day);
    const shipped = ['delivered', 'shipped', 'refunded'].includes(status)
      ? `'${stamp(ordered + (1 + Math.floor(rand() * 5)) * day)}'`
      : 'NULL';
    orders.push(`(${id}, ${customer}, '${status}', '${stamp(ordered)}', ${shipped})`);
    const lines = 1 + Math.floor(rand() * 4);
    const chosen = new Set<number>();
    while (chosen.size < lines) chosen.add(1 + Math.floor(rand() * SAMPLE_SIZES.products));
    for (const product of [...chosen].sort((a, b) => a - b)) {
      const qty = 1 + Math.floor(rand() * 3);
      items.push(`(${id}, ${product}, ${qty}, ${(prices[product] as number).toFixed(2)})`);
    }
  }

  return [
    ...inserts('customers', customers),
    ...inserts('products', products),
    ...inserts('orders', orders),
    ...inserts('order_items', items),
  ];
}

/** Schema and rows, as one list of statements. */
export function sampleStatements(): string[] {
  return [...SAMPLE_SCHEMA, ...sampleRows()];
}

if (require.main === module) {
  process.stdout.write(`${sampleStatements().join(';\n\n')};\n`);
}
