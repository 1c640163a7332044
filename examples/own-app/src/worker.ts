/** The app's worker: its own workflows and the agent's, the built-in tools and the app's own. */
import { NativeConnection, Worker } from '@temporalio/worker';
import { DurableAgentPlugin } from 'durable-agent';
import { lookupOrder } from './tools';

export const TASK_QUEUE = 'own-app';

/** Creates the worker (the caller runs and shuts it down). */
export async function createWorker(address: string): Promise<Worker> {
  const connection = await NativeConnection.connect({ address });
  return Worker.create({
    connection,
    taskQueue: TASK_QUEUE,
    workflowsPath: require.resolve('./workflows'),
    plugins: [new DurableAgentPlugin({ tools: [lookupOrder] })],
  });
}
