import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../shared/project-root';
import { freePort } from './processes';
import { tempDir } from './temporal';

/** One series of an instant query's answer: its labels and its value. */
export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** A Prometheus server of one test file, scraping its targets every second. */
export interface PrometheusServer {
  url: string;
  /** Evaluates a PromQL expression now (`/api/v1/query`); a vector's samples. */
  query(expr: string): Promise<Sample[]>;
  /** Polls `expr` until `accept` takes its samples (scrapes come every second); fails naming it. */
  until(expr: string, accept: (samples: Sample[]) => boolean, timeoutMs?: number): Promise<Sample[]>;
  stop(): Promise<void>;
}

/** Debian's prometheus binary, installed by scripts/prometheus.sh when missing. */
export function prometheusBinary(): string {
  const r = spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts', 'prometheus.sh')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`scripts/prometheus.sh failed: ${r.stderr.trim()}`);
  return r.stdout.trim();
}

/**
 * Starts a real Prometheus on 127.0.0.1 (own free port, own temporary storage) with a generated
 * config that scrapes `targets` (`host:port`, path /metrics) every second, and waits until it is ready.
 */
export async function startPrometheus(targets: string[]): Promise<PrometheusServer> {
  const binary = prometheusBinary();
  const dir = tempDir('prometheus');
  const port = await freePort();
  const config = path.join(dir, 'prometheus.yml');
  fs.writeFileSync(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      '  evaluation_interval: 1s',
      'scrape_configs:',
      '  - job_name: durable-agent-worker',
      '    static_configs:',
      `      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]`,
      '',
    ].join('\n'),
  );
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}: ${stderr}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus did not get ready: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }

  const query = async (expr: string): Promise<Sample[]> => {
    const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.json()) as {
      status: string;
      error?: string;
      data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
    };
    if (body.status !== 'success' || body.data?.resultType !== 'vector') {
      throw new Error(`query ${expr} failed: ${body.error ?? JSON.stringify(body)}`);
    }
    return body.data.result.map((r) => ({ labels: r.metric, value: Number(r.value[1]) }));
  };

  return {
    url,
    query,
    async until(expr, accept, timeoutMs = 30_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const samples = await query(expr);
        if (accept(samples)) return samples;
        if (Date.now() > end)
          throw new Error(`${expr} never matched; last answer ${JSON.stringify(samples)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    },
    stop,
  };
}
