/**
 * Content store fixtures for tests and benches: a PostgreSQL store in a schema of its own (so a
 * collection never touches another test's values in the shared database), and making stored
 * values old (what a store would look like after days, without waiting for them).
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { ContentStoreConfig } from '../activities/content/config';
import { CONTENT_TABLE } from '../activities/content/postgres-store';
import { PG_URL } from './sql-fixtures';
import { uid } from './temporal';

/** A fresh PostgreSQL schema and the store URL that uses it; `drop` removes it and all it holds. */
export async function pgSchemaStore(prefix = 'content'): Promise<{
  schema: string;
  url: string;
  config: ContentStoreConfig;
  drop(): Promise<void>;
}> {
  const schema = uid(prefix).replace(/-/g, '_');
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await admin.end();
  }
  const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  return {
    schema,
    url,
    config: { kind: 'postgres', url },
    async drop() {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      try {
        await c.query(`DROP SCHEMA ${schema} CASCADE`);
      } finally {
        await c.end();
      }
    },
  };
}

/** Every value file of a file store. */
export function contentFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((d) => /^[0-9a-f]{2}$/.test(d))
    .flatMap((d) =>
      fs
        .readdirSync(path.join(dir, d))
        .filter((f) => /^[0-9a-f]{62}\.json$/.test(f))
        .map((f) => path.join(dir, d, f)),
    );
}

/** The references a file store holds. */
export function fileStoreRefs(dir: string): Set<string> {
  return new Set(
    contentFiles(dir).map((f) => `sha256:${path.basename(path.dirname(f))}${path.basename(f, '.json')}`),
  );
}

/** Makes every value of a store look last written `ageMs` ago. */
export async function backdateContent(config: ContentStoreConfig, ageMs: number): Promise<void> {
  const then = new Date(Date.now() - ageMs);
  if (config.kind === 'file') {
    for (const f of contentFiles(config.dir)) fs.utimesSync(f, then, then);
    return;
  }
  const c = new pg.Client({ connectionString: config.url });
  await c.connect();
  try {
    await c.query(`UPDATE ${CONTENT_TABLE} SET written_at = $1`, [then]);
  } finally {
    await c.end();
  }
}
