/**
 * Runs inside a worker thread: one PGlite database, answering requests from PgliteEngine. PGlite
 * runs Postgres as WASM on the thread that calls it and does not enforce statement_timeout, so a
 * runaway statement can only be stopped by terminating this thread — which is why it lives here and
 * not on the worker's main thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import type { ThreadData, ThreadReply, ThreadRequest } from './pglite-protocol';
import { serializeError } from './pglite-protocol';

/** Types kept as the server's text, as the pg engine does: same values on both Postgres engines. */
const RAW = (value: string): string => value;
const PARSERS = { 20: RAW, 1082: RAW, 1083: RAW, 1114: RAW, 1184: RAW, 1266: RAW };

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('pglite-thread must run in a worker thread');
  const data = workerData as ThreadData;
  let db: PGlite;
  try {
    db = data.dump
      ? await PGlite.create({ loadDataDir: new Blob([data.dump]) })
      : await PGlite.create(data.dataDir ?? 'memory://');
  } catch (err) {
    port.postMessage({ type: 'failed', error: serializeError(err) } satisfies ThreadReply);
    return;
  }
  port.on('message', (req: ThreadRequest) => {
    void handle(db, req).then((reply) => {
      if (reply.type === 'dumped') port.postMessage(reply, [reply.dump]);
      else port.postMessage(reply);
    });
  });
  port.postMessage({ type: 'ready' } satisfies ThreadReply);
}

async function handle(db: PGlite, req: ThreadRequest): Promise<ThreadReply> {
  try {
    switch (req.op) {
      case 'query': {
        const res = await db.query<unknown[]>(req.sql, [...req.params], {
          rowMode: 'array',
          parsers: PARSERS,
        });
        const keep = req.keepRows ?? res.rows.length;
        return {
          type: 'result',
          id: req.id,
          result: {
            columns: res.fields.map((f) => f.name),
            rows: res.rows.length > keep ? res.rows.slice(0, keep) : res.rows,
            rowCount: res.rows.length,
            ...(res.affectedRows !== undefined ? { affectedRows: res.affectedRows } : {}),
          },
        };
      }
      case 'exec':
        await db.exec(req.sql);
        return { type: 'done', id: req.id };
      case 'dump': {
        const file = await db.dumpDataDir('gzip');
        return { type: 'dumped', id: req.id, dump: await file.arrayBuffer() };
      }
    }
  } catch (err) {
    return { type: 'error', id: req.id, error: serializeError(err) };
  }
}

void main();
