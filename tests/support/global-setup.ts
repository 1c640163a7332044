import { temporalBinary } from '../../cli/binaries';

/** Fails the whole run at once, with the fix, when the Temporal binaries are not installed. */
export default function globalSetup(): void {
  temporalBinary('temporal');
  temporalBinary('temporal-test-server');
}
