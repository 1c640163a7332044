import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { sampleStatements } from '../sample-db/seed';
import type { PgliteConnectionConfig } from '../config';
import { SqlConnectError, SqlTimeoutError } from '../errors';
import { withDeadline } from './deadline';
import type { ThreadData, ThreadReply, ThreadRequest } from './pglite-protocol';
import { PgliteError } from './pglite-protocol';
import type { SessionOptions, SqlEngine, SqlSession, StatementResult } from './types';

/**
 * The thread entry: the TypeScript source under tsx/jest (loaded through tsx's require hook), the
 * compiled file after a build.
 */
function threadEntry(): { file: string; execArgv: string[] } {
  const ts = path.join(__dirname, 'pglite-thread.ts');
  if (__filename.endsWith('.ts')) return { file: ts, execArgv: ['--require', require.resolve('tsx/cjs')] };
  return { file: path.join(__dirname, 'pglite-thread.js'), execArgv: [] };
}

/** Omit over each member of a union (plain Omit would merge them). */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** One running PGlite thread and its outstanding requests. */
class PgliteThread {
  private readonly worker: Worker;
  private readonly pending = new Map<
    number,
    { resolve: (r: ThreadReply) => void; reject: (e: Error) => void }
  >();
  private nextId = 0;
  private dead: Error | undefined;
  /** Settles when the database is open (or failed to open). */
  readonly ready: Promise<void>;

  constructor(data: ThreadData) {
    const entry = threadEntry();
    this.worker = new Worker(entry.file, {
      execArgv: entry.execArgv,
      workerData: data,
      ...(data.dump ? { transferList: [data.dump] } : {}),
    });
    // An idle database thread must not keep a stopped worker's process alive.
    this.worker.unref();
    this.ready = new Promise((resolve, reject) => {
      this.worker.on('message', (msg: ThreadReply) => {
        if (msg.type === 'ready') return resolve();
        if (msg.type === 'failed') return reject(new PgliteError(msg.error));
        const waiter = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        waiter?.resolve(msg);
      });
      const die = (err: Error) => {
        this.dead ??= err;
        reject(err);
        for (const w of this.pending.values()) w.reject(err);
        this.pending.clear();
      };
      this.worker.on('error', die);
      this.worker.on('exit', (code) => die(new Error(`the PGlite thread exited (code ${code})`)));
    });
    // Startup failures are reported through `ready`; this only stops an unhandled rejection.
    this.ready.catch(() => undefined);
  }

  get alive(): boolean {
    return this.dead === undefined;
  }

  request(req: DistributiveOmit<ThreadRequest, 'id'>): Promise<ThreadReply> {
    if (this.dead) return Promise.reject(this.dead);
    const id = (this.nextId += 1);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...req, id });
    });
  }

  async query(sql: string, params: readonly unknown[] = [], keepRows?: number): Promise<StatementResult> {
    const reply = await this.request({
      op: 'query',
      sql,
      params,
      ...(keepRows !== undefined ? { keepRows } : {}),
    });
    return unwrap(reply, 'result').result;
  }

  async exec(sql: string): Promise<void> {
    unwrap(await this.request({ op: 'exec', sql }), 'done');
  }

  async dump(): Promise<ArrayBuffer> {
    return unwrap(await this.request({ op: 'dump' }), 'dumped').dump;
  }

  /** Stops the thread at once, whatever it is running; outstanding requests fail with `why`. */
  async terminate(why: Error): Promise<void> {
    this.dead ??= why;
    for (const w of this.pending.values()) w.reject(why);
    this.pending.clear();
    await this.worker.terminate();
  }
}

function unwrap<T extends ThreadReply['type']>(
  reply: ThreadReply,
  want: T,
): Extract<ThreadReply, { type: T }> {
  if (reply.type === 'error') throw new PgliteError(reply.error);
  if (reply.type !== want) throw new Error(`unexpected reply ${reply.type} from the PGlite thread`);
  return reply as Extract<ThreadReply, { type: T }>;
}

/** The sample's SQL plus ANALYZE, so sql_schema's row estimates are right from the start. */
function sampleSql(): string {
  return `${sampleStatements().join(';\n')};\nANALYZE;`;
}

