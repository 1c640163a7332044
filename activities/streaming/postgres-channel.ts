import type pg from 'pg';
import type { StreamChannel, StreamCursor } from './channel';
import { STREAM_BUDGETS } from './channel';
import type { StreamFrame } from './frames';

/** The table the PostgreSQL channel keeps recent frames in, and its NOTIFY channel. */
export const STREAM_TABLE = 'durable_agent_stream';

/**
 * Live tokens through PostgreSQL, for workers and watchers on different machines: each batch of
 * frames is inserted (so late joiners and resuming watchers read what they missed) and announced
 * with NOTIFY (the run id as payload), in one statement. Watchers LISTEN on one connection per
 * process. Rows older than {@link STREAM_BUDGETS.keepMs} are swept; the table is created on first use.
 */
export class PostgresStreamChannel implements StreamChannel {
  readonly kind = 'postgres' as const;
  private readonly pool: pg.Pool;
  private ready: Promise<void> | undefined;
  private listener: Promise<pg.Client> | undefined;
  private readonly watchers = new Map<string, Set<() => void>>();
  private lastSweep = 0;

  /**
   * @param pollMs how often a watcher looks anyway, for a notification lost while the listening
   *   connection was down; LISTEN/NOTIFY, not this poll, keeps latency low.
   */
  constructor(
    private readonly url: string,
    private readonly pollMs = 1000,
  ) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
    const { Pool } = require('pg') as typeof pg;
    this.pool = new Pool({ connectionString: url, max: 2 });
    this.pool.on('error', () => undefined);
  }

  private init(): Promise<void> {
    this.ready ??= this.pool
      .query(
        `CREATE TABLE IF NOT EXISTS ${STREAM_TABLE} (
           id bigserial PRIMARY KEY,
           run text NOT NULL,
           frame text NOT NULL,
           at timestamptz NOT NULL DEFAULT now()
         );
         CREATE INDEX IF NOT EXISTS ${STREAM_TABLE}_run ON ${STREAM_TABLE} (run, id)`,
      )
      .then(() => undefined)
      .catch((err: unknown) => {
        this.ready = undefined;
        throw err;
      });
    return this.ready;
  }

  async publish(run: string, frames: StreamFrame[]): Promise<void> {
    if (!frames.length) return;
    await this.init();
    const values = frames.map((_, i) => `($1, $${i + 2})`).join(', ');
    await this.pool.query(
      `WITH added AS (INSERT INTO ${STREAM_TABLE} (run, frame) VALUES ${values} RETURNING 1)
       SELECT pg_notify('${STREAM_TABLE}', $1) FROM (SELECT 1) one WHERE EXISTS (SELECT 1 FROM added)`,
      [run, ...frames.map((f) => JSON.stringify(f))],
    );
    const now = Date.now();
    if (now - this.lastSweep >= STREAM_BUDGETS.sweepEveryMs) {
      this.lastSweep = now;
      void this.pool
        .query(`DELETE FROM ${STREAM_TABLE} WHERE at < now() - ($1::bigint * interval '1 millisecond')`, [
          STREAM_BUDGETS.keepMs,
        ])
        .catch(() => undefined);
    }
  }

  async read(run: string, cursor?: StreamCursor): Promise<{ frames: StreamFrame[]; cursor: StreamCursor }> {
    await this.init();
    const after = cursor && 'id' in cursor ? cursor.id : 0;
    const r = await this.pool.query<{ id: string; frame: string }>(
      `SELECT id, frame FROM ${STREAM_TABLE} WHERE run = $1 AND id > $2 ORDER BY id LIMIT 10000`,
      [run, after],
    );
    let last = after;
    const frames: StreamFrame[] = [];
    for (const row of r.rows) {
      last = Number(row.id);
      frames.push(JSON.parse(row.frame) as StreamFrame);
    }
    return { frames, cursor: { id: last } };
  }

  watch(run: string, onChange: () => void): () => void {
    let set = this.watchers.get(run);
    if (!set) {
      set = new Set();
      this.watchers.set(run, set);
    }
    set.add(onChange);
    void this.listen().catch(() => undefined);
    // A notification lost while the connection was down is made up for by a slow poll.
    const poll = setInterval(onChange, this.pollMs);
    poll.unref();
    return () => {
      clearInterval(poll);
      set.delete(onChange);
      if (!set.size) this.watchers.delete(run);
    };
  }

  private listen(): Promise<pg.Client> {
    this.listener ??= (async () => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand
      const { Client } = require('pg') as typeof pg;
      const client = new Client({ connectionString: this.url });
      client.on('error', () => {
        // A dropped connection: the next watch listens again; polls cover the gap.
        this.listener = undefined;
      });
      client.on('notification', (n) => {
        for (const fn of this.watchers.get(n.payload ?? '') ?? []) fn();
      });
      await client.connect();
      await client.query(`LISTEN ${STREAM_TABLE}`);
      return client;
    })().catch((err: unknown) => {
      this.listener = undefined;
      throw err;
    });
    return this.listener;
  }

  async close(): Promise<void> {
    const listener = this.listener;
    this.listener = undefined;
    await listener?.then((c) => c.end()).catch(() => undefined);
    await this.pool.end();
  }
}
