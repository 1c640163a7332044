/** The app's own workflows: one of them runs an agent as a step and acts on its typed answer. */
import { notifyInbox, runAgent } from 'durable-agent/workflow';
import type { AgentInput } from 'durable-agent/workflow';
import { z } from 'zod';

const Verdict = z.object({ orderId: z.string(), refund: z.boolean(), reason: z.string() });

/** Input of {@link checkOrder}. */
export interface CheckOrderInput {
  orderId: string;
  user: string;
  /** The model; the scripted one below when absent (offline, no key). */
  model?: AgentInput['model'];
}

/** Asks an agent whether an order deserves a refund, then tells the user in their inbox. */
export async function checkOrder(input: CheckOrderInput): Promise<z.infer<typeof Verdict>> {
  const result = await runAgent({
    task: `Should order ${input.orderId} be refunded? Look it up first.`,
    tools: ['lookup_order'],
    output: Verdict,
    model: input.model ?? {
      provider: 'scripted',
      turns: [
        { toolCalls: [{ name: 'lookup_order', arguments: { orderId: input.orderId } }] },
        { content: `{"orderId": "${input.orderId}", "refund": true, "reason": "damaged in transit"}` },
      ],
    },
  });
  if (!result.output) throw new Error(`The agent stopped without an answer: ${result.stopReason}`);
  const verdict = result.output;
  await notifyInbox(input.user, {
    type: verdict.refund ? 'warning' : 'info',
    title: `Order ${verdict.orderId}`,
    message: verdict.refund ? `Refund it: ${verdict.reason}` : `No refund: ${verdict.reason}`,
  });
  return verdict;
}
