/**
 * The channels live tokens travel on, outside workflow history. Both keep a run's recent frames
 * (so a late joiner gets the answer so far and a watcher resumes where it left off) and say when
 * there are new ones:
 *
 *   - `file`: one append-only file per run in a folder (default .data/streams) and file-system
 *     notifications: zero setup for a worker and the API on one machine (separate processes);
 *   - `postgres`: a table and LISTEN/NOTIFY, for workers and the API on different machines (the
 *     PostgreSQL a multi-machine deployment already has for its content store; no new service).
 *
 * A channel never fails a run: publishing errors are the publisher's to swallow (see publisher.ts).
 */
import type { StreamFrame } from './frames';

/** Where a reader is in a run's frames (opaque to callers). */
export type StreamCursor = { offset: number } | { id: number };

/** A live-token channel. */
export interface StreamChannel {
  readonly kind: 'file' | 'postgres';
  /** Adds frames of one run, in order. */
  publish(run: string, frames: StreamFrame[]): Promise<void>;
  /** The run's frames after `cursor` (all it keeps without one), and the cursor after them. */
  read(run: string, cursor?: StreamCursor): Promise<{ frames: StreamFrame[]; cursor: StreamCursor }>;
  /** Calls `onChange` whenever the run may have new frames; returns what stops it. */
  watch(run: string, onChange: () => void): () => void;
  close(): Promise<void>;
}

/** Budgets of what a channel keeps. */
export const STREAM_BUDGETS = Object.freeze({
  /** Bytes of deltas one call attempt streams; past it, a `cut` frame and nothing more. */
  attemptBytes: 1024 * 1024,
  /** A run's file is started afresh at a call's start once it is past this size. */
  runFileBytes: 2 * 1024 * 1024,
  /** Frames older than this are swept (files by modification time, rows by insertion time). */
  keepMs: 60 * 60 * 1000,
  /** How often a process sweeps, at most. */
  sweepEveryMs: 10 * 60 * 1000,
} as const);