/**
 * Where the built sample is cached between worker starts. Creating a PGlite database runs initdb,
 * which takes seconds (tens of seconds on a busy machine); loading a dump skips it. Keyed by the
 * PGlite version and the sample SQL, so a change to either builds a fresh one.
 */
async function sampleCacheFile(sql: string): Promise<string> {
  // The package's exports map hides package.json; it sits one folder above the resolved dist entry.
  const pkgFile = path.join(path.dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json');
  const pkg = JSON.parse(await fs.readFile(pkgFile, 'utf8')) as { version: string };
  const hash = createHash('sha256').update(pkg.version).update(sql).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), 'durable-agent', `pglite-sample-${hash}.tar.gz`);
}

/** Loads the cached sample, or builds it (and caches it) when there is none. */
async function startSample(): Promise<PgliteThread> {
  const sql = sampleSql();
  const file = await sampleCacheFile(sql);
  const cached = await fs.readFile(file).catch(() => undefined);
  if (cached) {
    const thread = new PgliteThread({ dump: new Uint8Array(cached).buffer });
    await thread.ready;
    return thread;
  }
  const thread = new PgliteThread({});
  await thread.ready;
  await thread.exec(sql);
  const dump = await thread.dump();
  // Written to a unique name and renamed, so concurrent workers never read a half-written cache.
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await fs.writeFile(tmp, Buffer.from(dump));
  await fs.rename(tmp, file);
  return thread;
}

/**
 * Embedded Postgres (PGlite) in a worker thread: the shipped sample in memory, or a data folder.
 * Sessions run one at a time (PGlite has a single connection). The time limit is enforced by
 * terminating the thread — PGlite ignores statement_timeout — after which the next session starts a
 * fresh thread: the sample reloads from its cached dump, a data folder reopens (recovering from its
 * WAL like a Postgres server after a crash; the interrupted transaction is lost, committed ones are not).
 */
export class PgliteEngine implements SqlEngine {
  readonly kind = 'pglite';
  readonly dialect = 'postgres';
  private thread: Promise<PgliteThread> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(private readonly config: PgliteConnectionConfig) {}

  session<T>(fn: (s: SqlSession) => Promise<T>, opts: SessionOptions): Promise<T> {
    const run = this.queue.then(() => this.runSession(fn, opts));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async runSession<T>(fn: (s: SqlSession) => Promise<T>, opts: SessionOptions): Promise<T> {
    const thread = await this.started();
    const session: SqlSession = {
      query: (sql, params, keepRows) => thread.query(sql, params, keepRows),
      command: (sql) => thread.exec(sql),
    };
    try {
      // Starting the thread is not part of the statement's time; the limit starts here.
      return await withDeadline(fn(session), {
        ms: opts.timeoutMs,
        limitMs: opts.timeoutMs,
        signal: opts.signal,
        stop: () => this.discard(thread, new SqlTimeoutError(opts.timeoutMs)),
      });
    } catch (err) {
      // A session that failed half-way may have left its transaction open on the one connection.
      if (thread.alive) await thread.exec('ROLLBACK').catch(() => this.discard(thread, err as Error));
      throw err;
    }
  }

  private discard(thread: PgliteThread, why: Error): void {
    void thread.terminate(why);
    this.thread = undefined;
  }

  private started(): Promise<PgliteThread> {
    if (this.closed) return Promise.reject(new SqlConnectError(new Error('the connection was closed')));
    this.thread ??= this.start().catch((err: unknown) => {
      this.thread = undefined;
      throw new SqlConnectError(err);
    });
    return this.thread;
  }

  private async start(): Promise<PgliteThread> {
    const { dataDir, schema } = this.config;
    const thread = dataDir
      ? new PgliteThread({ dataDir: path.resolve(dataDir) })
      : this.config.loadSample === false
        ? new PgliteThread({})
        : await startSample();
    await thread.ready;
    if (dataDir && this.config.loadSample) {
      const tables = await thread.query(
        "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
      );
      if (Number(tables.rows[0]?.[0] ?? 0) === 0) await thread.exec(sampleSql());
    }
    if (schema) await thread.exec(`SET search_path TO "${schema}"`);
    return thread;
  }

  async close(): Promise<void> {
    this.closed = true;
    const thread = await this.thread?.catch(() => undefined);
    this.thread = undefined;
    await thread?.terminate(new Error('the connection was closed'));
  }
}
