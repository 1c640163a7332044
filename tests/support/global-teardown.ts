import fs from 'node:fs';
import path from 'node:path';
import { SHARED_BUNDLE_ENV } from '../../testkit/shared-bundle';

/** Removes the run's shared files (the workflow bundle). Servers started by the setup keep running. */
export default function globalTeardown(): void {
  const file = process.env[SHARED_BUNDLE_ENV];
  if (file) fs.rmSync(path.dirname(file), { recursive: true, force: true });
}
