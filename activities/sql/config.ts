import { z } from 'zod';
import { MAX_ROWS_LIMIT } from '../../shared/tools/sql';

const CONNECTION_NAME = /^[A-Za-z0-9_-]+$/;

/** The connection used when a call names none and no databases are configured: the shipped sample. */
export const SAMPLE_CONNECTION = 'sample';

/** Where sql_query may pause, for the crash tests. */
export type SqlStallPoint = 'write-committed';

const TestHooksSchema = z
  .object({
    stallAt: z.enum(['write-committed']),
    stallMs: z.number().int().min(1).max(600_000),
  })
  .strict()
  .describe(
    'TEST ONLY: sql_query pauses (heartbeating) at this point of a write so a test can kill the worker there',
  );

/** URL schemes each server engine accepts. */
const URL_SCHEMES = { postgres: ['postgres:', 'postgresql:'], mysql: ['mysql:', 'mariadb:'] } as const;

/**
 * What is wrong with a connection URL, or null when it can be used. The answer never contains the
 * URL or any part of it (it holds the password), so it can go into logs and workflow history.
 */
export function connectionUrlProblem(engine: 'postgres' | 'mysql', url: string): string | null {
  const example =
    engine === 'postgres' ? 'postgres://user:password@host:5432/db' : 'mysql://user:password@host:3306/db';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `the URL is malformed (expected ${example}; a password with @ : / # ? must be percent-encoded)`;
  }
  if (!(URL_SCHEMES[engine] as readonly string[]).includes(parsed.protocol))
    return `the URL scheme must be ${URL_SCHEMES[engine].join(' or ')}// for engine ${engine} (expected ${example})`;
  if (!parsed.hostname) return `the URL has no host (expected ${example})`;
  return null;
}

/** The zod check of a server URL: the message names the problem, never the value. */
function urlSchema(engine: 'postgres' | 'mysql', description: string) {
  return z
    .string()
    .min(1)
    .superRefine((url, ctx) => {
      const problem = connectionUrlProblem(engine, url);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .describe(description);
}

/** Settings every engine shares. */
const common = {
  writable: z
    .boolean()
    .default(false)
    .describe('Allow INSERT/UPDATE/DELETE (with a real WHERE); reads still run in a READ ONLY transaction'),
  statementTimeoutMs: z
    .number()
    .int()
    .min(100)
    .max(600_000)
    .default(15_000)
    .describe('Longest one tool call may run its statement'),
  maxRows: z
    .number()
    .int()
    .min(1)
    .max(MAX_ROWS_LIMIT)
    .default(100)
    .describe("Rows returned per call (default, and upper bound for the call's own maxRows)"),
  maxResultBytes: z
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024)
    .default(64 * 1024)
    .describe('Size of the rows returned per call, as JSON; larger results are truncated with a notice'),
  maxAffectedRows: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(100)
    .describe(
      'Most rows one INSERT/UPDATE/DELETE may change; over it the transaction is rolled back and the model told how many it would have touched',
    ),
  allowPrivilegedRole: z
    .boolean()
    .default(false)
    .describe(
      'Accept a role with superuser or global privileges (refused by default: the agent could read password hashes and server files)',
    ),
  description: z
    .string()
    .max(2000)
    .optional()
    .describe('What the database holds; shown to the model by sql_schema'),
  testHooks: TestHooksSchema.optional(),
};

const PostgresSchema = z
  .object({
    engine: z.literal('postgres'),
    url: urlSchema(
      'postgres',
      'postgres://user:password@host:port/db; write "${env:NAME}" to keep it out of the file',
    ),
    schema: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_$]{0,62}$/)
      .optional()
      .describe("Schema searched first (search_path); default: the server's search_path"),
    poolSize: z.number().int().min(1).max(50).default(4),
  })
  .extend(common)
  .strict();

const MysqlSchema = z
  .object({
    engine: z.literal('mysql'),
    url: urlSchema(
      'mysql',
      'mysql://user:password@host:port/db (MySQL or MariaDB); "${env:NAME}" keeps it out of the file',
    ),
    poolSize: z.number().int().min(1).max(50).default(4),
  })
  .extend(common)
  .strict();

const PgliteSchema = z
  .object({
    engine: z.literal('pglite'),
    dataDir: z
      .string()
      .min(1)
      .optional()
      .describe('Folder of a PGlite database; omit for the shipped sample database, in memory'),
    loadSample: z
      .boolean()
      .optional()
      .describe(
        'Create the sample tables in an empty dataDir (default: true without dataDir, false with one)',
      ),
    schema: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_$]{0,62}$/)
      .optional()
      .describe('Schema searched first (search_path)'),
  })
  .extend(common)
  .strict();

/** One named connection, as written in the config file (after defaults). */
export const DatabaseConnectionSchema = z.discriminatedUnion('engine', [
  PostgresSchema,
  MysqlSchema,
  PgliteSchema,
]);
/** One configured connection. Holds secrets (the URL): never return it from an activity or log it. */
export type DatabaseConnectionConfig = z.output<typeof DatabaseConnectionSchema>;
/** A configured Postgres connection. */
export type PostgresConnectionConfig = z.output<typeof PostgresSchema>;
/** A configured MySQL/MariaDB connection. */
export type MysqlConnectionConfig = z.output<typeof MysqlSchema>;
/** A configured PGlite connection. */
export type PgliteConnectionConfig = z.output<typeof PgliteSchema>;

/**
 * Database connections by name (`databases.analytics`). Workflows only ever see the name; the URL
 * (with its password) stays in the worker. With none configured, a read-only `sample` PGlite
 * connection with the shipped sample database exists, so the demo works with zero setup.
 */
export const DatabasesConfigSchema = z
  .record(z.string().regex(CONNECTION_NAME), DatabaseConnectionSchema)
  .default({});
/** Database configuration of a worker. */
export type DatabasesConfig = z.output<typeof DatabasesConfigSchema>;

/** The connections a worker offers: the configured ones, or the sample when there are none. */
export function effectiveConnections(config: DatabasesConfig): DatabasesConfig {
  if (Object.keys(config).length > 0) return config;
  return { [SAMPLE_CONNECTION]: DatabaseConnectionSchema.parse({ engine: 'pglite' }) };
}

/**
 * Picks the connection a call names: the given name, else "sample" when it exists, else the only one.
 * Returns an explanation for the model when there is no such connection (it can fix that itself).
 */
export function pickConnectionName(
  connections: DatabasesConfig,
  requested: string | undefined,
): { ok: true; name: string } | { ok: false; message: string } {
  const names = Object.keys(connections);
  if (requested !== undefined) {
    if (names.includes(requested)) return { ok: true, name: requested };
    return {
      ok: false,
      message: `There is no database connection named "${requested}". Configured connections: ${names.join(', ')}. Pass one of these as "connection".`,
    };
  }
  if (names.includes(SAMPLE_CONNECTION)) return { ok: true, name: SAMPLE_CONNECTION };
  if (names.length === 1) return { ok: true, name: names[0] as string };
  return {
    ok: false,
    message: `Several database connections are configured (${names.join(', ')}); pass one of them as "connection".`,
  };
}
