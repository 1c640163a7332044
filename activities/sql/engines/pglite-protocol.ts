import type { StatementResult } from './types';

/** What the PGlite thread starts from: a dump to load, a data folder, or neither (empty, in memory). */
export interface ThreadData {
  dump?: ArrayBuffer;
  dataDir?: string;
}

/** A request to the PGlite thread. `exec` runs the tool's own SQL (several statements); never model text. */
export type ThreadRequest =
  | { op: 'query'; id: number; sql: string; params: readonly unknown[]; keepRows?: number }
  | { op: 'exec'; id: number; sql: string }
  | { op: 'dump'; id: number };

/** The fields of a Postgres error worth carrying across the thread boundary. */
export interface SerializedError {
  message: string;
  code?: string;
  position?: string;
  detail?: string;
  hint?: string;
}

/** A message from the PGlite thread. */
export type ThreadReply =
  | { type: 'ready' }
  | { type: 'failed'; error: SerializedError }
  | { type: 'result'; id: number; result: StatementResult }
  | { type: 'done'; id: number }
  | { type: 'dumped'; id: number; dump: ArrayBuffer }
  | { type: 'error'; id: number; error: SerializedError };

/** Copies the useful fields of an error into a plain object that survives postMessage. */
export function serializeError(err: unknown): SerializedError {
  const e = (err ?? {}) as Partial<SerializedError>;
  const out: SerializedError = { message: err instanceof Error ? err.message : String(err) };
  for (const key of ['code', 'position', 'detail', 'hint'] as const) {
    const v = e[key];
    if (typeof v === 'string' && v) out[key] = v;
  }
  return out;
}

/** An error from the PGlite thread, with the same fields a pg error has. */
export class PgliteError extends Error {
  readonly code?: string;
  readonly position?: string;
  readonly detail?: string;
  readonly hint?: string;
  constructor(e: SerializedError) {
    super(e.message);
    this.name = 'PgliteError';
    Object.assign(this, { code: e.code, position: e.position, detail: e.detail, hint: e.hint });
  }
}
