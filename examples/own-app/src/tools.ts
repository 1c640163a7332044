/** A tool of the app's own: the agent calls it like a built-in one. */
import { defineTool } from 'durable-agent';
import { z } from 'zod';

/** The app's orders (a real app would call its database or REST API here). */
const ORDERS: Record<string, { status: string; total: number }> = {
  'A-17': { status: 'damaged in transit', total: 42 },
  'A-18': { status: 'delivered', total: 15 },
};

export const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Looks up an order of the shop by its id and returns its status and total.',
  input: z.object({
    orderId: z
      .string()
      .regex(/^A-\d+$/)
      .describe('The order id, e.g. A-17'),
  }),
  run: async ({ orderId }, ctx) => {
    ctx.log.info('looking up an order', { orderId, idempotencyKey: ctx.idempotencyKey });
    const order = ORDERS[orderId];
    return order ? { orderId, ...order } : `No order ${orderId}`;
  },
});
