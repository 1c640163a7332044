/**
 * The knowledge base in tests and benches: the PostgreSQL engine's tables under a prefix of their
 * own on the machine's server (so test files running at once never share an index, and dropped
 * after), documents written to a folder, and the search activity run as Temporal would run it.
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { Info } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { KnowledgeBaseActivities } from '../activities/search/knowledge-base';
import { tablesOf } from '../activities/search/kb/postgres/schema';
import type { SearchToolData } from '../shared/citations';
import type { ToolResult } from '../shared/tools/define';
import { PG_URL, fixtureName } from './sql-fixtures';

export { PG_URL };

/** A fresh table prefix (`kbt_<12 hex>`). */
export function kbTablePrefix(): string {
  return fixtureName('kbt');
}

/** Drops the knowledge-base tables under `prefix`. */
export async function dropKbTables(prefix: string, url: string = PG_URL): Promise<void> {
  const t = tablesOf(prefix);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      `DROP TABLE IF EXISTS ${[t.vectors, t.chunkTerms, t.docTerms, t.chunks, t.documents, t.meta].join(', ')} CASCADE`,
    );
  } finally {
    await client.end();
  }
}

/**
 * A worker config file (DURABLE_AGENT_CONFIG) whose knowledge base is the postgres engine under
 * `prefix`; the URL is read from `urlVariable` (`${env:…}`), as a deployment would keep it.
 */
export function writeKbConfigFile(
  dir: string,
  prefix: string,
  knowledgeBase: Record<string, unknown> = {},
  urlVariable = 'KB_DATABASE_URL',
): string {
  const file = path.join(dir, 'kb-config.json');
  fs.writeFileSync(
    file,
    JSON.stringify({
      search: {
        knowledgeBase: {
          engine: 'postgres',
          url: `\${env:${urlVariable}}`,
          tablePrefix: prefix,
          ...knowledgeBase,
        },
      },
    }),
  );
  return file;
}

/** An activity environment that logs errors only. */
export function kbActivityEnv(info: Partial<Info> = {}): MockActivityEnvironment {
  return new MockActivityEnvironment(info, { logger: new DefaultLogger('ERROR') });
}

/** A search activity's result with its data typed. */
export type KbSearchResult = ToolResult & { data: SearchToolData };

/** Runs `knowledge_base_search` as Temporal would. */
export async function searchKb(
  activities: KnowledgeBaseActivities,
  query: string,
  max_results = 5,
): Promise<KbSearchResult> {
  const r: ToolResult = await kbActivityEnv().run(activities.knowledge_base_search, {
    toolCallId: 't',
    args: { query, max_results },
  });
  return r as KbSearchResult;
}

/** Writes files (name → content) under `dir`, creating folders. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
}
