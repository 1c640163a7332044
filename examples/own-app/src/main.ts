/** Runs the whole app once: a worker, one order checked by an agent, the inbox read back. */
import { checkOrderAndReadInbox } from './client';
import { createWorker } from './worker';

async function main(): Promise<void> {
  const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  const worker = await createWorker(address);
  const result = await worker.runUntil(checkOrderAndReadInbox(address, 'A-17', 'shop-owner'));
  console.log(JSON.stringify(result));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
