/**
 * Chunk embeddings beside the snapshot: `vectors.bin` holds one unit-length float32 row per chunk
 * in snapshot order, `vectors.json` says which snapshot and which embedding model they belong to.
 * Rows are reused by content hash, so re-indexing embeds only the chunks that changed.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Embedder } from './embeddings';
import type { Snapshot } from './snapshot';
import { writeFileAtomic } from './snapshot';

interface VectorsMeta {
  /** The embedder's key (model and endpoint). */
  key: string;
  /** The snapshot generation the rows are aligned with. */
  generation: number;
  dims: number;
  /** Content hash of each row's chunk, for reuse when the snapshot changes. */
  hashes: string[];
}

/** Loaded vectors of one snapshot. */
export interface ChunkVectors {
  generation: number;
  dims: number;
  rows: Float32Array;
}

const META = 'vectors.json';
const ROWS = 'vectors.bin';

/** What is embedded for a chunk: its document title and heading give the passage its subject. */
function passage(snap: Snapshot, i: number): string {
  const c = snap.chunks[i]!;
  const title = snap.docs[c.d]!.title;
  return `${title}${c.h ? ` › ${c.h}` : ''}\n${c.t}`;
}

function readMeta(dir: string): VectorsMeta | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, META), 'utf8')) as VectorsMeta;
  } catch {
    return undefined;
  }
}

function readRows(dir: string, meta: VectorsMeta): Float32Array | undefined {
  try {
    const buf = fs.readFileSync(path.join(dir, ROWS));
    if (buf.byteLength !== meta.hashes.length * meta.dims * 4) return undefined;
    return new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4).slice();
  } catch {
    return undefined;
  }
}

/**
 * Makes the vectors match `snap` under `embedder`, embedding the chunks that have no row yet.
 * Does nothing when they already match.
 */
export async function syncVectors(
  dir: string,
  snap: Snapshot,
  embedder: Embedder,
  signal?: AbortSignal,
): Promise<{ embedded: number }> {
  const old = readMeta(dir);
  if (old && old.key === embedder.key && old.generation === snap.generation) return { embedded: 0 };
  const hashes = snap.chunks.map((_, i) => createHash('sha1').update(passage(snap, i)).digest('hex'));
  const reuse = new Map<string, Float32Array>();
  if (old && old.key === embedder.key) {
    const rows = readRows(dir, old);
    if (rows) old.hashes.forEach((h, r) => reuse.set(h, rows.subarray(r * old.dims, (r + 1) * old.dims)));
  }
  const missing = hashes.map((h, i) => (reuse.has(h) ? -1 : i)).filter((i) => i >= 0);
  const fresh = await embedder.embed(
    missing.map((i) => passage(snap, i)),
    'document',
    signal,
  );
  fresh.forEach((v, k) => reuse.set(hashes[missing[k]!]!, v));
  const dims = fresh[0]?.length ?? old?.dims ?? 0;
  const rows = new Float32Array(hashes.length * dims);
  hashes.forEach((h, i) => {
    const v = reuse.get(h);
    if (!v || v.length !== dims)
      throw new Error('The embedding provider changed its vector size; delete vectors.* and index again.');
    rows.set(v, i * dims);
  });
  writeFileAtomic(path.join(dir, ROWS), new Uint8Array(rows.buffer));
  const meta: VectorsMeta = { key: embedder.key, generation: snap.generation, dims, hashes };
  writeFileAtomic(path.join(dir, META), JSON.stringify(meta));
  return { embedded: missing.length };
}

const cache = new Map<string, { stamp: string; vectors: ChunkVectors }>();

/** The vectors of the snapshot in `dir` made by `embedder`, or undefined when they are missing or stale. */
export function loadVectors(dir: string, snap: Snapshot, embedder: Embedder): ChunkVectors | undefined {
  let stamp: string;
  try {
    const a = fs.statSync(path.join(dir, META));
    const b = fs.statSync(path.join(dir, ROWS));
    stamp = `${a.mtimeMs}:${a.size}:${b.mtimeMs}:${b.size}`;
  } catch {
    return undefined;
  }
  const hit = cache.get(dir);
  if (hit?.stamp === stamp && hit.vectors.generation === snap.generation) return hit.vectors;
  const meta = readMeta(dir);
  if (!meta || meta.key !== embedder.key || meta.generation !== snap.generation) return undefined;
  const rows = readRows(dir, meta);
  if (!rows) return undefined;
  const vectors = { generation: meta.generation, dims: meta.dims, rows };
  cache.set(dir, { stamp, vectors });
  return vectors;
}

/** Chunk indexes by cosine similarity to `query` (a unit vector), most similar first. */
export function nearestChunks(vectors: ChunkVectors, query: Float32Array, depth: number): number[] {
  const { dims, rows } = vectors;
  if (query.length !== dims) return [];
  const n = rows.length / dims;
  const scores = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let dot = 0;
    const off = i * dims;
    for (let j = 0; j < dims; j++) dot += rows[off + j]! * query[j]!;
    scores[i] = dot;
  }
  return [...scores.keys()].sort((a, b) => scores[b]! - scores[a]! || a - b).slice(0, depth);
}
