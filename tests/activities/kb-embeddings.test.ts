/**
 * Semantic recall through an OpenAI-compatible `/embeddings` endpoint served from 127.0.0.1 with the
 * real wire format (request `{model, input[]}`, bearer key; response `{object, data[{index,
 * embedding}], model, usage}`). The server's "model" maps words to a few concepts, so that a
 * paraphrase the documents never use still lands near them: the test can then tell a fused ranking
 * from a lexical one. Also: batching, reuse of vectors for unchanged chunks, fallback when the
 * provider fails at query time, and a redacted, final error for a bad key. On both engines: the
 * embedded one (vectors in the index folder) and PostgreSQL (real[] rows, nearest by SQL).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { SearchToolData } from '../../shared/citations';
import type { ToolResult } from '../../shared/tools/define';
import { SearchConfigSchema } from '../../activities/search/config';
import { createKnowledgeBaseActivities } from '../../activities/search/knowledge-base';
import { closeKnowledgeBases } from '../../activities/search/kb/open';
import { PG_URL, dropKbTables, kbTablePrefix } from '../../testkit/knowledge-base';
import { tempDir } from '../../testkit/temporal';

const KEY = 'sk-embed-test-0001';
/** Concepts of the toy model: every word listed maps onto its concept's axis. */
const CONCEPTS = [
  ['bom', 'byte', 'order', 'mark', 'signature', 'preamble'],
  ['decimal', 'hexadecimal', 'escape', 'escapes', 'entity', 'entities', 'encode', 'numeric', 'reference'],
  ['sourdough', 'starter', 'levain', 'leaven', 'flour', 'feed', 'feeding'],
  ['rain', 'umbrella', 'weather', 'storm', 'drizzle'],
];

function embed(text: string): number[] {
  const v = new Array<number>(CONCEPTS.length + 1).fill(0);
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const axis = CONCEPTS.findIndex((c) => c.includes(word));
    v[axis === -1 ? CONCEPTS.length : axis]! += axis === -1 ? 0.05 : 1;
  }
  return v;
}

interface Seen {
  model: string;
  inputs: number;
}
const seen: Seen[] = [];
let failWith: number | undefined;

const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    const send = (status: number, json: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(json));
    };
    if (req.method !== 'POST' || req.url !== '/v1/embeddings')
      return send(404, { error: { message: 'not found' } });
    if (req.headers.authorization !== `Bearer ${KEY}`) {
      return send(401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } });
    }
    if (failWith) return send(failWith, { error: { message: 'overloaded' } });
    const { model, input } = JSON.parse(body) as { model: string; input: string | string[] };
    const inputs = Array.isArray(input) ? input : [input];
    seen.push({ model, inputs: inputs.length });
    send(200, {
      object: 'list',
      model,
      data: inputs.map((t, index) => ({ object: 'embedding', index, embedding: embed(t) })),
      usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
    });
  });
});

const para = (s: string) => `${s} `.repeat(6).trim();

/** The three documents, in a fresh folder (each engine changes its own copy). */
function writeDocs(): string {
  const docs = tempDir('kb-embed-docs');
  fs.writeFileSync(
    path.join(docs, 'encodings.md'),
    `# Text encodings\n\n## Signatures\n\n${para('A UTF-8 file may begin with EF BB BF; strip that preamble before parsing.')}\n\n` +
      `## Line endings\n\n${para('Windows ends lines with CR LF while Unix uses LF only.')}`,
  );
  fs.writeFileSync(
    path.join(docs, 'bread.md'),
    `# Bread\n\n${para('Feed the levain twice a day with equal weights of flour and water.')}`,
  );
  fs.writeFileSync(
    path.join(docs, 'weather.md'),
    `# Weather\n\n${para('Take an umbrella when a storm is forecast.')}`,
  );
  return docs;
}

const prefixes: string[] = [];

/** The knowledge-base settings of an engine: a fresh folder, or fresh tables on the machine's PostgreSQL. */
function engineSettings(engine: 'embedded' | 'postgres'): Record<string, unknown> {
  if (engine === 'embedded') return { dataDir: tempDir('kb-embed-data') };
  const tablePrefix = kbTablePrefix();
  prefixes.push(tablePrefix);
  return { engine, url: PG_URL, tablePrefix };
}

