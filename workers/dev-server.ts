import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { AGENT_SEARCH_ATTRIBUTES } from '../shared/search-attributes';
import { DATA_ROOT } from '../shared/project-root';
import { temporalBinary } from './binaries';
import { retryInterceptor } from './grpc-retry';

/** Where and how a local Temporal dev server runs. */
export interface DevServerOptions {
  /** Folder for the SQLite file, pid file and log. Default: .data/temporal in the project. */
  dataDir?: string;
  ip?: string;
  port?: number;
  uiPort?: number;
  /** Start without the Web UI (tests). */
  headless?: boolean;
  /** Seconds to wait for readiness. */
  readyTimeoutSec?: number;
  /** Dynamic config values over {@link DEV_SERVER_DYNAMIC_CONFIG} (tests that need a server timer shorter). */
  dynamicConfig?: Readonly<Record<string, string | number | boolean>>;
}

/** What `status` reports. */
export interface DevServerStatus {
  running: boolean;
  pid: number | null;
  address: string;
  uiUrl: string | null;
  dbFile: string;
  logFile: string;
}

/** `--search-attribute` values registering the agent's search attributes on the dev server. */
export const SEARCH_ATTRIBUTE_ARGS = AGENT_SEARCH_ATTRIBUTES.map((k) => {
  const type = k.type === 'INT' ? 'Int' : 'Keyword';
  return `${k.name}=${type}`;
});

/**
 * SQLite settings of the dev server's file. WAL lets readers and the writer work side by side;
 * `synchronous=NORMAL` (SQLite's advice for WAL) syncs the log at checkpoints instead of on every
 * commit: a killed or crashed server loses nothing (the log is in the OS's cache), a power cut may
 * lose the last commits. Measured here it took 0.7–0.9 ms off every update (7.9 → 7.1 ms p50).
 */
export const SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'] as const;

/**
 * Dynamic config of the dev server. Its history service reads each shard's transfer queue at most
 * 20 times a second by default, so a workflow task that an activity's completion or a signal
 * scheduled waited up to 50 ms before it went to the worker (25–38 ms measured): the largest part of
 * a step. At 1,000 reads a second a bare step of two activities went from 102 to 17–19 ms and a
 * signal became visible in 11.6 ms instead of 50 ms; 100 to 2,000 gave the same.
 */
export const DEV_SERVER_DYNAMIC_CONFIG = { 'history.transferProcessorMaxPollRPS': 1000 } as const;

/** The dev server's dynamic config as `--dynamic-config-value` arguments. */
export const DYNAMIC_CONFIG_ARGS = dynamicConfigArgs();

/** `--dynamic-config-value` arguments of the dev server's dynamic config with `extra` over it. */
function dynamicConfigArgs(extra: Readonly<Record<string, string | number | boolean>> = {}): string[] {
  return Object.entries({ ...DEV_SERVER_DYNAMIC_CONFIG, ...extra }).flatMap(([k, v]) => [
    '--dynamic-config-value',
    `${k}=${JSON.stringify(v)}`,
  ]);
}

function resolved(opts: DevServerOptions): Required<Omit<DevServerOptions, 'dynamicConfig'>> {
  return {
    dataDir: path.resolve(opts.dataDir ?? path.join(DATA_ROOT, '.data', 'temporal')),
    ip: opts.ip ?? '127.0.0.1',
    port: opts.port ?? 7233,
    uiPort: opts.uiPort ?? (opts.port ?? 7233) + 1000,
    headless: opts.headless ?? false,
    readyTimeoutSec: opts.readyTimeoutSec ?? 60,
  };
}

function files(dataDir: string) {
  return {
    db: path.join(dataDir, 'temporal.db'),
    pid: path.join(dataDir, 'temporal.pid'),
    log: path.join(dataDir, 'temporal.log'),
  };
}

/** The pid in the pid file, if that process is alive and is a Temporal binary (never a reused pid). */
function livePid(pidFile: string): number | null {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // A zombie (state Z) is already dead; it only waits for its parent to reap it.
    if (/^\d+ \(.*\) Z/.test(stat)) return null;
    return cmdline.includes('temporal') && cmdline.includes('start-dev') ? pid : null;
  } catch {
    return null;
  }
}

