/**
 * The model providers `eval` asks, as a worker builds them from its configuration (keys, the local
 * model's file and threads, the scripts folder), and freeing the local model when it is done. The
 * local model's prompt is its scaffold's tool cards (prompts/local-model.ts), not the run's system
 * prompt, so `eval --local-cards` tries other cards: the way to see what a card's wording changes
 * over recorded runs before it ships.
 */
import { z } from 'zod';
import { LOCAL_SETUP_COMMAND, createProviderSelector } from '../../activities/model';
import { createLocalProvider } from '../../activities/model/local/provider';
import type { ModelProvider } from '../../activities/model/provider';
import { disposeLocalModels } from '../../activities/model/local/runtime';
import type { ActivitiesConfig } from '../../activities/config';
import type { LocalToolCard } from '../../prompts/local-model';
import { LOCAL_TOOL_CARDS } from '../../prompts/local-model';
import type { ModelChoice } from '../../shared/model';
import { formatZodIssues } from '../../shared/zod-issues';

/** Characters of one card's texts: a card is a line or two of a small model's prompt. */
const CARD_TEXT_CHARS = 600;
/** Tools one cards file may describe. */
const MAX_CARDS = 100;

const text = z.string().min(1).max(CARD_TEXT_CHARS);
const LocalToolCardSchema = z
  .object({
    summary: text,
    args: z.record(z.string(), text),
    example: z.object({
      task: z.string().max(CARD_TEXT_CHARS),
      arguments: z.record(z.string(), z.unknown()),
    }),
    after: text.optional(),
    refused: text.optional(),
  })
  .strict();

/**
 * The cards of a `--local-cards` file (`{ "<tool>": { "summary", "args", "example", "after"?,
 * "refused"? } }`) over the project's own: a tool the file names gets the file's card, every other
 * tool keeps its own. Throws an error naming the file, the tool and the field to fix.
 */
export function parseLocalCards(textOfFile: string, file: string): Readonly<Record<string, LocalToolCard>> {
  let value: unknown;
  try {
    value = JSON.parse(textOfFile);
  } catch (err) {
    throw new Error(`${file} is not JSON: ${(err as Error).message}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(
      `${file} must hold an object of tool cards: { "calculator": { "summary": "…", "args": { "expression": "…" }, "example": { "task": "…", "arguments": { … } } } }`,
    );
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_CARDS)
    throw new Error(`${file} holds ${entries.length} cards; at most ${MAX_CARDS}`);
  const cards: Record<string, LocalToolCard> = { ...LOCAL_TOOL_CARDS };
  for (const [tool, card] of entries) {
    const parsed = LocalToolCardSchema.safeParse(card);
    if (!parsed.success) throw new Error(`${file}, card "${tool}": ${formatZodIssues(parsed.error)}`);
    cards[tool] = parsed.data;
  }
  return Object.freeze(cards);
}

/** The provider of each model choice, from the worker's configuration (and, for the local model, other cards). */
export function evalProviders(
  config: Pick<ActivitiesConfig, 'scriptsDir' | 'models'>,
  options: { localCards?: Readonly<Record<string, LocalToolCard>> } = {},
): (name: ModelChoice['provider']) => ModelProvider {
  const { localCards } = options;
  const providers = localCards
    ? {
        local: createLocalProvider({
          ...config.models.local,
          setupCommand: LOCAL_SETUP_COMMAND,
          cards: localCards,
        }) as ModelProvider,
      }
    : {};
  return createProviderSelector({ config, providers });
}

/** Frees the local model, if a step loaded it (its native threads would keep the process alive). */
export function closeEvalModels(): Promise<void> {
  return disposeLocalModels();
}
