import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { CLI, workflowBundleFile } from './temporal';

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** A worker running as its own process (so a test can SIGKILL it), with its JSON log lines collected. */
export interface WorkerProcess {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  stderr: string[];
  exited: Promise<number | null>;
}

/** Starts `durable-agent worker` in a child process and resolves once it polls. */
export async function startWorkerProcess(env: Record<string, string>): Promise<WorkerProcess> {
  // The run's shared workflow bundle: a worker process then starts without bundling workflows/.
  const bundle = await workflowBundleFile();
  const child = spawn(CLI[0] as string, [CLI[1] as string, 'worker'], {
    // JSON log lines on stdout, so tests can read them (callers may ask for text).
    env: {
      ...process.env,
      DURABLE_AGENT_LOG_FORMAT: 'json',
      ...(bundle ? { DURABLE_AGENT_WORKFLOW_BUNDLE: bundle } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    for (const p of parts) {
      try {
        lines.push(JSON.parse(p) as Record<string, unknown>);
      } catch {
        lines.push({ msg: p });
      }
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // A worker bundles its workflow code at start: seconds on a quiet machine, far more on a busy one.
  const deadline = Date.now() + 180_000;
  const running = () =>
    lines.some((l) => l.msg === 'Worker state changed' && l.state === 'RUNNING') ||
    / INFO {2}Worker state changed state=RUNNING$/m.test(stderr.join(''));
  while (!running()) {
    if (child.exitCode !== null) throw new Error(`worker exited: ${stderr.join('')}`);
    if (Date.now() > deadline) {
      // Do not leave a half-started worker polling behind the caller's back.
      child.kill('SIGKILL');
      throw new Error(`worker did not start: ${stderr.join('')}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, lines, stderr, exited };
}

/** Waits until the worker has logged a line matching `pred`; fails naming what it waited for. */
export async function waitForLogLine(
  worker: WorkerProcess,
  pred: (line: Record<string, unknown>) => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!worker.lines.some(pred)) {
    if (Date.now() > deadline) throw new Error(`${what} never happened: ${worker.stderr.join('')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Resolves with the exit code once the process has exited and its piped output has been read to
 * its end: Node emits 'exit' before the pipes are drained, so output read at 'exit' can miss its
 * last chunks. A process that left a child holding its pipes (a server started in the background)
 * ends no stream; then its output is what arrived within a moment of the exit.
 */
function exitedWithOutput(child: ChildProcess): Promise<number | null> {
  const ended = (stream: NodeJS.ReadableStream | null) =>
    stream ? new Promise<void>((resolve) => stream.once('end', () => resolve())) : Promise.resolve();
  const streams = Promise.all([ended(child.stdout), ended(child.stderr)]);
  return new Promise((resolve) => {
    child.once('exit', (code) => {
      const grace = setTimeout(() => resolve(code), 2000);
      void streams.then(() => {
        clearTimeout(grace);
        resolve(code);
      });
    });
  });
}

/** Runs the CLI to completion and returns its exit code and output. */
export function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(CLI[0] as string, [CLI[1] as string, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    void exitedWithOutput(child).then((code) => resolve({ code, stdout, stderr }));
  });
}

/** A CLI process whose output can be awaited line by line. */
export interface LiveCli {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  waitFor(stream: 'stdout' | 'stderr', needle: string, timeoutMs?: number): Promise<void>;
}

/** Starts the CLI and returns at once, so a test can follow its output and signal it. */
export function startCli(env: Record<string, string>, args: string[]): LiveCli {
  const child = spawn(CLI[0] as string, [CLI[1] as string, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = exitedWithOutput(child);
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    async waitFor(stream, needle, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (!(stream === 'stdout' ? out : err).includes(needle)) {
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`"${needle}" never appeared on ${stream}:\n${out}\n${err}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}