function portInUse(ip: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: ip, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** True when the server answers gRPC calls on the default namespace. */
export async function isServing(address: string): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({
      address,
      connectTimeout: 1000,
      interceptors: [retryInterceptor()],
    });
    await connection.workflowService.describeNamespace({ namespace: 'default' });
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

/** Status of the dev server that this data folder belongs to. */
export async function devServerStatus(opts: DevServerOptions = {}): Promise<DevServerStatus> {
  const o = resolved(opts);
  const f = files(o.dataDir);
  const pid = livePid(f.pid);
  const address = `${o.ip}:${o.port}`;
  const running = pid !== null && (await isServing(address));
  return {
    running,
    pid,
    address,
    uiUrl: running && !o.headless ? `http://${o.ip}:${o.uiPort}` : null,
    dbFile: f.db,
    logFile: f.log,
  };
}

/**
 * Starts the dev server with a persistent SQLite file (WAL journal) unless it already runs, and returns
 * only when it answers gRPC calls. Idempotent; refuses a port that another process holds.
 */
export async function startDevServer(opts: DevServerOptions = {}): Promise<DevServerStatus> {
  const o = resolved(opts);
  const f = files(o.dataDir);
  const address = `${o.ip}:${o.port}`;
  fs.mkdirSync(o.dataDir, { recursive: true });

  const existing = livePid(f.pid);
  if (existing !== null) {
    await waitUntilServing(address, o.readyTimeoutSec, f.log, existing);
    return devServerStatus(opts);
  }
  if (await portInUse(o.ip, o.port)) {
    throw new Error(
      `Port ${address} is already in use by another process; stop it or choose another port (--port / TEMPORAL_ADDRESS).`,
    );
  }

  const args = [
    'server',
    'start-dev',
    '--ip',
    o.ip,
    '--port',
    String(o.port),
    '--db-filename',
    f.db,
    ...SQLITE_PRAGMAS.flatMap((p) => ['--sqlite-pragma', p]),
    ...dynamicConfigArgs(opts.dynamicConfig),
    '--log-level',
    'warn',
  ];
  if (o.headless) args.push('--headless');
  else {
    args.push('--ui-port', String(o.uiPort));
    // With payload encryption, the Web UI shows plain text through the codec server (`durable-agent codec-server`).
    const codecEndpoint = process.env.DURABLE_AGENT_CODEC_ENDPOINT?.trim();
    if (codecEndpoint) args.push('--ui-codec-endpoint', codecEndpoint);
  }
  for (const attr of SEARCH_ATTRIBUTE_ARGS) args.push('--search-attribute', attr);

  const log = fs.openSync(f.log, 'a');
  // Detached with stdio on a file: the server must not hold our pipes open, or callers waiting
  // for our output (CI, execSync) would hang.
  const child = spawn(temporalBinary('temporal'), args, { detached: true, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  if (child.pid === undefined) throw new Error('Could not start the Temporal dev server process');
  fs.writeFileSync(f.pid, String(child.pid));
  child.unref();
  await waitUntilServing(address, o.readyTimeoutSec, f.log, child.pid);
  return devServerStatus(opts);
}

async function waitUntilServing(address: string, timeoutSec: number, logFile: string, pid: number) {
  const deadline = Date.now() + timeoutSec * 1000;
  const port = Number(address.slice(address.lastIndexOf(':') + 1));
  while (Date.now() < deadline) {
    // Another process's server that took the port first answers too (its start then fails with
    // "address already in use"): only our own process's answer counts.
    if ((await isServing(address)) && listensOn(pid, port) !== false) return;
    try {
      process.kill(pid, 0);
    } catch {
      throw new Error(`The Temporal dev server exited during start; see ${logFile}:\n${tail(logFile)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(
    `The Temporal dev server did not answer on ${address} within ${timeoutSec}s; see ${logFile}`,
  );
}

/**
 * Whether process `pid` holds the TCP socket listening on `port` (Linux: /proc/net/tcp{,6} name the
 * listening socket's inode, /proc/<pid>/fd the sockets the process holds); undefined where /proc
 * cannot tell.
 */
export function listensOn(pid: number, port: number): boolean | undefined {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  try {
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      if (!fs.existsSync(table)) continue;
      for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
        const cols = line.trim().split(/\s+/);
        // local_address is HEXIP:HEXPORT, st 0A is LISTEN, inode is the 10th column.
        if (cols[1]?.endsWith(`:${hexPort}`) && cols[3] === '0A' && cols[9]) inodes.add(cols[9]);
      }
    }
  } catch {
    return undefined;
  }
  if (!inodes.size) return undefined;
  let fds: string[];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    // The process is gone (or not ours to look into): it does not hold the port.
    return fs.existsSync(`/proc/${pid}`) ? undefined : false;
  }
  for (const fd of fds) {
    let target: string;
    try {
      target = fs.readlinkSync(`/proc/${pid}/fd/${fd}`, { encoding: 'utf8' });
    } catch {
      continue;
    }
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m?.[1] && inodes.has(m[1])) return true;
  }
  return false;
}

function tail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Stops the dev server of this data folder (SIGTERM, then SIGKILL after 10 s). Returns whether one ran. */
export async function stopDevServer(opts: DevServerOptions = {}): Promise<boolean> {
  const o = resolved(opts);
  const f = files(o.dataDir);
  const pid = livePid(f.pid);
  if (pid === null) {
    fs.rmSync(f.pid, { force: true });
    return false;
  }
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (livePid(f.pid) !== null) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  while (livePid(f.pid) !== null) await new Promise((r) => setTimeout(r, 100));
  fs.rmSync(f.pid, { force: true });
  return true;
}
