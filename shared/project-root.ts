import fs from 'node:fs';
import path from 'node:path';

/**
 * The project root (where package.json is), whether running from source, from dist/, from a bundle
 * under .data/, or installed as a package (its folder under node_modules). Workflow code never
 * imports this file (it reads the file system).
 */
export const PROJECT_ROOT = findRoot(__dirname);

/**
 * Where the project keeps what it writes by default (`.data/`: content, streams, the dev server's
 * database; `models/`): the checkout when running from one, the current folder when installed as a
 * package (a package's own folder is no place to write, and may be read-only).
 */
export const DATA_ROOT = PROJECT_ROOT.split(path.sep).includes('node_modules') ? process.cwd() : PROJECT_ROOT;

function isOurPackage(dir: string): boolean {
  try {
    return (
      (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name ===
      'durable-agent'
    );
  } catch {
    return false;
  }
}

function findRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (
      fs.existsSync(path.join(dir, 'package.json')) &&
      (fs.existsSync(path.join(dir, 'workflows')) || isOurPackage(dir))
    )
      return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(start, '..');
    dir = parent;
  }
}
