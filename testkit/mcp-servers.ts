/**
 * MCP servers from npm installed as their users install them: each set in a folder of its own,
 * not in this repository's node_modules, so npm resolves their dependencies for them alone. That
 * matters: beside `server-postgres` 0.6.2, npm resolves zod 3 for `server-sequential-thinking`,
 * whose SDK then writes its tool schema with zod-to-json-schema (and `$ref`s); inside this
 * repository zod 4 is hoisted and the same server writes none.
 *
 * Each set is pinned by the package.json and package-lock.json under testkit/mcp-servers/<set>/
 * (versions and integrity hashes), and installed with `npm ci` from the npm registry (or npm's
 * cache) into .data/mcp-servers/<set>/ the first time a test needs it, once for every jest worker.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../shared/project-root';

const MANIFESTS = path.join(PROJECT_ROOT, 'testkit', 'mcp-servers');
const INSTALLS = path.join(PROJECT_ROOT, '.data', 'mcp-servers');
/** How long a jest worker waits for another one's install of the same set. */
const INSTALL_WAIT_MS = 180_000;

/** The installed sets, by folder under testkit/mcp-servers/. */
export type McpServerSet = 'reference' | 'eslint' | 'code-runner';

/** A server of an installed set: its package, version and entry script. */
export interface InstalledMcpServer {
  name: string;
  version: string;
  /** The script to run with `node`. */
  entry: string;
}

function digest(dir: string): string {
  const h = createHash('sha256');
  for (const f of ['package.json', 'package-lock.json']) h.update(fs.readFileSync(path.join(dir, f)));
  return h.digest('hex').slice(0, 16);
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Installs `set` (when its pinned manifests changed or it is not there) and returns the folder.
 * Jest workers take turns through a lock folder; an install that fails says what npm said.
 */
export function installMcpServers(set: McpServerSet): string {
  const source = path.join(MANIFESTS, set);
  const target = path.join(INSTALLS, set);
  const want = digest(source);
  const stamp = path.join(target, '.installed');
  const ready = () => fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === want;
  if (ready()) return target;
  fs.mkdirSync(INSTALLS, { recursive: true });
  const lock = `${target}.lock`;
  const deadline = Date.now() + INSTALL_WAIT_MS;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      if (ready()) return target;
      // A lock older than the wait is left by a killed run.
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > INSTALL_WAIT_MS) fs.rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline)
        throw new Error(`another test has been installing ${set} for too long (${lock})`);
      sleep(200);
    }
  }
  try {
    if (ready()) return target;
    fs.rmSync(target, { recursive: true, force: true });
    fs.mkdirSync(target, { recursive: true });
    for (const f of ['package.json', 'package-lock.json'])
      fs.copyFileSync(path.join(source, f), path.join(target, f));
    const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], {
      cwd: target,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: INSTALL_WAIT_MS,
    });
    if (r.status !== 0)
      throw new Error(
        `npm ci of the MCP servers "${set}" failed (${r.status ?? r.signal}): ${r.stderr.trim().slice(-2000)}`,
      );
    fs.writeFileSync(stamp, want);
    return target;
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** A server of `set`, installed: its version as npm resolved it, and the script its `bin` names. */
export function mcpServerOf(set: McpServerSet, pkg: string): InstalledMcpServer {
  const root = path.join(installMcpServers(set), 'node_modules', pkg);
  const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    version: string;
    bin?: string | Record<string, string>;
  };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {})[0];
  if (!bin) throw new Error(`${pkg} names no bin script`);
  return { name: pkg, version: manifest.version, entry: path.join(root, bin) };
}

/** The version of a package as npm resolved it inside an installed set (zod, the SDK). */
export function resolvedVersion(set: McpServerSet, pkg: string, from?: string): string {
  const base = path.join(installMcpServers(set), 'node_modules');
  const candidates = [...(from ? [path.join(base, from, 'node_modules', pkg)] : []), path.join(base, pkg)];
  for (const dir of candidates) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file))
      return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
  }
  throw new Error(`${pkg} is not installed in ${set}`);
}
