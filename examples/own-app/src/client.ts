/** The app's client: starts its workflow and reads the user's inbox with the agent client. */
import { Client, Connection } from '@temporalio/client';
import { AgentClient } from 'durable-agent/client';
import { TASK_QUEUE } from './worker';

/** Runs `checkOrder` for an order and returns its verdict and what the user's inbox says. */
export async function checkOrderAndReadInbox(address: string, orderId: string, user: string) {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection });
    const verdict = await client.workflow.execute('checkOrder', {
      taskQueue: TASK_QUEUE,
      workflowId: `check-${orderId}-${Date.now()}`,
      args: [{ orderId, user }],
    });
    const agents = new AgentClient({ client, taskQueue: TASK_QUEUE });
    const inbox = await agents.notifications(`inbox:${user}`);
    return { verdict, inbox: inbox.notifications.map((n) => `${n.title}: ${n.message}`) };
  } finally {
    await connection.close();
  }
}
