import { z } from 'zod';
import { schemaOnce } from './schema-once';
import type { Usage } from './conversation';

/**
 * Run budgets: steps, tokens, cost and wall-clock time, each warned about once at
 * {@link RUN_LIMIT_WARNING_FRACTION} and stopping the run at 100 %. Pure code: it runs inside workflows.
 */

/** Price of one model in US dollars per million tokens. */
export const ModelPriceSchema = schemaOnce('shared/run-limits#ModelPriceSchema', () =>
  z
    .object({
      inputPerMillion: z.number().nonnegative().describe('USD per million input tokens'),
      outputPerMillion: z.number().nonnegative().describe('USD per million output tokens'),
    })
    .strict(),
);
/** Price of one model. */
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

/** Prices keyed by "provider:model" (e.g. "openai:gpt-4o-mini") or by provider alone ("scripted", "local"). */
export const PriceTableSchema = schemaOnce('shared/run-limits#PriceTableSchema', () =>
  z.record(z.string(), ModelPriceSchema).superRefine((table, ctx) => {
    for (const key of Object.keys(table)) {
      if (!/^(scripted|local|openai|anthropic)(:\S{1,200})?$/.test(key)) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `key prices by "provider:model" (e.g. "openai:gpt-4o-mini") or provider ("scripted", "local"), not "${key.slice(0, 80)}"`,
        });
      }
    }
  }),
);
/** A price table. */
export type PriceTable = z.infer<typeof PriceTableSchema>;

/** Share of a budget at which the user is warned (once per budget). */
export const RUN_LIMIT_WARNING_FRACTION = 0.8;

/** The budgets a run can have; each is also the stop reason when it ends the run. */
export type RunLimitName =
  'max_steps' | 'max_tokens' | 'max_input_tokens' | 'max_output_tokens' | 'max_cost' | 'max_wall_clock';

/** How each budget is named to the user. */
export const RUN_LIMIT_LABELS: Readonly<Record<RunLimitName, string>> = Object.freeze({
  max_steps: 'steps',
  max_tokens: 'tokens (input + output)',
  max_input_tokens: 'input tokens',
  max_output_tokens: 'output tokens',
  max_cost: 'cost (USD)',
  max_wall_clock: 'wall-clock time',
});

/** The price of a model from the run's table, else the worker's: "provider:model" first, then provider. */
export function priceFor(
  key: { provider: string; model?: string },
  ...tables: (PriceTable | undefined)[]
): ModelPrice | undefined {
  const keys = key.model ? [`${key.provider}:${key.model}`, key.provider] : [key.provider];
  for (const table of tables) {
    for (const k of keys) {
      const price = table?.[k];
      if (price) return price;
    }
  }
  return undefined;
}

/** Cost of a model call's usage in US dollars. */
export function costOf(usage: Usage, price: ModelPrice): number {
  return (
    (usage.inputTokens * price.inputPerMillion + usage.outputTokens * price.outputPerMillion) / 1_000_000
  );
}

/** What a budget check sees: how much of each budget is used and the limit, for budgets that are set. */
export type RunLimitUse = Partial<Record<RunLimitName, { used: number; max: number }>>;

/** The first budget used up (at or past 100 %), or null. */
export function exhaustedRunLimit(use: RunLimitUse): RunLimitName | null {
  for (const [name, b] of Object.entries(use) as [RunLimitName, { used: number; max: number }][]) {
    if (b.used >= b.max) return name;
  }
  return null;
}

/** Budgets at or past the warning share that were not warned about yet. */
export function runLimitsToWarn(use: RunLimitUse, warned: readonly string[]): RunLimitName[] {
  return (Object.entries(use) as [RunLimitName, { used: number; max: number }][])
    .filter(([name, b]) => !warned.includes(name) && b.used >= b.max * RUN_LIMIT_WARNING_FRACTION)
    .map(([name]) => name);
}

/**
 * A whole number with its thousands grouped as en-US writes them ("8,200"), without Intl: its first
 * use loads ICU's data, some 30 ms of a `durable-agent status`.
 */
function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** A budget's use in words, e.g. "8,200 of 10,000 tokens (input + output) (82 %)". */
export function describeRunLimit(name: RunLimitName, b: { used: number; max: number }): string {
  const fmt = (n: number): string =>
    name === 'max_cost' ? `$${n.toFixed(4)}` : grouped(Math.floor(name === 'max_wall_clock' ? n / 1000 : n));
  const unit = name === 'max_wall_clock' ? ' s' : '';
  const pct = b.max > 0 ? Math.floor((b.used / b.max) * 100) : 100;
  return `${fmt(b.used)} of ${fmt(b.max)}${unit} ${RUN_LIMIT_LABELS[name]} (${pct} %)`;
}
