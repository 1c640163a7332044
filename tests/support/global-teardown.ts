import fs from 'node:fs';
import { RUN_DIR_ENV } from '../../testkit/test-run';
import { OWN_RUN_DIR_ENV } from './global-setup';

/**
 * Removes this jest run's own run folder (the workflow bundle); `npm test`'s folder outlives its
 * jest commands and is removed by scripts/test.ts. Servers started by the setup keep running.
 */
export default function globalTeardown(): void {
  const dir = process.env[RUN_DIR_ENV];
  if (dir && process.env[OWN_RUN_DIR_ENV]) fs.rmSync(dir, { recursive: true, force: true });
}
