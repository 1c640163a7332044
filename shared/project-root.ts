import fs from 'node:fs';
import path from 'node:path';

/**
 * The project root (where package.json is), whether running from source, from dist/ or from a
 * bundle under .data/. Workflow code never imports this file (it reads the file system).
 */
export const PROJECT_ROOT = findRoot(__dirname);

function findRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'workflows')))
      return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(start, '..');
    dir = parent;
  }
}