function env() {
  return new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
}

const embeddingsAt = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await closeKnowledgeBases();
  await new Promise((resolve) => server.close(resolve));
  for (const p of prefixes) await dropKbTables(p);
});

describe.each(['embedded', 'postgres'] as const)('the %s engine', (engine) => {
  const docs = writeDocs();
  let activities: ReturnType<typeof createKnowledgeBaseActivities>;

  async function search(query: string): Promise<SearchToolData['records']> {
    const r: ToolResult = await env().run(activities.knowledge_base_search, {
      toolCallId: 't',
      args: { query, max_results: 3 },
    });
    return (r.data as SearchToolData).records;
  }

  beforeAll(() => {
    const cfg = SearchConfigSchema.parse({
      knowledgeBase: {
        ...engineSettings(engine),
        seed: [],
        embeddings: {
          baseUrl: embeddingsAt(),
          model: 'toy-passage',
          queryModel: 'toy-query',
          apiKey: KEY,
          batchSize: 2,
        },
      },
    }).knowledgeBase;
    activities = createKnowledgeBaseActivities(cfg);
    seen.length = 0;
  });

  test('indexing embeds every chunk in batches, and re-indexing embeds only what changed', async () => {
    await env().run(activities.indexKnowledgeBase, { path: docs });
    const passages = seen.filter((s) => s.model === 'toy-passage');
    expect(passages.reduce((n, s) => n + s.inputs, 0)).toBe(4);
    expect(Math.max(...passages.map((s) => s.inputs))).toBe(2);

    seen.length = 0;
    await env().run(activities.indexKnowledgeBase, { path: docs });
    expect(seen).toEqual([]);

    fs.writeFileSync(
      path.join(docs, 'weather.md'),
      `# Weather\n\n${para('Drizzle all week, so keep an umbrella near the door.')}`,
    );
    await env().run(activities.indexKnowledgeBase, { path: docs });
    expect(seen).toEqual([{ model: 'toy-passage', inputs: 1 }]);
  });

  test('a paraphrase the documents never use is found through the embeddings, fused with the lexical ranking', async () => {
    seen.length = 0;
    const records = await search('byte order mark');
    expect(seen).toEqual([{ model: 'toy-query', inputs: 1 }]);
    expect(records[0]).toMatchObject({ filename: 'encodings.md', title: 'Text encodings › Signatures' });
    expect(records[0]!.score_details).toMatchObject({ ranking: 'hybrid', semantic_rank: 1 });
    expect(records[0]!.score_details.lexical_rank).toBeUndefined();

    // Words both rankings know: the lexical and semantic lists agree on the top chunk.
    const both = await search('feed the levain');
    expect(both[0]).toMatchObject({ filename: 'bread.md' });
    expect(both[0]!.score_details).toMatchObject({ ranking: 'hybrid', lexical_rank: 1, semantic_rank: 1 });
  });

  test('when the provider fails at query time, the search still answers, lexically', async () => {
    failWith = 503;
    try {
      const records = await search('umbrella storm');
      expect(records[0]).toMatchObject({ filename: 'weather.md' });
      expect(records[0]!.score_details.ranking).toBe('lexical');
      expect(await search('byte order mark')).toEqual([]);
    } finally {
      failWith = undefined;
    }
  });

  test('a wrong key fails indexing for good, naming the setting to fix, without the key', async () => {
    const cfg = SearchConfigSchema.parse({
      knowledgeBase: {
        ...engineSettings(engine),
        seed: [],
        embeddings: {
          baseUrl: embeddingsAt(),
          model: 'toy-passage',
          apiKey: 'sk-wrong-key-9999',
        },
      },
    }).knowledgeBase;
    const err = (await env()
      .run(createKnowledgeBaseActivities(cfg).indexKnowledgeBase, { path: docs })
      .catch((x: unknown) => x)) as ApplicationFailure;
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err.type).toBe('SearchAuthError');
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toContain('search.knowledgeBase.embeddings.apiKey');
    expect(err.message).not.toContain('sk-wrong-key-9999');
  });
});
