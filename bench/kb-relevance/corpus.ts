/**
 * Builds the relevance bench's corpus reproducibly: READMEs of packages pinned by package-lock.json
 * (read from node_modules, after checking the installed version is the locked one) and of packages
 * fetched with `npm pack` at pinned versions (checked against their registry integrity, cached).
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** corpus.json. */
export interface CorpusManifest {
  lockfile: { packages: string[]; extraFiles: Record<string, string[]> };
  registry: { name: string; version: string; integrity: string; files: string[] }[];
}

/** What {@link buildCorpus} made. */
export interface Corpus {
  root: string;
  /** Documents written, as `<package>/<file>`. */
  documents: string[];
}

const README = /^readme(\.md|\.markdown)?$/i;

function copyPackageFiles(fromDir: string, name: string, files: string[], root: string, out: string[]): void {
  const dest = path.join(root, name);
  fs.mkdirSync(dest, { recursive: true });
  // package.json gives a README without a heading its package's name as title, as in node_modules.
  fs.copyFileSync(path.join(fromDir, 'package.json'), path.join(dest, 'package.json'));
  for (const f of files) {
    fs.copyFileSync(path.join(fromDir, f), path.join(dest, f));
    out.push(`${name}/${f}`);
  }
}

/** Writes the corpus under `root` (created) and returns its document list. */
export function buildCorpus(
  projectRoot: string,
  manifest: CorpusManifest,
  root: string,
  cacheDir: string,
): Corpus {
  const lock = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string }>;
  };
  const documents: string[] = [];
  const fromLockfile = [
    ...manifest.lockfile.packages.map((name) => [name, undefined] as const),
    ...Object.entries(manifest.lockfile.extraFiles),
  ];
  for (const [name, files] of fromLockfile) {
    const dir = path.join(projectRoot, 'node_modules', name);
    const locked = lock.packages[`node_modules/${name}`]?.version;
    if (!locked)
      throw new Error(`${name} is not in package-lock.json; the corpus lists only locked packages.`);
    const installed = (
      JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }
    ).version;
    if (installed !== locked) {
      throw new Error(`node_modules/${name} is ${installed}, the lockfile says ${locked}: run npm ci first.`);
    }
    const chosen = files ?? [fs.readdirSync(dir).find((f) => README.test(f))].filter((f): f is string => !!f);
    if (chosen.length === 0) throw new Error(`node_modules/${name} has no README.`);
    copyPackageFiles(dir, name, chosen, root, documents);
  }
  fs.mkdirSync(cacheDir, { recursive: true });
  for (const pkg of manifest.registry) {
    const tarball = path.join(cacheDir, `${pkg.name.replace('/', '-')}-${pkg.version}.tgz`);
    if (!fs.existsSync(tarball)) {
      execFileSync(
        'npm',
        ['pack', `${pkg.name}@${pkg.version}`, '--pack-destination', cacheDir, '--silent'],
        {
          stdio: ['ignore', 'ignore', 'inherit'],
        },
      );
    }
    const integrity = `sha512-${createHash('sha512').update(fs.readFileSync(tarball)).digest('base64')}`;
    if (integrity !== pkg.integrity) {
      throw new Error(`${tarball} has integrity ${integrity}, corpus.json pins ${pkg.integrity}.`);
    }
    const unpacked = path.join(cacheDir, `${pkg.name}-${pkg.version}`);
    if (!fs.existsSync(path.join(unpacked, 'package', 'package.json'))) {
      fs.mkdirSync(unpacked, { recursive: true });
      execFileSync('tar', ['xzf', tarball, '-C', unpacked]);
    }
    copyPackageFiles(path.join(unpacked, 'package'), pkg.name, pkg.files, root, documents);
  }
  return { root, documents };
}
