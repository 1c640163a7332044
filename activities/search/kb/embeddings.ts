/**
 * Client of an OpenAI-compatible `POST /embeddings` endpoint (OpenAI, vLLM, Ollama, llama.cpp
 * server, LocalAI, text-embeddings-inference, …): texts in, unit-length vectors out.
 */
import { z } from 'zod';
import { requestProvider } from '../web/http';

/** Settings of the embedding provider (`search.knowledgeBase.embeddings`). */
export interface EmbeddingsSettings {
  /** Base URL up to the API version, e.g. `http://127.0.0.1:8080/v1`; `/embeddings` is appended. */
  baseUrl: string;
  model: string;
  /** Model for queries, when the server separates query and passage embeddings by model name. */
  queryModel?: string | undefined;
  apiKey?: string | undefined;
  /** Asks the model for vectors of this size (models that support shortening, e.g. OpenAI v3). */
  dimensions?: number | undefined;
  /** Texts per request. */
  batchSize: number;
  timeoutMs: number;
  /** Text put before queries and before passages: some models (E5: `query: `, `passage: `) need it. */
  queryPrefix: string;
  documentPrefix: string;
}

/** Turns texts into unit-length vectors. */
export interface Embedder {
  /** Identifies the vector space: vectors made under another key are not comparable. */
  readonly key: string;
  embed(texts: readonly string[], kind: 'query' | 'document', signal?: AbortSignal): Promise<Float32Array[]>;
}

const EmbeddingsResponse = z.object({
  data: z.array(z.object({ embedding: z.array(z.number()).min(1), index: z.number().int().min(0) })).min(1),
});

/** Longest text sent per passage; embedding models read a few hundred tokens at most anyway. */
const MAX_INPUT_CHARS = 2000;

/** Creates an embedder for an OpenAI-compatible endpoint. */
export function createEmbedder(cfg: EmbeddingsSettings, fetchImpl: typeof fetch = fetch): Embedder {
  const url = `${cfg.baseUrl.replace(/\/+$/, '')}/embeddings`;
  const key = JSON.stringify([
    url,
    cfg.model,
    cfg.queryModel ?? null,
    cfg.dimensions ?? null,
    cfg.documentPrefix,
    cfg.queryPrefix,
  ]);
  return {
    key,
    async embed(texts, kind, signal) {
      const prefix = kind === 'query' ? cfg.queryPrefix : cfg.documentPrefix;
      const model = kind === 'query' ? (cfg.queryModel ?? cfg.model) : cfg.model;
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += cfg.batchSize) {
        const input = texts.slice(i, i + cfg.batchSize).map((t) => prefix + t.slice(0, MAX_INPUT_CHARS));
        const res = await requestProvider({
          provider: 'The embedding provider',
          keyField: 'search.knowledgeBase.embeddings.apiKey',
          method: 'POST',
          url,
          headers: cfg.apiKey ? { authorization: `Bearer ${cfg.apiKey}` } : {},
          body: { model, input, ...(cfg.dimensions ? { dimensions: cfg.dimensions } : {}) },
          responseSchema: EmbeddingsResponse,
          timeoutMs: cfg.timeoutMs,
          ...(signal ? { signal } : {}),
          fetchImpl,
          secrets: cfg.apiKey ? [cfg.apiKey] : [],
        });
        const rows = [...res.data].sort((a, b) => a.index - b.index);
        if (rows.length !== input.length) {
          throw new Error(
            `The embedding provider at ${url} returned ${rows.length} vectors for ${input.length} texts.`,
          );
        }
        const dims = rows[0]!.embedding.length;
        for (const r of rows) {
          if (r.embedding.length !== dims)
            throw new Error(`The embedding provider at ${url} mixed vector sizes.`);
          out.push(unit(r.embedding));
        }
      }
      return out;
    },
  };
}

/** The vector scaled to length 1, so a dot product is the cosine similarity. */
function unit(v: readonly number[]): Float32Array {
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum) || 1;
  return Float32Array.from(v, (x) => x / norm);
}
