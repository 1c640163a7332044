/**
 * The model providers `eval` asks, as a worker builds them from its configuration (keys, the local
 * model's file and threads, the scripts folder), and freeing the local model when it is done.
 */
import { createProviderSelector } from '../../activities/model';
import type { ModelProvider } from '../../activities/model/provider';
import { disposeLocalModels } from '../../activities/model/local/runtime';
import type { ActivitiesConfig } from '../../activities/config';
import type { ModelChoice } from '../../shared/model';

/** The provider of each model choice, from the worker's configuration. */
export function evalProviders(
  config: Pick<ActivitiesConfig, 'scriptsDir' | 'models'>,
): (name: ModelChoice['provider']) => ModelProvider {
  return createProviderSelector({ config });
}

/** Frees the local model, if a step loaded it (its native threads would keep the process alive). */
export function closeEvalModels(): Promise<void> {
  return disposeLocalModels();
}
