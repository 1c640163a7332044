/**
 * The content GC workflow's input schema (zod), apart from shared/content-gc.ts, which the CLI
 * imports at start-up.
 */
import { z } from 'zod';
import type { ContentGcInput } from './content-gc';

/** {@link ContentGcInput} as the workflow and the activity check it. */
export const ContentGcInputSchema: z.ZodType<ContentGcInput> = z
  .object({
    dryRun: z.boolean().optional(),
    graceMs: z.number().int().min(0).optional(),
    includeLegacy: z.boolean().optional(),
  })
  .strict();
