import { z } from 'zod';
import { schemaOnce } from '../schema-once';
import { defineTool } from './define';

/** Arguments of `wait`. */
export const WaitArgs = schemaOnce('shared/tools/wait#WaitArgs', () =>
  z.object({
    seconds: z
      .number()
      .min(0)
      .max(3600)
      .describe('How long to wait, in seconds (0–3600) / 等待的秒数（0–3600）'),
  }),
);

/** `wait`: pauses for a while, e.g. before polling something again. Heartbeats and can be cancelled. */
export const waitTool = defineTool({
  name: 'wait',
  description: 'Waits the given number of seconds before returning, e.g. before checking something again.',
  description_zh: '等待指定的秒数后返回，例如在再次检查某事之前等待。',
  category: 'utility',
  sign: 'w',
  inputs: WaitArgs,
  output: 'how long it waited',
  activity: {
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: '5 seconds',
    heartbeatsOnClock: true,
    maximumAttempts: 5,
  },
});
